"""Many small trainings on one GPU at once (the effects experiment's case): target tokens per
second of N concurrent training processes, eager against ``train.cuda_graphs``.

Each process trains the ``--preset`` model (default ``mini``, the effects experiment's size) in
bf16 on random pairs of 5-15 tokens a side (Tanaka's lengths) with ``--batch-tokens`` batches,
through ``bench_train.throughput`` of the code under ``--code`` (another checkout's ``src`` and
``benchmarks``, for a before/after: code without ``mode`` runs eagerly). The N processes start
together (a barrier of files in a temporary folder once each has its CUDA context), warm up
(graphs: two passes over the batches) and time ``--steps`` updates; reported: target tokens/s
per process (mean) and in all, and the speed-up of N processes over one.

    python3 benchmarks/bench_concurrent.py --n 1,4,8,16 --modes eager,graphs [--code DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

WORKER = r"""
import inspect, json, os, random, sys, time
from pathlib import Path
import torch
import bench_train

preset, mode, tokens, steps, barrier, n = sys.argv[1:7]
rng = random.Random(os.getpid())
V = bench_train.VOCAB
pairs = [([rng.randrange(4, V) for _ in range(rng.randint(5, 15))],
          [rng.randrange(4, V) for _ in range(rng.randint(5, 15))]) for _ in range(3000)]
kwargs = {"mode": mode} if "mode" in inspect.signature(bench_train.throughput).parameters else {}
torch.zeros(1, device="cuda")  # the CUDA context, before the barrier
Path(barrier, str(os.getpid())).touch()
while len(os.listdir(barrier)) < int(n):
    time.sleep(0.01)
r = bench_train.throughput(preset, "cuda", True, pairs, int(tokens), int(steps), **kwargs)
# the older throughput returns (tokens/s, FLOP/s)
print(json.dumps({"tokens_per_s": r["tokens_per_s"] if isinstance(r, dict) else r[0]}))
"""


def run(n: int, mode: str, args) -> list[dict]:
    code = Path(args.code).resolve() if args.code else HERE.parent
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(code / "src"), str(code / "benchmarks"), os.environ.get("PYTHONPATH", "")]
        ),
        "OMP_NUM_THREADS": "1",
    }
    with tempfile.TemporaryDirectory() as barrier:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER, args.preset, mode, str(args.batch_tokens)]
                + [str(args.steps), barrier, str(n)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(n)
        ]
        out = []
        for p in procs:
            stdout, stderr = p.communicate()
            if p.returncode:
                raise RuntimeError(f"a worker failed: {stderr[-800:]}")
            out.append(json.loads(stdout.strip().splitlines()[-1]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", default="1,4,8,16")
    ap.add_argument("--modes", default="eager,graphs")
    ap.add_argument("--preset", default="mini")
    ap.add_argument("--batch-tokens", type=int, default=2000)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--code", help="a checkout whose src/ and benchmarks/ to run (before/after)")
    ap.add_argument("--json")
    a = ap.parse_args()
    rows = []
    for mode in a.modes.split(","):
        single = None
        for n in [int(x) for x in a.n.split(",")]:
            try:
                res = run(n, mode, a)
            except RuntimeError as e:
                print(f"  {mode} x{n}: {e}")
                continue
            key = "tokens_per_s"
            each = sum(r[key] for r in res) / n
            total = each * n
            single = single or total
            rows.append({"mode": mode, "n": n, "unit": key, "each": each, "total": total})
            print(
                f"  {mode:6s} x{n:2d}: {each:8.1f} {key} each, {total:9.1f} in all "
                f"({total / single:.1f}x one process)",
                flush=True,
            )
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
