"""A process that ends with its parent: a job's process whose shell was killed (the trainer;
the ``wordorder`` client of a warm runner, :mod:`wordorder.warm`)."""

from __future__ import annotations

import os
import signal
import sys


def die_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have Linux send ``sig`` to this process when its parent ends (``PR_SET_PDEATHSIG``).

    Snakemake runs the trainer under a shell; a killed shell takes no child with it, and
    Snakemake then deletes the job's outputs while an orphaned trainer would go on writing
    them. With SIGTERM the trainer saves its state and withdraws its outputs
    (``train.resume.StopSignal``). Elsewhere (not Linux, no libc) nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(1, int(sig), 0, 0, 0) != 0:  # 1: PR_SET_PDEATHSIG
            return
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent ended before the request: no signal would come
        os.kill(os.getpid(), sig)
