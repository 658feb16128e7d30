"""One pending wake-up of Snakemake's job scheduler, not one more per pass of its loop.

Snakemake 9's scheduler (``snakemake.scheduling.job_scheduler``) ends every pass of its loop in
which jobs were waiting by starting a timer that wakes it again after the rate limiter's timespan
(``--max-jobs-per-timespan``, default 100/1s), whether or not a timer is pending already, and every
finished job wakes it too. Each wake-up that finds a job waiting starts one more timer, so the
timers pile up over a run: the tiny end-to-end DAG of the tests (127 jobs on 2 cores, 254 s) ran
the loop 8,161 times, each pass selecting jobs anew and stat-ing their inputs: 85 of the main
process's 125 CPU-seconds (cProfile, 2026-11-29). The upstream report: snakemake/snakemake#3744.

Here a timer starts only when none is pending, which keeps what the timer is for: a pass within
one timespan of the last while jobs wait on the rate limit. Applied by
:mod:`wordorder.snakemake_hooks` when Snakemake imports the scheduler.
"""

from __future__ import annotations

import threading
from types import ModuleType
from typing import Any

MODULE = "snakemake.scheduling.job_scheduler"
_PENDING = "_wordorder_wakeup_pending"


def schedule_reevaluation(self: Any, delay: float) -> None:
    """Wake the scheduler loop after ``delay`` seconds, unless a wake-up is pending already."""
    if getattr(self, _PENDING, False):
        return
    setattr(self, _PENDING, True)

    def wake() -> None:
        setattr(self, _PENDING, False)  # before the release: the pass it starts may need another
        self._open_jobs.release()

    threading.Timer(delay, wake).start()


def wrap(module: ModuleType) -> None:
    """Replace ``JobScheduler._schedule_reevalutation`` (Snakemake's spelling) of the module; the
    upstream method stays as ``upstream_reevaluation`` (benchmarks/bench_scheduler.py runs both)."""
    cls = module.JobScheduler
    if cls.__dict__.get("_schedule_reevalutation") is not schedule_reevaluation:
        cls.upstream_reevaluation = cls._schedule_reevalutation
        cls._schedule_reevalutation = schedule_reevaluation
