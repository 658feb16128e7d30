"""The trainer dies with its job (issue 37, case 10). Snakemake runs ``wordorder train`` under a
shell; killed, that shell takes no child with it, Snakemake marks the job failed and deletes its
outputs, and an orphaned trainer used to go on and write best.pt and a metrics log of only its
summary line, which the rerun took as done. The trainer asks the kernel for SIGTERM when its
parent dies (``PR_SET_PDEATHSIG``), saves its state, withdraws its outputs and exits; the
rerun resumes and ends with every line of the log."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from training_jobs import toy_corpus
from warm_runners import runner_folder, runner_log, wait_for_runner

pytestmark = pytest.mark.slow

STEPS, EVAL, LOG = 300, 10, 5


def job_command(tmp_path: Path, program: list[str] | None = None) -> str:
    """The training job's shell command, as the train rule writes it (its log redirected);
    ``program``: the command before ``train`` (``python -m wordorder.cli``)."""
    files, spm = toy_corpus(tmp_path)
    options = {
        "device": "cpu",
        "batch_tokens": 200,
        "warmup": 2,
        "max_steps": STEPS,
        "eval_every": EVAL,
        "log_every": LOG,
        "checkpoint_every": 0,
        "best_by": "perplexity",  # the toy's dev loss falls: each evaluation a new best
    }
    argv = [*(program or [sys.executable, "-m", "wordorder.cli"]), "train"]
    argv += ["--train-src", files["train.src"], "--train-tgt", files["train.tgt"]]
    argv += ["--dev-src", files["dev.src"], "--dev-ref", files["dev.ref"], "--spm", spm]
    argv += ["--model-options", json.dumps({"preset": "tiny"})]
    argv += ["--train-options", json.dumps(options), "--seed", "1", "--threads", "1"]
    argv += ["--state", tmp_path / "resume" / "state.pt", "--output", tmp_path / "out" / "best.pt"]
    words = " ".join(shlex.quote(str(a)) for a in argv)
    return f"set -euo pipefail; {words} > {shlex.quote(str(tmp_path / 'train.log'))} 2>&1"


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
        return [int(p) for p in f.read().split()]


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False


def evaluations(metrics: Path) -> int:
    try:
        lines = metrics.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return 0
    return sum('"best": true' in line for line in lines)


def test_killing_the_jobs_shell_stops_the_trainer(tmp_path):
    command = job_command(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    shell = subprocess.Popen(["bash", "-c", command], env=env, start_new_session=True)
    out = tmp_path / "out"
    trainer = None
    try:
        deadline = time.monotonic() + 120
        while evaluations(out / "metrics.jsonl") < 2:  # two new-best evaluations
            assert shell.poll() is None, (tmp_path / "train.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "no second evaluation within 120 s"
            time.sleep(0.05)
        (trainer,) = children(shell.pid)
        shell.kill()  # the job's shell, not the trainer
        shell.wait()
        for name in ("best.pt", "metrics.jsonl"):  # what Snakemake does to a failed job's outputs
            (out / name).unlink(missing_ok=True)
        deadline = time.monotonic() + 20
        while alive(trainer) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(trainer), "the trainer goes on without its job"
    finally:
        if trainer is not None and alive(trainer):
            os.kill(trainer, signal.SIGKILL)
    log = (tmp_path / "train.log").read_text(encoding="utf-8")
    assert "stopped by signal 15" in log, log[-2000:]
    # nothing a rerun could take for the finished outputs
    assert not (out / "best.pt").exists() and not (out / "metrics.jsonl").exists()

    # The retry resumes from the saved state and ends with the whole log.
    done = subprocess.run(["bash", "-c", command], env=env)
    assert done.returncode == 0, (tmp_path / "train.log").read_text()[-2000:]
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    logged = [r["step"] for r in records if "train_loss" in r]
    evaluated = [r["step"] for r in records if "dev_bleu" in r]
    assert logged == list(range(LOG, STEPS + 1, LOG))
    assert evaluated == list(range(EVAL, STEPS + 1, EVAL))
    assert "summary" in records[-1] and sum("summary" in r for r in records) == 1


@pytest.mark.parametrize("killed", ["shell", "client"])
def test_a_trainer_forked_by_the_warm_runner_stops_with_its_job(tmp_path, killed):
    """Through a warm runner (wordorder.warm) the trainer is the runner's child, not the shell's:
    a killed shell ends the ``wordorder`` client (its parent-death signal), which passes SIGTERM
    on; a killed client closes its connection, which the job takes for SIGTERM. Either way the
    trainer saves its state and stops (the resume itself: the test above)."""
    program = Path(sys.executable).with_name("wordorder")
    with runner_folder() as base:
        env = {**os.environ, "WORDORDER_WARM": str(base)}
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2] / "src")
        subprocess.run([program, "--help"], env=env, capture_output=True)  # starts a runner
        wait_for_runner(base)
        command = job_command(tmp_path, [str(program)])
        shell = subprocess.Popen(["bash", "-c", command], env=env, start_new_session=True)
        deadline = time.monotonic() + 120
        while evaluations(tmp_path / "out" / "metrics.jsonl") < 2:
            assert shell.poll() is None, (tmp_path / "train.log").read_text()[-2000:]
            assert time.monotonic() < deadline, "no second evaluation within 120 s"
            time.sleep(0.05)
        (client,) = children(shell.pid)
        trainer = int(re.findall(r"job (\d+): wordorder train", runner_log(base))[-1])
        assert trainer != client and alive(trainer)
        os.kill(shell.pid if killed == "shell" else client, signal.SIGKILL)
        shell.wait()
        deadline = time.monotonic() + 20
        while alive(trainer) and time.monotonic() < deadline:
            time.sleep(0.1)
        if alive(trainer):
            os.kill(trainer, signal.SIGKILL)
            pytest.fail("the trainer goes on without its job")
        deadline = time.monotonic() + 10
        while alive(client) and time.monotonic() < deadline:  # it ends with the job
            time.sleep(0.1)
        assert not alive(client)
    log = (tmp_path / "train.log").read_text(encoding="utf-8")
    assert "stopped by signal 15" in log, log[-2000:]
    assert (tmp_path / "resume" / "state.pt").is_file()


def test_a_summary_record_never_makes_a_log_of_its_own(tmp_path):
    """The runner appends the summary to the finished log; a log deleted meanwhile (the job's
    outputs withdrawn) is not recreated with the summary alone, and best.pt goes with it."""
    from wordorder.errors import WordorderError
    from wordorder.train.runner import append_summary

    (tmp_path / "best.pt").write_bytes(b"model")
    with pytest.raises(WordorderError, match="metrics log was removed"):
        append_summary(tmp_path / "best.pt", {"steps": 3})
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "metrics.jsonl").write_text('{"step": 1}\n', encoding="utf-8")
    append_summary(tmp_path / "best.pt", {"steps": 3})
    assert (tmp_path / "metrics.jsonl").read_text().splitlines()[1] == '{"summary": {"steps": 3}}'
