"""System test: training killed with SIGKILL (or stopped by SIGTERM, as SLURM does at a time
limit) and rerun continues from its saved state; on the CPU the final weights are bitwise those
of an uninterrupted run (which, unlike the resumed ones, keeps a leaf per parameter)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent

# One training run in its own process (as a Snakemake job is): a tiny Transformer with dropout
# on the synthetic SVO → SOV task; argv: out_dir [state_path].
WORKER = """
import sys
from pathlib import Path
import torch
from reordering_task import VOCAB, bleu, make_data
from wordorder.models import build_model
from wordorder.train.loop import TrainOptions, train
from wordorder.train.resume import TrainingInterrupted

torch.manual_seed(1)
pairs, test_src, test_ref = make_data(3000, 20, seed=7)
model = build_model({"preset": "tiny", "dropout": 0.1}, VOCAB)
state = Path(sys.argv[2]) if len(sys.argv) > 2 else None
# The resumed runs stack their parameters (wordorder.train.stacked), the reference does not:
# the same bytes in the end show that stacked updates and their checkpoints are the same.
opts = TrainOptions(device="cpu", batch_tokens=400, lr=2e-3, warmup=20, max_steps=70,
                    eval_every=25, log_every=10, checkpoint_every=6, seed=1, threads=1,
                    label_smoothing=0.1, average_last=2, stack_parameters=state is not None)
# The negated BLEU as the dev score: it falls while the model learns, so the first evaluation's
# checkpoint is the best and no later one beats it (a run past its best, as a long one can be).
try:
    train(model, pairs, test_src, lambda h: -bleu(h, test_ref), opts, Path(sys.argv[1]),
          state_path=state)
except TrainingInterrupted as e:
    print(e, file=sys.stderr)
    sys.exit(143)
"""


def start(tmp_path: Path, out: Path, state: Path | None) -> subprocess.Popen:
    script = tmp_path / "worker.py"
    script.write_text(WORKER, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(HERE), str(HERE.parent / "helpers"), os.environ.get("PYTHONPATH", "")]
        ),
    }
    args = [sys.executable, str(script), str(out)] + ([str(state)] if state else [])
    return subprocess.Popen(
        args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )


def saved_step(state: Path) -> int:
    try:
        return int(torch.load(state, weights_only=True)["progress"]["step"])
    except Exception:  # not written yet
        return -1


def wait_for_step(proc: subprocess.Popen, state: Path, at_least: int, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        step = saved_step(state)
        if step >= at_least:
            return step
        if proc.poll() is not None:
            raise AssertionError(
                f"training ended before saving update {at_least}: {proc.stderr.read()[-2000:]}"
            )
        time.sleep(0.05)
    raise AssertionError(f"no state at update {at_least} within {timeout} s")


def checkpoint(path: Path) -> dict:
    return torch.load(path, weights_only=True)


def records(out: Path) -> list[dict]:
    """The metrics log without its timings (which differ from run to run)."""
    lines = (out / "metrics.jsonl").read_text(encoding="utf-8").splitlines()
    return [
        {k: v for k, v in json.loads(line).items() if k not in ("tokens_per_s", "elapsed_s")}
        for line in lines
    ]


def outputs_deleted(out: Path) -> None:
    """What Snakemake does to a failed job's declared outputs."""
    for name in ("best.pt", "metrics.jsonl"):
        (out / name).unlink(missing_ok=True)


