"""The CPU time a training job reports (its log's last line, summed into an experiment's
CPU-hours by wordorder.evaluate.cost) includes its earlier attempts: a retry overwrites the
killed attempt's log, so the state carries that time."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from training_jobs import toy_corpus

from wordorder.evaluate.cost import FOOTER
from wordorder.resources import cpu_seconds
from wordorder.train.resume import Progress
from wordorder.train.state import TrainingState


def test_a_resumed_state_carries_the_earlier_attempts_cpu():
    fresh = TrainingState.begin(None)
    resumed = TrainingState.begin(Progress(step=5, cpu_seconds=1000.0))
    assert fresh.cpu_before == 0.0 and resumed.cpu_before == 1000.0
    now = cpu_seconds()
    assert now <= fresh.progress([], "").cpu_seconds < now + 5  # this process' own so far
    assert 1000.0 + now <= resumed.progress([], "").cpu_seconds < 1000.0 + now + 5
    assert 1000.0 + now - 0.05 <= resumed.summary()["cpu_s"] < 1000.0 + now + 5  # rounded to 0.1 s


REPO = Path(__file__).resolve().parents[2]


def test_a_restored_training_job_reports_the_finished_trainings_cpu(tmp_path):
    """The second job finds the training finished and restores it in a moment, yet its log's
    cost line counts the CPU that training took (the first job's log is gone in real life)."""
    files, spm = toy_corpus(tmp_path)
    train_options = {
        "device": "cpu",
        "batch_tokens": 200,
        "warmup": 2,
        "max_steps": 60,
        "eval_every": 20,
    }
    argv = ["train", "--train-src", str(files["train.src"]), "--train-tgt", str(files["train.tgt"])]
    argv += [
        "--dev-src",
        str(files["dev.src"]),
        "--dev-ref",
        str(files["dev.ref"]),
        "--spm",
        str(spm),
    ]
    argv += [
        "--model-options",
        json.dumps({"preset": "tiny"}),
        "--train-options",
        json.dumps(train_options),
    ]
    argv += ["--seed", "1", "--threads", "1", "--state", str(tmp_path / "resume" / "state.pt")]
    argv += ["--output", str(tmp_path / "out" / "best.pt")]

    def job() -> tuple[float, float]:
        """One job as Snakemake runs it, in its own process: the CPU on its log's last line,
        and the CPU the process really used."""
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(
            [sys.executable, "-m", "wordorder.cli", *argv], env=env, capture_output=True, text=True
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert done.returncode == 0, done.stderr[-2000:]
        (footer,) = [m for m in FOOTER.finditer(done.stderr)]
        used = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        return float(footer.group(4)), used

    first, _ = job()
    lines = (tmp_path / "out" / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    trained = json.loads(lines[-1])["summary"]["cpu_s"]
    assert 0 < trained <= first
    for name in ("best.pt", "metrics.jsonl"):  # as Snakemake does to an incomplete job's outputs
        (tmp_path / "out" / name).unlink()
    reported, used = job()
    assert used < trained  # restored, not trained again (so the check below can fail)
    assert reported >= trained  # and its log still says what the training cost
