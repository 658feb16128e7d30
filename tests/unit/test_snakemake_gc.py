"""The ``snakemake`` process's garbage collector (:mod:`wordorder.snakemake_gc`): its oldest
generation's threshold raised when Snakemake's command line loads, the young ones left alone, and
other programs of the venv untouched."""

from __future__ import annotations

import json
import subprocess
import sys

from wordorder import snakemake_gc

# In a fresh interpreter of the venv (its .pth installs the hooks).
PROBE = """
import gc, json, sys
before = gc.get_threshold()
import snakemake.api  # the API alone: not the command
api = gc.get_threshold()
import snakemake.cli
print(json.dumps({"before": before, "api": api, "cli": gc.get_threshold()}))
"""


def test_the_snakemake_command_scans_its_whole_heap_less_often():
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout)
    young, middle, oldest = seen["before"]
    assert oldest < snakemake_gc.OLDEST
    assert seen["api"] == [young, middle, oldest]
    assert seen["cli"] == [young, middle, snakemake_gc.OLDEST]


# A dry run's heap at exit: the hook's exit handler freezes it, so the interpreter's shutdown does
# not collect over it (Snakemake's own exit handlers, registered later, run before it).
EXIT_PROBE = """
import atexit, gc, sys
import snakemake.cli
atexit.register(lambda: print("frozen before Snakemake's ends:", gc.get_freeze_count()))
atexit._run_exitfuncs()
print("frozen after:", gc.get_freeze_count() > 0)
"""


def test_the_snakemake_command_leaves_its_heap_frozen_at_exit():
    run = subprocess.run([sys.executable, "-c", EXIT_PROBE], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.splitlines() == ["frozen before Snakemake's ends: 0", "frozen after: True"]


def test_a_higher_threshold_is_kept():
    import gc

    saved = gc.get_threshold()
    try:
        gc.set_threshold(500, 7, 5000)
        snakemake_gc.wrap(sys.modules["json"])
        assert gc.get_threshold() == (500, 7, 5000)
        gc.set_threshold(500, 7, 3)
        snakemake_gc.wrap(sys.modules["json"])
        assert gc.get_threshold() == (500, 7, snakemake_gc.OLDEST)
    finally:
        gc.set_threshold(*saved)
