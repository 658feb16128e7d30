"""A training loss that is not finite stops training (issue 37, case 3): with ``lr: .inf`` (or
one far too high) the weights became NaN and the run finished, rc 0, decoding to nothing, its
BLEU of 0 in the table like a weak system's. The trainer checks the loss where the host reads it
anyway (log lines, evaluations, saved states, the end: no host sync per update) and stops with
one error naming the first non-finite update and the likely option, leaving no outputs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from training_jobs import toy_corpus

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "lr, log_every",
    [
        (1e30, 10),  # seen at the first log line
        (float("inf"), 1000),  # seen at the first evaluation (update 20), named all the same
    ],
)
def test_a_non_finite_loss_stops_training_naming_the_update(lr, log_every, tmp_path):
    files, spm = toy_corpus(tmp_path)
    options = {
        "device": "cpu",
        "batch_tokens": 200,
        "warmup": 2,
        "max_steps": 60,
        "eval_every": 20,
        "log_every": log_every,
        "checkpoint_every": 30,
        "lr": lr,
    }
    argv = [sys.executable, "-m", "wordorder.cli", "train", "--seed", "1", "--threads", "1"]
    argv += ["--train-src", files["train.src"], "--train-tgt", files["train.tgt"]]
    argv += ["--dev-src", files["dev.src"], "--dev-ref", files["dev.ref"], "--spm", spm]
    argv += ["--model-options", json.dumps({"preset": "tiny"})]
    argv += ["--train-options", json.dumps(options), "--state", tmp_path / "resume" / "state.pt"]
    argv += ["--output", tmp_path / "out" / "best.pt"]
    done = subprocess.run(
        [str(a) for a in argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert done.returncode == 2 and len(errors) == 1, done.stderr[-3000:]
    assert "the training loss is not finite (nan) from update 2 on" in errors[0]
    assert f"the likely cause is train.lr ({lr:g}" in done.stderr
    # no model of NaN weights, no log of it, no state to resume it from
    out = tmp_path / "out"
    assert not (out / "best.pt").exists() and not (out / "metrics.jsonl").exists()
    assert not (tmp_path / "resume" / "state.pt").exists()
