"""A finished training keeps its outputs until the next run of the same job has them: killed
after training but before Snakemake registered the outputs, the retry restores them instead of
training again (wordorder.train.finished). A few updates of a tiny model on a toy task."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
from training_jobs import DEV, OPTIONS, PAIRS, run, toy_corpus

from wordorder.models import build_model
from wordorder.train import finished
from wordorder.train.loop import TrainOptions, train
from wordorder.train.resume import data_digest


def contents(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
    }


def delete_outputs(out: Path) -> None:
    """What Snakemake does to the declared outputs of a job that did not complete."""
    for name in ("best.pt", "metrics.jsonl"):
        (out / name).unlink()


def test_a_finished_run_is_restored_instead_of_trained_again(tmp_path, capsys):
    first = run(tmp_path)
    out, state = tmp_path / "out", tmp_path / "resume" / "state.pt"
    kept = tmp_path / "resume" / "state.pt.kept"
    assert first["steps"] == 8 and first["stop_reason"] == "max_steps"
    # The optimizer state is gone; the record and one folder with the outputs remain.
    assert not state.exists() and [p.name for p in kept.iterdir()] == ["final"]
    record = json.loads((tmp_path / "resume" / "state.pt.done").read_text(encoding="utf-8"))
    assert record["summary"] == first and record["code"] == finished.code_fingerprint()
    assert set(record["files"]) == {
        "best.pt",
        "best_single.pt",
        "last.pt",
        "metrics.jsonl",
        "history/step6.pt",
        "history/step8.pt",
    }
    before = contents(out)
    delete_outputs(out)

    scores: list = []
    capsys.readouterr()
    again = run(tmp_path, scores)
    assert again == first and scores == []  # no evaluation: nothing was trained
    assert contents(out) == before  # byte-identical
    # the kept file itself
    assert os.stat(out / "best.pt").st_ino == os.stat(kept / "final" / "best.pt").st_ino
    # a copy
    assert os.stat(out / "metrics.jsonl").st_ino != os.stat(kept / "final" / "metrics.jsonl").st_ino
    message = capsys.readouterr().out
    assert "training had already finished at update 8 (stop: max_steps)" in message
    assert (
        f"delete {kept / 'final'} and {tmp_path / 'resume' / 'state.pt.done'} to train again"
        in message
    )


def test_other_options_train_anew(tmp_path, capsys):
    run(tmp_path)
    delete_outputs(tmp_path / "out")
    capsys.readouterr()
    scores: list = []
    # max_steps is not in the resume key (a saved state may be continued with a larger one), but
    # a finished run of 8 updates must not stand for one of 10.
    summary = run(tmp_path, scores, max_steps=10)
    assert scores and summary["steps"] == 10
    message = capsys.readouterr().out
    marker = tmp_path / "resume" / "state.pt.done"
    assert (
        f"training anew: {marker} does not stand for this run (it was trained "
        "with other options or data)"
    ) in message
    # the record is replaced
    assert json.loads(marker.read_text(encoding="utf-8"))["summary"] == summary
    assert (tmp_path / "out" / "best.pt").is_file() and (
        tmp_path / "out" / "metrics.jsonl"
    ).is_file()


def test_other_code_trains_anew(tmp_path, monkeypatch, capsys):
    run(tmp_path)
    delete_outputs(tmp_path / "out")
    capsys.readouterr()
    # as if a source file changed
    monkeypatch.setattr(finished, "code_fingerprint", lambda: "0" * 64)
    scores: list = []
    run(tmp_path, scores)
    assert scores and "trained by other code" in capsys.readouterr().out
    record = json.loads((tmp_path / "resume" / "state.pt.done").read_text(encoding="utf-8"))
    assert record["code"] == "0" * 64


def test_incomplete_kept_outputs_train_anew(tmp_path, capsys):
    run(tmp_path)
    delete_outputs(tmp_path / "out")
    (tmp_path / "resume" / "state.pt.kept" / "final" / "last.pt").unlink()
    capsys.readouterr()
    scores: list = []
    run(tmp_path, scores)
    assert scores and "its kept outputs are incomplete" in capsys.readouterr().out


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        json.dumps(
            {
                "format": finished.FORMAT,
                "key": "k",
                "folder": "../elsewhere",
                "files": {},
                "summary": {},
            }
        ),
        json.dumps(
            {
                "format": finished.FORMAT,
                "key": "k",
                "folder": "final",
                "files": {"../x": 1},
                "summary": {},
            }
        ),
    ],
)
def test_a_record_that_is_not_ours_is_removed(tmp_path, capsys, text):
    marker = tmp_path / "state.pt.done"
    marker.write_text(text, encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    assert finished.restore(tmp_path / "state.pt", tmp_path / "out", "k", main=True) is None
    assert "it is not a record of a finished training" in capsys.readouterr().out
    assert (
        not marker.exists()
        and (tmp_path / "elsewhere").is_dir()
        and not (tmp_path / "out").exists()
    )


def records(path: Path) -> list[dict]:
    """The metrics log without its timings."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [
        {k: v for k, v in json.loads(line).items() if k not in ("tokens_per_s", "elapsed_s")}
        for line in lines
    ]


