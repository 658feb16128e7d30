"""The results-folder lock between real processes: a live holder refuses, a holder killed with -9
is taken over with a note, a holder on another host refuses (it cannot be checked from here).
The lock through the real Snakemake (two working directories) is tests/e2e/test_results_lock.py."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pytest

from wordorder import lock
from wordorder.errors import WordorderError

HOLD = (
    "import sys, time; from wordorder import lock; lock.take(sys.argv[1]); "
    "print('held', flush=True); time.sleep(60)"
)


@pytest.fixture(autouse=True)
def release():
    yield
    lock.release_all()


def hold(folder):
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(folder)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.stdout.readline() == "held\n"
    return proc


def test_a_live_holder_refuses_and_a_killed_one_is_taken_over(tmp_path, capsys):
    holder = hold(tmp_path / "exp")
    try:
        with pytest.raises(WordorderError) as e:
            lock.take(tmp_path / "exp")
        assert e.value.path == str(tmp_path / "exp" / lock.LOCK_NAME)
        assert (
            f"host {socket.gethostname()}, pid {holder.pid}, working "
            f"directory {os.getcwd()}, started "
        ) in e.value.message
    finally:
        holder.send_signal(signal.SIGKILL)  # no atexit: its details stay in the file
        holder.wait()
    lock.take(tmp_path / "exp")
    assert (
        f"taking over the lock of a run that is gone (host {socket.gethostname()}, pid {holder.pid}"
        in capsys.readouterr().err
    )
    assert (
        json.loads((tmp_path / "exp" / lock.LOCK_NAME).read_text(encoding="utf-8"))["pid"]
        == os.getpid()
    )
    lock.take(tmp_path / "exp")  # this process again: already held, no error
    lock.release_all()
    assert (tmp_path / "exp" / lock.LOCK_NAME).read_text(encoding="utf-8") == ""


def test_details_left_by_another_host_refuse(tmp_path):
    (tmp_path / lock.LOCK_NAME).write_text(
        json.dumps(
            {"host": "node-elsewhere", "pid": 1, "cwd": "/x", "start": "2026-01-01 00:00:00 +0000"}
        ),
        encoding="utf-8",
    )
    with pytest.raises(
        WordorderError, match="may still be running on another host .*host node-elsewhere"
    ) as e:
        lock.take(tmp_path)
    assert f"delete {tmp_path / lock.LOCK_NAME}" in e.value.hint
