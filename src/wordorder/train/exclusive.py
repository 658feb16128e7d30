"""One trainer at a time per training state.

A trainer that gets SIGTERM (a SLURM time limit, Ctrl-C) finishes its update, saves its state
and withdraws its outputs before it exits. The shell that Snakemake started it from dies at
once on the same signal, so the trainer lives on as an orphan for those seconds: Snakemake
locally, and SLURM with ``proctrack/linuxproc`` (which follows the process tree), count the job
as ended and may start the retry while the old trainer still writes. The two would then work
on one state folder: the old one pruning the kept checkpoint the new one restores, or deleting
the new one's best.pt and metrics.jsonl as its own. So a trainer with a state path first takes
an ``flock`` on ``<state>.lock`` and holds it until it ends; a second one waits for it (the
kernel releases the lock however the holder ends), and after ``wait_s`` seconds gives up with
an error naming the holder.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

from wordorder.errors import WordorderError
from wordorder.lock import try_flock

WAIT_S = 600.0  # ample for a save after SIGTERM (an update, an evaluation, a checkpoint)
POLL_S = 0.5


def lock_of(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + ".lock")


class StateLock:
    """Held from :func:`hold` until :meth:`release` (or the process ends)."""

    def __init__(self, fd: int) -> None:
        self.fd: int | None = fd

    def __enter__(self) -> StateLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # drops the flock
            self.fd = None


def hold(state_path: Path, wait_s: float = WAIT_S) -> StateLock:
    """Lock ``state_path`` for this process, waiting up to ``wait_s`` seconds for another
    trainer of the same state to end."""
    path = lock_of(state_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        deadline, told = time.monotonic() + wait_s, False
        # A filesystem without locks has nothing to wait on.
        while try_flock(fd) == "busy":
            if time.monotonic() >= deadline:
                raise WordorderError(
                    (
                        "another training of this model still holds its state after "
                        f"{wait_s:g} s ({_holder(fd)})"
                    ),
                    path=path,
                    hint="two trainings of one model must not run at once: wait for that one to "
                    "end (or stop it), then run this again",
                )
            if not told:
                print(
                    f"waiting for the training that holds {path} to end ({_holder(fd)}): an "
                    "interrupted attempt saving its state",
                    file=sys.stderr,
                    flush=True,
                )
                told = True
            time.sleep(POLL_S)
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, json.dumps({"host": socket.gethostname(), "pid": os.getpid()}).encode() + b"\n")
    return StateLock(fd)


def _holder(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 4096).decode("utf-8", errors="replace").strip()
    try:
        holder = json.loads(text)
        return f"host {holder['host']}, pid {holder['pid']}"
    except (ValueError, KeyError, TypeError):
        return "its details not written yet"
