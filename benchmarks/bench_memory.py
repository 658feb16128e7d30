"""Peak memory of the data, subword, alignment and training jobs against corpus size: the
measurements behind ``wordorder.resources.MEMORY`` (what each job asks a cluster for).

For each size N an en-ja corpus of N lines is built from the Tanaka corpus in ../shared/data
(repeated copies start with a copy marker, so no line repeats and the vocabulary stays
realistic), and the real DAG runs on it up to gold preorders, word classes and a 5-step tiny
training. Every `wordorder` command logs its peak RSS (its own or its largest child's, e.g.
eflomal) on its last line; per rule the script fits
peak = base + slope x input MB over the sizes and compares it with the table. Parsing streams
and is model-bound: it is measured on 2,000 lines per language.

    .venv/bin/python benchmarks/bench_memory.py [--sizes 50000 200000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wordorder.resources import DEFAULT, HEADROOM, MEMORY, memory_mb

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "ja-en_small_parallel_enja"

CONFIG = """experiment: mem
pairs: [en-ja]
variants: [transformer_tiny]
data:
  en-ja:
    train: {{kind: local, src: "{dir}/corpus.en", tgt: "{dir}/corpus.ja"}}
    dev: {{holdout: 500}}
    test: {{held: {{holdout: 500}}}}
