"""Fewer full passes of Python's garbage collector in the ``snakemake`` process.

Planning a DAG creates objects that live as long as the run (jobs, their files, wildcards):
~390,000 for the five papers' union of 3,050 jobs. Python's collector scans the whole heap
whenever its oldest generation is due (every 10 passes of the middle one, once the heap has
grown by a quarter since the last full pass), so a growing heap is scanned again and again: 8
full passes, 0.86 s of that dry run's ~7 s (measured with ``gc.callbacks``, 2026-11-29;
docs/measured.md). Raising the oldest generation's threshold from 10 to :data:`OLDEST` leaves the
young generations collected as often as before (cycles among fresh objects still go at once) and
scans the whole heap after ~100 times as many passes: none in that dry run, some in a long run.

Applied when ``snakemake.cli`` is imported (the ``snakemake`` command, and ``python -m
snakemake`` on a cluster node), so wordorder's own commands and the tests keep Python's default.
"""

from __future__ import annotations

import gc
from types import ModuleType

#: passes of the middle generation between two full passes (Python's default: 10)
OLDEST = 1000


def wrap(module: ModuleType) -> None:
    """Raise the oldest generation's threshold, keeping the young generations' as they are."""
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(young, middle, max(oldest, OLDEST))
