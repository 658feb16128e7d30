"""Helpers of the end-to-end tests: Snakemake run on this repository's workflow, the tiny
config (tests/e2e/tiny.yaml) filled in for a test's folder, and its small gold alignment set.
Shared here rather than imported from a test module (issue 47)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def snakemake(repo: Path, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("snakemake")
    env = {**os.environ, "PATH": f"{exe.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [str(exe), "-s", str(repo / "Snakefile"), "--directory", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def write_gold(shared_data: Path, folder: Path, n: int = 10) -> None:
    """A small gold alignment set in awesome-align form: the first ``n`` Multi30k test pairs with
    monotone sure links (and a possible link per sentence), to drive the AER rules."""
    import gzip

    folder.mkdir(parents=True, exist_ok=True)
    base = shared_data / "multi30k_task1_en-de-cs"
    with (
        gzip.open(base / "test_2016_flickr.en.gz", "rt", encoding="utf-8") as f_en,
        gzip.open(base / "test_2016_flickr.de.gz", "rt", encoding="utf-8") as f_de,
    ):
        pairs = [(e.split(), d.split()) for _, e, d in zip(range(n), f_en, f_de)]
    (folder / "gold.src-tgt").write_text(
        "".join(f"{' '.join(e)} ||| {' '.join(d)}\n" for e, d in pairs), encoding="utf-8"
    )
    links = [
        " ".join([f"{i}-{i}" for i in range(1, min(len(e), len(d)) + 1)] + [f"1p{len(d)}"])
        for e, d in pairs
    ]
    (folder / "gold.links").write_text("".join(line + "\n" for line in links), encoding="utf-8")
    # a second reference of the flickr2016 test set (its 30 lines): the first, lowercased
    with gzip.open(base / "test_2016_flickr.de.gz", "rt", encoding="utf-8") as f_de:
        (folder / "flickr2016.ref2.de").write_text(
            "".join(line.lower() for _, line in zip(range(30), f_de)), encoding="utf-8"
        )
    # a README whose generated section the run fills (evaluation.readme)
    (folder / "README.md").write_text(
        (
            "# Results\n\n<!-- wordorder:tiny:begin -->\nold numbers\n<!-- "
            "wordorder:tiny:end -->\n\nKept.\n"
        ),
        encoding="utf-8",
    )


def tiny_config(repo: Path, shared_data: Path, tmp_path: Path, **overrides) -> Path:
    write_gold(shared_data, tmp_path / "gold")
    text = (
        (repo / "tests" / "e2e" / "tiny.yaml")
        .read_text(encoding="utf-8")
        .replace("{DATA}", str(shared_data))
    )
    text = text.replace("{GOLD}", str(tmp_path / "gold"))
    text += f"results: {tmp_path / 'results'}\nlogs: {tmp_path / 'logs'}\n"
    for key, value in overrides.items():
        text += f"{key}: {value}\n"
    path = tmp_path / "tiny.yaml"
    path.write_text(text, encoding="utf-8")
    return path