def test_a_kill_before_the_record_leaves_the_resumable_state(tmp_path, monkeypatch, capsys):
    def killed(path, record):
        raise KeyboardInterrupt  # the job stopped after the outputs were kept, before the record

    with monkeypatch.context() as m:
        m.setattr(finished, "_write_marker", killed)
        with pytest.raises(KeyboardInterrupt):
            run(tmp_path)
    state, out = tmp_path / "resume" / "state.pt", tmp_path / "out"
    assert state.is_file() and not (tmp_path / "resume" / "state.pt.done").exists()
    assert torch.load(state, weights_only=True)["progress"]["step"] == 6  # the last saved update
    before = contents(out)
    delete_outputs(out)
    capsys.readouterr()
    summary = run(tmp_path)
    assert f"resuming from {state} at update 6" in capsys.readouterr().out
    assert (
        summary["steps"] == 8
        and not state.exists()
        and (tmp_path / "resume" / "state.pt.done").is_file()
    )
    # Nothing lost: on the CPU the resumed run ends with the same checkpoints, bit for bit.
    after = contents(out)
    for name in ("best.pt", "best_single.pt", "last.pt", "history/step6.pt", "history/step8.pt"):
        assert after[name] == before[name], name
    assert records(out / "metrics.jsonl") == [
        {k: v for k, v in json.loads(line).items() if k not in ("tokens_per_s", "elapsed_s")}
        for line in before["metrics.jsonl"].decode().splitlines()
    ]


def test_the_train_step_restores_its_metrics_log_with_one_summary_record(tmp_path, capsys):
    """Through the runner, which appends the summary record after training: restored, the log is
    the finished job's, byte for byte, with that record once."""
    from wordorder.train.runner import run_training

    files, spm = toy_corpus(tmp_path)
    output, state = tmp_path / "out" / "best.pt", tmp_path / "resume" / "state.pt"

    def job() -> dict:
        return run_training(
            files["train.src"],
            files["train.tgt"],
            files["dev.src"],
            files["dev.ref"],
            spm,
            {"preset": "tiny"},
            {**OPTIONS, "average_last": 0, "max_steps": 4, "batch_tokens": 200},
            seed=1,
            threads=1,
            output=output,
            state=state,
        )

    summary = job()
    log = (output.parent / "metrics.jsonl").read_bytes()
    assert json.loads(log.splitlines()[-1]) == {"summary": summary}
    assert summary["params"] > 1000  # read by the systems table instead of the checkpoint
    delete_outputs(output.parent)
    capsys.readouterr()
    assert job() == summary
    assert "training had already finished at update 4" in capsys.readouterr().out
    # the summary record once, not twice
    assert (output.parent / "metrics.jsonl").read_bytes() == log


