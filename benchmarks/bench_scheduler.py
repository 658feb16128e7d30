"""Snakemake's scheduler loop with wordorder's one pending wake-up against Snakemake's own
(a timer more per pass; :mod:`wordorder.snakemake_wakeups`), on the same DAG, in one run.

Runs a DAG twice, fix first, each in a fresh folder: by default a synthetic one (``--jobs`` jobs
sleeping ``--seconds`` each on one core: the shape of a long run, jobs waiting while others run);
``--tiny`` the tiny end-to-end config of the tests (needs ../shared/data; ~4 minutes a run on 2
cores). Prints the loop's passes (its "Ready jobs" lines), the Snakemake process's own CPU seconds
(the jobs' excluded) and wall seconds, and the ratios.

    .venv/bin/python benchmarks/bench_scheduler.py [--jobs 12 --seconds 2] [--tiny]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Snakemake's main in this process, its own CPU time printed last (the jobs are its children);
# "upstream" puts Snakemake's method back first.
LAUNCH = """
import resource, sys
import snakemake.scheduling.job_scheduler as j
if sys.argv.pop(1) == "upstream":
    j.JobScheduler._schedule_reevalutation = j.JobScheduler.upstream_reevaluation
from snakemake.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
ru = resource.getrusage(resource.RUSAGE_SELF)
print(f"SNAKEMAKE_CPU {ru.ru_utime + ru.ru_stime:.2f}", file=sys.stderr)
"""


def synthetic(folder: Path, jobs: int, seconds: float) -> list[str]:
    (folder / "Snakefile").write_text(
        f"rule all:\n    input: expand('out/{{i}}', i=range({jobs}))\n"
        f"rule one:\n    output: 'out/{{i}}'\n    shell: 'sleep {seconds}; touch {{output}}'\n",
        encoding="utf-8",
    )
    return ["-c1", "--directory", str(folder), "-s", str(folder / "Snakefile")]


def tiny(folder: Path) -> list[str]:
    sys.path.insert(0, str(REPO / "tests" / "helpers"))
    from dag import tiny_config

    config = tiny_config(REPO, REPO.parent / "shared" / "data", folder)
    return [
        "-c2",
        "-s",
        str(REPO / "Snakefile"),
        "--directory",
        str(REPO),
        "--configfile",
        str(config),
    ]


def run(which: str, args: list[str]) -> tuple[int, float, float]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, which, *args, "--verbose"],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - start
    out = done.stdout + done.stderr
    if "Finished job" not in out or "Exiting because a job execution failed" in out:
        raise SystemExit(f"the {which} run failed:\n{out[-3000:]}")
    cpu = float(out.rsplit("SNAKEMAKE_CPU ", 1)[1].split()[0])
    return out.count("Ready jobs"), cpu, wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=12)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--tiny", action="store_true", help="the tiny end-to-end DAG instead")
    a = ap.parse_args()
    results = {}
    for which in ("fix", "upstream"):
        with tempfile.TemporaryDirectory() as tmp:
            args = tiny(Path(tmp)) if a.tiny else synthetic(Path(tmp), a.jobs, a.seconds)
            results[which] = run(which, args)
    what = "tiny e2e DAG" if a.tiny else f"{a.jobs} jobs of {a.seconds:g} s on 1 core"
    print(f"{what}:")
    print(f"{'':10}{'passes':>8}{'snakemake CPU s':>17}{'wall s':>9}")
    for which, (passes, cpu, wall) in results.items():
        print(f"{which:10}{passes:>8}{cpu:>17.2f}{wall:>9.1f}")
    (p1, c1, w1), (p0, c0, w0) = results["fix"], results["upstream"]
    print(f"{'ratio':10}{p0 / p1:>7.1f}x{c0 / c1:>16.2f}x{w0 / w1:>8.2f}x  (upstream / fix)")


if __name__ == "__main__":
    main()