@pytest.mark.slow
def test_killed_training_resumes_to_bitwise_equal_checkpoints(tmp_path):
    ref_out = tmp_path / "reference"
    ref = start(tmp_path, ref_out, None)
    assert ref.wait(timeout=300) == 0, ref.stderr.read()[-2000:]
    # The scenario: the best single checkpoint is the first evaluation's, never beaten again.
    assert torch.load(ref_out / "best_single.pt", weights_only=True)["meta"]["step"] == 25

    out, state = tmp_path / "resumed", tmp_path / "resume" / "state.pt"
    killed_at = []
    for at_least in (6, 30):  # SIGKILL twice: mid-epoch, and after the (best) evaluation at 25
        # A state this process wrote itself: the one left by the previous process may be newer
        # than the step the test saw before killing it.
        at_least = max(at_least, saved_step(state) + 1)
        proc = start(tmp_path, out, state)
        killed_at.append(wait_for_step(proc, state, at_least))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        outputs_deleted(out)
    # SLURM's time limit: SIGTERM, the state is saved after the update in progress, exit 143
    at_least = saved_step(state) + 1
    proc = start(tmp_path, out, state)
    before = wait_for_step(proc, state, at_least)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 143
    stopped_at = saved_step(state)
    assert stopped_at >= before and "stopped by signal 15" in proc.stderr.read()
    # withdrawn by the process itself (Snakemake's deletion can come before its last writes)
    assert not (out / "best.pt").exists() and not (out / "metrics.jsonl").exists()
    outputs_deleted(out)
    final = start(tmp_path, out, state)
    assert final.wait(timeout=300) == 0, final.stderr.read()[-2000:]
    # A finished run drops the optimizer state and keeps only its outputs, for a retry killed
    # before Snakemake registered them (wordorder.train.finished).
    assert not state.exists() and state.with_name("state.pt.done").is_file()
    assert [p.name for p in state.with_name("state.pt.kept").iterdir()] == ["final"]

    # Bitwise: the averaged best.pt, the best single checkpoint and the last one; their files
    # differ only in the stack_parameters setting they record.
    for name in ("best.pt", "best_single.pt", "last.pt"):
        got, want = checkpoint(out / name), checkpoint(ref_out / name)
        assert got["meta"]["train_options"].pop("stack_parameters") is True
        assert want["meta"]["train_options"].pop("stack_parameters") is False
        assert got["meta"] == want["meta"]
        assert got["state_dict"].keys() == want["state_dict"].keys()
        for key, tensor in want["state_dict"].items():
            assert torch.equal(got["state_dict"][key], tensor), (
                f"{name}: {key} differs after kills at {killed_at}, {stopped_at}"
            )
    assert torch.load(out / "last.pt", weights_only=True)["meta"]["step"] == 70
    # The metrics log has each update's records once, with the values of the uninterrupted run.
    assert records(out) == records(ref_out)


def test_a_state_for_other_options_is_not_resumed(tmp_path):
    from wordorder.models import build_model
    from wordorder.train.loop import TrainOptions, make_optimizer
    from wordorder.train.resume import Progress, fingerprint, load_state, save_state
    from wordorder.train.schedule import inverse_sqrt_scheduler

    model = build_model({"preset": "tiny"}, 30)
    opt = make_optimizer(model, TrainOptions())
    sched, scaler = inverse_sqrt_scheduler(opt, 10), torch.amp.GradScaler("cuda", enabled=False)
    path = tmp_path / "state.pt"
    save_state(path, model, opt, sched, scaler, Progress(step=5), fingerprint({"lr": 1}))
    assert load_state(path, model, opt, sched, scaler, fingerprint({"lr": 2})) is None
    assert load_state(path, model, opt, sched, scaler, fingerprint({"lr": 1})).step == 5
    path.write_bytes(b"not a checkpoint")
    from wordorder.errors import WordorderError

    with pytest.raises(WordorderError, match="cannot read the training state"):
        load_state(path, model, opt, sched, scaler, fingerprint({"lr": 1}))
    # A state of the format before the best checkpoint and the metrics were kept with it.
    torch.save({"format": "wordorder-train-state-1", "fingerprint": fingerprint({"lr": 1})}, path)
    with pytest.raises(WordorderError, match="older version") as e:
        load_state(path, model, opt, sched, scaler, fingerprint({"lr": 1}))
    assert e.value.path == str(path) and "delete it" in e.value.hint
