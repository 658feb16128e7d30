"""Warm jobs (``warm_jobs``, :mod:`wordorder.warm`) against a process per job, on the tiny
end-to-end DAG of the tests (125 jobs; needs ../shared/data; ~2 + ~4 minutes on 2 cores), in one
run: each in a fresh folder, the warm run with no runner up when it starts (its runners' start-up
counted). Prints the wall seconds, the jobs' own CPU seconds (the sum of the "cpu X s" each job's
log ends with; a runner's imports are not in it, so its CPU is printed beside) and the ratios.

    .venv/bin/python benchmarks/bench_warm.py
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "helpers"))
from dag import tiny_config  # noqa: E402


def run(folder: Path, warm: bool) -> tuple[float, float, float]:
    """(wall s, the jobs' CPU s, the runners' CPU s) of the tiny DAG in ``folder``."""
    config = tiny_config(REPO, REPO.parent / "shared" / "data", folder, warm_jobs=str(warm).lower())
    base = Path(tempfile.mkdtemp(prefix="ww", dir="/tmp"))  # no runner up: a cold start
    env = {**os.environ, "WORDORDER_WARM": str(base) if warm else "0"}
    exe = Path(sys.executable).with_name("snakemake")
    env["PATH"] = f"{exe.parent}{os.pathsep}{env['PATH']}"
    start = time.perf_counter()
    done = subprocess.run(
        [str(exe), "-s", str(REPO / "Snakefile"), "--directory", str(REPO), "--cores", "2"]
        + ["--configfile", str(config)],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(done.stderr[-3000:])
    jobs = sum(
        float(m.group(1))
        for log in (folder / "logs").rglob("*.log")
        for m in re.finditer(
            r"; cpu ([0-9.]+) s", log.read_text(encoding="utf-8", errors="replace")
        )
    )
    runners = 0.0  # still up (idle) after the run: their CPU so far is all they used
    for log in base.rglob("*.log"):
        for line in log.read_text(encoding="utf-8").splitlines():
            if line.startswith("runner "):
                stat = Path(f"/proc/{line.split()[1].rstrip(':')}/stat").read_text()
                fields = stat.rsplit(")", 1)[1].split()
                runners += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return wall, jobs, runners


def main() -> None:
    rows = {}
    for warm in (False, True):
        with tempfile.TemporaryDirectory() as folder:
            rows[warm] = run(Path(folder), warm)
        name = "warm" if warm else "a process per job"
        wall, jobs, runners = rows[warm]
        print(
            f"{name:18s} wall {wall:6.1f} s  jobs' cpu {jobs:6.1f} s  runners' cpu {runners:5.1f} s"
        )
    (cold_wall, cold_jobs, _), (warm_wall, warm_jobs, warm_runners) = rows[False], rows[True]
    print(
        f"ratio (a process per job / warm): wall {cold_wall / warm_wall:.2f}x, "
        f"cpu {cold_jobs / (warm_jobs + warm_runners):.2f}x (the runners' cpu added)"
    )


if __name__ == "__main__":
    main()