results: {dir}/results
logs: {dir}/logs
clean: {{max_len: 50}}
subword: {{vocab_size: 8000}}
train: {{batch_tokens: 2000, max_steps: 5, eval_every: 5, eval_sentences: 5, device: cpu}}
threads: {{train: 2, align: 2}}
"""

# rule -> (log file relative to logs/mem/, input files relative to results/mem/)
JOBS = {
    "tokenize": ("tokenize/en-ja.train.en.log", ["data/en-ja/raw/train.en"]),
    "split": ("split/en-ja.log", ["data/en-ja/tok/train.en", "data/en-ja/tok/train.ja"]),
    "select": (
        "select/en-ja.train.ja.log",
        ["data/en-ja/raw/train.ja", "data/en-ja/tok/train.ja", "data/en-ja/splits.json"],
    ),
    "subword_train": (
        "subword_train/en-ja.log",
        ["data/en-ja/train.tok.en", "data/en-ja/train.tok.ja"],
    ),
    "subword_encode": (
        "subword_encode/en-ja.train.ja.log",
        ["data/en-ja/train.tok.ja", "data/en-ja/spm.model"],
    ),
    "align": (
        "align/en-ja.log",
        [f"data/en-ja/{s}.tok.{lang}" for s in ("train", "dev", "held") for lang in ("en", "ja")],
    ),
    "align_split": (
        "align/en-ja.train.log",
        ["data/en-ja/align/joint.align", "data/en-ja/align/stats.json"],
    ),
    "preorder_gold": (
        "preorder_gold/en-ja.train.log",
        ["data/en-ja/train.align", "data/en-ja/train.tok.en"],
    ),
    "word_classes": ("word_classes/en-ja.log", ["data/en-ja/train.tok.en"]),
    "train": (
        "train/en-ja.transformer_tiny.seed1.log",
        [
            "data/en-ja/train.bpe.en",
            "data/en-ja/train.bpe.ja",
            "data/en-ja/dev.bpe.en",
            "data/en-ja/dev.tok.ja",
            "data/en-ja/spm.model",
        ],
    ),
}
PEAK = re.compile(r"finished in [\d.]+ s; peak memory (\d+) MB")
TARGETS = [
    "preorder/en-ja/gold/train.perm",
    "preorder/en-ja/classes.tsv",
    "models/en-ja/transformer_tiny/seed1/best.pt",
]


def corpus(folder: Path, n: int) -> None:
    """n line pairs: the Tanaka training corpus, then copies of it marked by a first token."""
    sides = {}
    for lang in ("en", "ja"):
        with gzip.open(DATA / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
            sides[lang] = f.read().splitlines()
    for lang, lines in sides.items():
        with open(folder / f"corpus.{lang}", "w", encoding="utf-8") as out:
            for i in range(n):
                copy, line = divmod(i, len(lines))
                out.write((f"c{copy} " if copy else "") + lines[line] + "\n")


def peak_mb(log: Path) -> float:
    """The peak memory a `wordorder` command reports on its last log line."""
    match = PEAK.findall(log.read_text(encoding="utf-8"))
    if not match:
        raise SystemExit(f"no peak memory line in {log}")
    return float(match[-1])


def run_size(n: int, root: Path) -> dict[str, tuple[float, float]]:
    folder = root / f"n{n}"
    folder.mkdir(parents=True)
    corpus(folder, n)
    config = folder / "config.yaml"
    config.write_text(CONFIG.format(dir=folder), encoding="utf-8")
    exe = Path(sys.executable).with_name("snakemake")
    env = {**os.environ, "PATH": f"{exe.parent}{os.pathsep}{os.environ['PATH']}"}
    res = folder / "results" / "mem"
    t0 = time.perf_counter()
    run = subprocess.run(
        [
            str(exe),
            "-s",
            str(REPO / "Snakefile"),
            "--directory",
            str(REPO),
            "--cores",
            "2",
            *[str(res / t) for t in TARGETS],
            "--configfile",
            str(config),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    if run.returncode:
        raise SystemExit(f"the DAG failed for n={n}:\n{(run.stdout + run.stderr)[-3000:]}")
    print(f"n={n:,}: DAG in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    out = {}
    for rule, (log, inputs) in JOBS.items():
        size = sum((res / f).stat().st_size for f in inputs) / 2**20
        out[rule] = (size, peak_mb(folder / "logs" / "mem" / log))
    return out


def parse_peaks(root: Path) -> dict[str, float]:
    """Peak RSS of `wordorder parse` on 2,000 lines, per language (spaCy en, GiNZA ja)."""
    exe = Path(sys.executable).with_name("wordorder")
    peaks = {}
    for lang in ("en", "ja"):
        inp = root / f"parse.{lang}"
        with gzip.open(DATA / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
            inp.write_text("".join(line for _, line in zip(range(2000), f)), encoding="utf-8")
        run = subprocess.run(
            [
                "/usr/bin/time",
                "-f",
                "%M",
                str(exe),
                "parse",
                "--lang",
                lang,
                "--input",
                str(inp),
                "--output",
                str(root / f"parse.{lang}.conllu"),
            ],
            capture_output=True,
            text=True,
        )
        if run.returncode:
            raise SystemExit(f"wordorder parse failed:\n{run.stderr[-2000:]}")
        peaks[lang] = int(run.stderr.strip().splitlines()[-1]) / 1024
    return peaks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs=2, default=[50_000, 200_000])
    ap.add_argument(
        "--keep", type=Path, help="work here and keep the runs (default: a temporary folder)"
    )
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="wordorder-mem-"))
    try:
        small, large = (run_size(n, root) for n in args.sizes)
        print(
            f"{'rule':<16} {'in MB':>8} {'peak MB':>8} {'in MB':>8} {'peak MB':>8} {'base':>7} "
            f"{'slope':>6} {'asked':>7} {'peak/asked':>10}"
        )
        print(
            f"{'':<16} {'N=' + format(args.sizes[0], ','):>17} "
            f"{'N=' + format(args.sizes[1], ','):>17}    fit of the two        table, larger N"
        )
        for rule in JOBS:
            (x1, y1), (x2, y2) = small[rule], large[rule]
            slope = (y2 - y1) / (x2 - x1) if x2 > x1 else 0.0
            base = y1 - slope * x1
            asked = memory_mb(*MEMORY.get(rule, DEFAULT), x2)
            print(
                f"{rule:<16} {x1:>8.1f} {y1:>8.0f} {x2:>8.1f} {y2:>8.0f} {base:>7.0f} {slope:>6.2f}"
                f" {asked:>7} {y2 / asked:>10.2f}"
            )
        for lang, peak in parse_peaks(root).items():
            asked = memory_mb(*MEMORY.get("parse_shard", DEFAULT), 0)
            print(
                f"parse ({lang}, 2,000 lines): peak {peak:.0f} MB, asked "
                f"{asked} MB: {peak / asked:.2f}"
            )
        print(
            f"(asked = the table's base + slope x input MB, x {HEADROOM} headroom; "
            "peak/asked must stay < 1)"
        )
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