def test_the_data_digest_sees_every_id_of_every_column():
    """Resume key and finished record stand for all the data: one id in the middle changed (same
    lengths), a feature value, a feature's name, a dev id, or a token moved from source to target
    (same id sequence) each give another digest."""
    pairs = [([4 + i % 7, 5], [6, 4 + i % 5]) for i in range(1000)]
    feats = {"pos": [[1, 2]] * 1000}
    dev = [[[4, 5]] * 8, [[6, 7]] * 8]
    key = data_digest(pairs, feats, dev)
    assert data_digest([(list(s), list(t)) for s, t in pairs], dict(feats), list(dev)) == key
    changed = [*pairs[:500], ([7, 5], [7, 4]), *pairs[501:]]
    moved = [*pairs[:500], ([7, 5, 6], [4]), *pairs[501:]]
    assert pairs[500] == ([7, 5], [6, 4]) and len(set(map(str, [pairs, changed, moved]))) == 3
    others = [
        data_digest(changed, feats, dev),
        data_digest(moved, feats, dev),
        data_digest(pairs, {"pos": [[1, 2]] * 500 + [[1, 3]] + [[1, 2]] * 499}, dev),
        data_digest(pairs, {"dep": [[1, 2]] * 1000}, dev),
        data_digest(pairs, feats, [[[4, 5]] * 7 + [[4, 6]], [[6, 7]] * 8]),
        data_digest(pairs, feats, dev[:1]),
        data_digest(pairs, None, dev),
    ]
    assert key not in others and len(set(others)) == len(others)


def test_a_state_saved_for_other_data_is_not_resumed(tmp_path, capsys):
    """A state written before the data changed (one dev source id: same sizes, which a sampled
    fingerprint misses) is not resumed from: the rerun says so and trains from scratch, to the
    weights of a run that never had the old state."""
    import signal

    from wordorder.train.resume import TrainingInterrupted

    def dev_score(hyps):  # SIGTERM inside the first evaluation: the state of update 4 is saved
        os.kill(os.getpid(), signal.SIGTERM)
        return 0.0

    torch.manual_seed(0)
    model = build_model({"preset": "tiny"}, 16)
    state = tmp_path / "resume" / "state.pt"
    with pytest.raises(TrainingInterrupted, match="after update 4"):
        train(
            model,
            PAIRS,
            DEV,
            dev_score,
            TrainOptions(**OPTIONS),
            tmp_path / "out",
            state_path=state,
        )
    assert torch.load(state, weights_only=True)["progress"]["step"] == 4
    capsys.readouterr()

    dev = [list(s) for s in DEV]
    dev[3][0] = 4 + (dev[3][0] - 3) % 5  # another id, same length

    def fresh(root: Path) -> dict:
        torch.manual_seed(0)
        model = build_model({"preset": "tiny"}, 16)
        opts = TrainOptions(**OPTIONS)
        path = root / "resume" / "state.pt"
        return train(model, PAIRS, dev, lambda h: 0.0, opts, root / "out", state_path=path)

    assert fresh(tmp_path)["steps"] == 8
    said = capsys.readouterr().out
    assert f"not resuming {state}: it was written for other training options or data" in said
    assert "resuming from" not in said
    fresh(tmp_path / "clean")
    weights = [
        torch.load(d / "out" / "last.pt", weights_only=True)["state_dict"]
        for d in (tmp_path, tmp_path / "clean")
    ]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_an_interrupted_training_leaves_no_declared_output(tmp_path):
    """SIGTERM during an evaluation (as Ctrl-C reaches Snakemake's jobs): the evaluation ends and
    writes best.pt, the state is saved, then best.pt and metrics.jsonl are withdrawn, so that no
    unfinished model passes for the job's output; the rerun continues and finishes."""
    import signal

    from wordorder.train.resume import TrainingInterrupted

    torch.manual_seed(0)
    model = build_model({"preset": "tiny"}, 16)
    calls = []

    def dev_score(hyps):
        calls.append(len(hyps))
        if len(calls) == 2:  # inside the second evaluation (update 6), seen after the next update
            os.kill(os.getpid(), signal.SIGTERM)
        return float(len(calls))

    out, state = tmp_path / "out", tmp_path / "resume" / "state.pt"
    with pytest.raises(TrainingInterrupted, match="after update 7"):
        train(model, PAIRS, DEV, dev_score, TrainOptions(**OPTIONS), out, state_path=state)
    # the evaluation did write its checkpoints
    assert state.is_file() and (out / "last.pt").is_file()
    assert not (out / "best.pt").exists() and not (out / "metrics.jsonl").exists()
    assert run(tmp_path)["steps"] == 8 and (out / "best.pt").is_file()


