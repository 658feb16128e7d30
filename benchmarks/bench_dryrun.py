"""How long Snakemake takes to plan the full-scale DAGs (``snakemake -n``): each paper's config
in configs/full/ alone, and their union in one DAG (workflow/papers.smk), against the 10 s budget.

Times are wall clock of the whole command (interpreter start, plugin loading, config checks,
DAG), the best of ``--repeats`` runs, in the repository root (run from anywhere):

    .venv/bin/python benchmarks/bench_dryrun.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGET = 10.0  # seconds: the union of the five papers must be listed within this


def dry_run(*args: str) -> tuple[float, int]:
    exe = Path(sys.executable).with_name("snakemake")
    t0 = time.perf_counter()
    run = subprocess.run([str(exe), "-n", *args], cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if run.returncode:
        raise SystemExit(
            f"snakemake -n {' '.join(args)} failed:\n{(run.stdout + run.stderr)[-3000:]}"
        )
    jobs = int(re.search(r"^total\s+(\d+)", run.stdout + run.stderr, flags=re.M).group(1))
    return wall, jobs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    rows = []
    for config in sorted((REPO / "configs" / "full").glob("*.yaml")):
        runs = [dry_run("--configfile", str(config.relative_to(REPO))) for _ in range(args.repeats)]
        rows.append((config.stem, min(w for w, _ in runs), runs[0][1]))
    runs = [dry_run("-s", "workflow/papers.smk") for _ in range(args.repeats)]
    union = ("union (workflow/papers.smk)", min(w for w, _ in runs), runs[0][1])
    print(f"{'DAG':<30} {'jobs':>6} {'seconds':>8} {'jobs/s':>8}")
    for name, wall, jobs in [*rows, union]:
        print(f"{name:<30} {jobs:>6} {wall:>8.2f} {jobs / wall:>8.0f}")
    separate = sum(w for _, w, _ in rows)
    print(
        f"\nunion / sum of the five separate dry runs: {union[1] / separate:.2f} "
        f"({union[1]:.2f} s vs {separate:.2f} s)"
    )
    print(
        f"union / budget of {BUDGET:.0f} s: {union[1] / BUDGET:.2f}"
        + ("" if union[1] <= BUDGET else "  OVER BUDGET")
    )


if __name__ == "__main__":
    main()
