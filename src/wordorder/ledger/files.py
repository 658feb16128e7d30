"""The ledger's file primitives: digests, canonical JSON, gzip written the same way every time,
and writes that are either whole or absent."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.io import atomic_open, sha256_of

CHUNK = 1 << 20


def sha256_file(path: str | Path) -> str:
    """The hex sha256 of a file's bytes; a missing file is one error naming it."""
    try:
        return sha256_of(path)
    except FileNotFoundError:
        raise WordorderError("the file is missing", path=path) from None


def canonical_json(data: Any) -> str:
    """Sorted keys, no spaces: the same text for equal data, whatever the dicts' order."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest_json(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()


def gzip_copy(source: str | Path, target: Path) -> None:
    """``source`` gzipped into ``target`` with no name or time in the header, so one content
    always gives the same bytes (and git stores a re-added run as unchanged)."""
    with open(source, "rb") as f_in, atomic_open(target, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f_out:
            shutil.copyfileobj(f_in, f_out)


def gunzip_to(source: Path, target: str | Path) -> None:
    with gzip.open(source, "rb") as f_in, atomic_open(target, "wb") as f_out:
        shutil.copyfileobj(f_in, f_out)


def read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WordorderError("the file is missing", path=path) from None
    except json.JSONDecodeError as e:
        raise WordorderError(
            f"not valid JSON ({e.msg})",
            path=path,
            line=e.lineno,
            hint="a ledger file was edited or cut: restore it with `git checkout -- <file>`",
        ) from None
    if not isinstance(value, dict):
        raise WordorderError("expected a JSON object", path=path)
    return value


def write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Indented, sorted JSON (readable diffs in the repository), written whole or not at all."""
    with atomic_open(path, "w") as f:
        f.write(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def publish_folder(staging: Path, target: Path) -> None:
    """Rename a completely written folder into place; an existing target is refused."""
    try:
        os.rename(staging, target)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        raise WordorderError(
            "this run is already in the ledger",
            path=target,
            hint="a ledger run is never replaced: to train it again, `git rm -r` its folder first",
        ) from None
