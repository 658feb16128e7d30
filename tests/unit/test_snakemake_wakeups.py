"""Snakemake's scheduler keeps one pending wake-up (:mod:`wordorder.snakemake_wakeups`): upstream,
each pass of its loop with jobs waiting started one more timer, and the passes multiplied over a
run (8,161 in the tiny DAG). The rate limiter it serves still wakes the loop."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from wordorder.snakemake_wakeups import schedule_reevaluation


class Loop:
    """What the method touches of Snakemake's JobScheduler: the semaphore its loop waits on."""

    def __init__(self) -> None:
        self._open_jobs = threading.Semaphore(0)


def wake_ups(loop: Loop, within: float) -> int:
    n = 0
    while loop._open_jobs.acquire(timeout=within):
        n += 1
    return n


def test_a_wake_up_is_not_scheduled_while_one_is_pending():
    loop = Loop()
    for _ in range(10):  # ten passes of the loop before the timer fires
        schedule_reevaluation(loop, 0.05)
    assert wake_ups(loop, 0.5) == 1
    schedule_reevaluation(loop, 0.05)  # after it fired, the next pass schedules again
    schedule_reevaluation(loop, 0.05)
    assert wake_ups(loop, 0.5) == 1


def test_snakemake_runs_with_it_and_the_rate_limit_still_wakes_the_loop(tmp_path):
    """A real Snakemake run (the .pth of `make install` applies the change): six jobs of 2 s on
    six cores, at most 2 a second, start in three waves a second apart (each wave waits on the
    timer alone: no job has finished yet). (The passes saved show where jobs wait on cores:
    benchmarks/bench_scheduler.py.)"""
    (tmp_path / "Snakefile").write_text(
        "rule all:\n    input: expand('out/{i}', i=range(6))\n"
        "rule one:\n    output: 'out/{i}'\n    shell: 'date +%s.%N > {output}; sleep 2'\n",
        encoding="utf-8",
    )
    exe = Path(sys.executable).with_name("snakemake")
    check = (
        "import snakemake.scheduling.job_scheduler as j; "
        "print(j.JobScheduler._schedule_reevalutation.__module__)"
    )
    patched = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert patched.stdout.strip() == "wordorder.snakemake_wakeups", patched.stderr
    run = subprocess.run(
        [str(exe), "-c6", "--max-jobs-per-timespan", "2/1s", "--verbose"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    starts = sorted(float((tmp_path / "out" / str(i)).read_text()) for i in range(6))
    waves = [round(t - starts[0]) for t in starts]
    assert waves == [0, 0, 1, 1, 2, 2], starts
