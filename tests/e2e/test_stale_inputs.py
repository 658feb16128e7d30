"""An edited input file reruns the jobs that read it (issue 37, case 1): a ``kind: local``
corpus, a test set's further reference (``extra_refs``) and the gold alignments are inputs of
their rules, so Snakemake sees them newer than the outputs; the variant registry reaches the
jobs as their params (model options), which Snakemake compares with what the outputs were made
with. A real run of part of the tiny DAG, then dry runs after each edit."""

from __future__ import annotations

import gzip
import os
import re
import shutil
from pathlib import Path

import pytest
from dag import snakemake, tiny_config

pytestmark = pytest.mark.slow


def planned(out: str) -> set[str]:
    """The rules of the jobs a dry run plans (its job table: rule name and count)."""
    table = out.split("Job stats:", 1)[-1].split("\n\n", 1)[0]
    return {m[1] for m in re.finditer(r"^(\w+)\s+\d+$", table, flags=re.M)} - {"total"}


def edit(path: Path, text: bytes) -> tuple[bytes, os.stat_result]:
    """Write ``text`` to ``path`` (a second later than its outputs); returns what was there."""
    before = path.read_bytes(), path.stat()
    path.write_bytes(text)
    later = max(before[1].st_mtime, os.stat(path).st_mtime) + 2
    os.utime(path, (later, later))
    return before


def put_back(path: Path, before: tuple[bytes, os.stat_result]) -> None:
    path.write_bytes(before[0])
    os.utime(path, ns=(before[1].st_atime_ns, before[1].st_mtime_ns))


def test_an_edited_input_file_reruns_its_jobs(repo, shared_data, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for lang in ("en", "de"):
        shutil.copy(shared_data / "multi30k_task1_en-de-cs" / f"train.{lang}.gz", corpus)
    registry = tmp_path / "variants.yaml"
    shutil.copy(repo / "configs" / "variants.yaml", registry)
    config = tiny_config(repo, shared_data, tmp_path, variants_file=str(registry))
    text = config.read_text(encoding="utf-8")
    text = text.replace(f"{shared_data}/multi30k_task1_en-de-cs/train.", f"{corpus}/train.")
    assert f"{corpus}/train." in text
    config.write_text(text.replace("max_steps: 30", "max_steps: 4"), encoding="utf-8")
    out = tmp_path / "results" / "tiny"
    targets = [
        out / "data" / "en-de" / "splits.json",
        out / "data" / "en-de" / "refs" / "flickr2016.1.de",
        out / "data" / "en-de" / "align" / "joint.align",
        out / "models" / "en-de" / "transformer_tiny" / "seed1" / "best.pt",
    ]
    args = [*map(str, targets), "--configfile", str(config)]
    run = snakemake(repo, "--cores", "2", *args)
    assert run.returncode == 0, run.stderr[-4000:]

    def plan() -> set[str]:
        dry = snakemake(repo, "-n", *args, timeout=180)
        assert dry.returncode == 0, dry.stderr[-4000:]
        return planned(dry.stdout + dry.stderr)

    assert plan() == set()  # up to date

    # 100 lines of the local training corpus changed (the first 40 are the dev holdout)
    lines = gzip.decompress((corpus / "train.en.gz").read_bytes()).splitlines(keepends=True)
    lines[100:200] = [b"an edited sentence number %d\n" % i for i in range(100)]
    before = edit(corpus / "train.en.gz", gzip.compress(b"".join(lines)))
    assert {"fetch", "tokenize", "split", "select", "train"} <= plan()
    put_back(corpus / "train.en.gz", before)
    assert plan() == set()

    # the further reference of flickr2016
    ref2 = tmp_path / "gold" / "flickr2016.ref2.de"
    before = edit(ref2, ref2.read_bytes().replace(b"ein", b"Ein"))
    assert plan() == {"reference"}
    put_back(ref2, before)

    # the gold alignments
    links = tmp_path / "gold" / "gold.links"
    before = edit(links, links.read_bytes().replace(b"1-1 ", b"", 1))
    assert plan() == {"align"}
    put_back(links, before)

    # a model option of the variant in the registry (its description is not a job's business)
    text = registry.read_text(encoding="utf-8")
    old = "tiny preset (tests only)\n    model: {family: transformer, preset: tiny}\n"
    assert text.count(old) == 1  # transformer_tiny's entry
    registry.write_text(text.replace(old, old[:-2] + ", dropout: 0.2}\n"), encoding="utf-8")
    assert plan() == {"train"}
    described = text.replace("Transformer baseline, tiny preset", "Transformer, tiny")
    registry.write_text(described, encoding="utf-8")
    assert plan() == set()
