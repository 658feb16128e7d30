"""One trainer at a time per training state (wordorder.train.exclusive): a retry started while
the interrupted attempt still saves its state (an orphan once its shell died; seen in CI's
SLURM test) waits for it instead of working on the same files."""

from __future__ import annotations

import os
import threading
import time

import pytest
from training_jobs import run

from wordorder.errors import WordorderError
from wordorder.train import exclusive


def test_a_second_holder_waits_then_gives_up_naming_the_first(tmp_path):
    state = tmp_path / "resume" / "state.pt"
    first = exclusive.hold(state)
    started = time.monotonic()
    with pytest.raises(
        WordorderError, match=rf"still holds its state after 0.6 s \(host \S+, pid {os.getpid()}\)"
    ):
        exclusive.hold(state, wait_s=0.6)
    assert time.monotonic() - started >= 0.6
    first.release()
    with exclusive.hold(state, wait_s=0):  # free again
        pass
    assert exclusive.lock_of(state).is_file()


def test_training_starts_only_when_the_earlier_trainer_has_ended(tmp_path, capsys):
    """The test holds the state's lock (an interrupted attempt saving); the training waits, and
    writes nothing until the lock is released."""
    dying = exclusive.hold(tmp_path / "resume" / "state.pt")
    seen = {}

    def end_the_earlier_attempt():
        time.sleep(1.5)
        seen["outputs before the release"] = sorted(
            p.name for p in tmp_path.rglob("*") if p.is_file()
        )
        dying.release()

    ender = threading.Thread(target=end_the_earlier_attempt)
    ender.start()
    summary = run(tmp_path)
    ender.join()
    assert seen["outputs before the release"] == ["state.pt.lock"]
    assert summary["steps"] == 8 and (tmp_path / "out" / "best.pt").is_file()
    assert "waiting for the training that holds" in capsys.readouterr().err
