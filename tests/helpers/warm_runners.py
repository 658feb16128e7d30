"""Helpers of the warm job runner's tests (wordorder.warm): a short folder for its sockets, its
runners' logs, and stopping them afterwards."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def runner_folder() -> Iterator[Path]:
    """A folder for ``WORDORDER_WARM`` (short: AF_UNIX paths are); its runners are stopped and
    the folder removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="ww", dir="/tmp"))
    try:
        yield path
    finally:
        for line in runner_log(path).splitlines():
            if line.startswith("runner "):
                try:
                    os.kill(int(line.split()[1].rstrip(":")), signal.SIGTERM)
                except ProcessLookupError:
                    pass
        shutil.rmtree(path, ignore_errors=True)


def runner_log(base: Path) -> str:
    """What the runners under ``base`` logged: ``runner PID: ready on ...``, ``job PID: ...``."""
    return "".join(p.read_text(encoding="utf-8") for p in sorted(base.rglob("*.log")))


def wait_for_runner(base: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while "ready on" not in runner_log(base):
        assert time.monotonic() < deadline, f"no runner within {timeout} s: {runner_log(base)}"
        time.sleep(0.1)