def test_a_best_checkpoint_snakemake_deleted_before_the_state_was_saved_survives(tmp_path):
    """Stopped, Snakemake deletes a killed job's outputs while the job still saves its state:
    best.pt can be gone before the snapshot. The best of update 3 must still come back on
    resume, also when no later evaluation beats it (before the fix the resumed run ended with
    no best checkpoint at all: "training ended without a best checkpoint")."""
    import signal

    from wordorder.train.resume import TrainingInterrupted

    out, state = tmp_path / "out", tmp_path / "resume" / "state.pt"
    opts = TrainOptions(**{**OPTIONS, "average_last": 0})
    calls = []

    def dev_score(hyps):  # best at the first evaluation (update 3), never again
        calls.append(len(hyps))
        if len(calls) == 2:  # update 6: Snakemake removes best.pt, then the kill arrives
            (out / "best.pt").unlink()
            os.kill(os.getpid(), signal.SIGTERM)
        return 10.0 if len(calls) == 1 else 0.0

    torch.manual_seed(0)
    model = build_model({"preset": "tiny"}, 16)
    with pytest.raises(TrainingInterrupted, match="after update 7"):
        train(model, PAIRS, DEV, dev_score, opts, out, state_path=state)
    assert not (out / "best.pt").exists()
    torch.manual_seed(0)
    model = build_model({"preset": "tiny"}, 16)
    summary = train(model, PAIRS, DEV, lambda h: 0.0, opts, out, state_path=state)
    assert summary["steps"] == 8 and summary["best_step"] == 3
    best = torch.load(out / "best.pt", weights_only=True)
    assert best["meta"]["step"] == 3 and best["meta"]["best"] is True
    # finished: the live link is gone with the step folders, the final outputs are kept
    assert sorted(p.name for p in (tmp_path / "resume" / "state.pt.kept").iterdir()) == ["final"]


def test_best_pt_deleted_while_an_evaluation_writes_it(tmp_path, monkeypatch):
    """Snakemake stopping the job deletes best.pt at any moment, here right after each
    new best checkpoint is written (the race seen in CI 2026-11-29: the evaluation then linked
    a best.pt that was gone and died with FileNotFoundError instead of saving its state). The
    new best is written beyond Snakemake's reach first, so the run goes on and ends whole."""
    from wordorder.train import outputs

    written = outputs.save_checkpoint

    def save_then_lose_best(path, *args, **kwargs):
        written(path, *args, **kwargs)
        if Path(path).name == "best.pt":
            (tmp_path / "out" / "best.pt").unlink(missing_ok=True)

    monkeypatch.setattr(outputs, "save_checkpoint", save_then_lose_best)
    summary = run(tmp_path, average_last=0)  # averaging rewrites best.pt at the end, itself
    assert summary["steps"] == 8 and summary["stop_reason"] == "max_steps"
    assert torch.load(tmp_path / "out" / "best.pt", weights_only=False)["meta"]["best"]
