"""Fewer full passes of Python's garbage collector in the ``snakemake`` process.

Planning a DAG creates objects that live as long as the run (jobs, their files, wildcards):
~390,000 for the five papers' union of 3,050 jobs. Python's collector scans the whole heap
whenever its oldest generation is due (every 10 passes of the middle one, once the heap has
grown by a quarter since the last full pass), so a growing heap is scanned again and again: 8
full passes, 0.86 s of that dry run's ~7 s (measured with ``gc.callbacks``, 2026-11-29;
docs/measured.md). Raising the oldest generation's threshold from 10 to :data:`OLDEST` leaves the
young generations collected as often as before (cycles among fresh objects still go at once) and
scans the whole heap after ~100 times as many passes: none in that dry run, some in a long run.

And at the end, the heap is frozen (``gc.freeze``) before the interpreter shuts down: Python's
shutdown collects garbage cycles over the whole heap once more, ~1 s of the five papers' dry run
of ~5 s (2,700 jobs; 4.0-4.2 s against 5.1-5.3 s with the heap frozen first, three runs each,
2026-11-30). Objects are still freed as the modules are torn down; only cycles alive at exit are
left to the operating system, whose ``__del__`` Python does not promise to run at exit anyway.
Snakemake's own ends (its atexit handlers, those registered after this one, run first) and
``logging``'s flushing and closing of the log files (registered before, run after) are as before.

Applied when ``snakemake.cli`` is imported (the ``snakemake`` command, and ``python -m
snakemake`` on a cluster node), so wordorder's own commands and the tests keep Python's default.
"""

from __future__ import annotations

import atexit
import gc
from types import ModuleType

#: passes of the middle generation between two full passes (Python's default: 10)
OLDEST = 1000


def wrap(module: ModuleType) -> None:
    """Raise the oldest generation's threshold, keeping the young generations' as they are;
    freeze the heap at exit."""
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(young, middle, max(oldest, OLDEST))
    atexit.unregister(gc.freeze)  # registered once, however often this runs
    atexit.register(gc.freeze)
