"""Checkpoints: round trip, weights-only loading, atomic files; and the training loop that
writes them (a few steps on a toy task)."""

from __future__ import annotations

import json
import math

import pytest
import torch

from wordorder.errors import WordorderError
from wordorder.model_io.checkpoint import load_model, save_checkpoint
from wordorder.models import build_model
from wordorder.specials import BOS_ID, EOS_ID
from wordorder.train.loop import TrainOptions, train


def test_save_load_gives_identical_outputs(tmp_path):
    torch.manual_seed(0)
    model = build_model({"preset": "tiny", "norm": "pre"}, 50).eval()
    path = tmp_path / "sub" / "model.pt"
    save_checkpoint(
        path,
        model,
        model.options.to_dict(),
        {"step": 7, "dev_bleu": 12.5, "spm": tmp_path / "x.model"},
    )
    assert [p.name for p in path.parent.iterdir()] == ["model.pt"]  # no temporary file left
    loaded, meta = load_model(path, "cpu")
    assert not loaded.training
    src = torch.tensor([[5, 6, 7, EOS_ID], [8, 9, EOS_ID, 0]])
    tgt = torch.tensor([[BOS_ID, 10, 11], [BOS_ID, 12, 0]])
    with torch.no_grad():
        assert torch.equal(model(src, tgt), loaded(src, tgt))
    assert (
        meta["step"] == 7 and meta["dev_bleu"] == 12.5 and meta["spm"] == str(tmp_path / "x.model")
    )
    assert meta["vocab_size"] == 50 and meta["options"]["norm"] == "pre"
    assert loaded.src_embed.weight is loaded.tgt_embed.weight  # tying survives the round trip


def test_file_is_plain_and_loads_weights_only(tmp_path):
    model = build_model({"preset": "tiny"}, 30)
    path = tmp_path / "m.pt"
    save_checkpoint(
        path, model, model.options.to_dict(), {"variant": {"preset": "tiny"}, "betas": (0.9, 0.98)}
    )
    obj = torch.load(path, weights_only=True)
    assert set(obj) == {"format", "options", "vocab_size", "state_dict", "meta"}
    assert obj["meta"]["betas"] == [0.9, 0.98]
    assert all(isinstance(v, torch.Tensor) for v in obj["state_dict"].values())


def test_missing_or_broken_checkpoint_is_a_user_error(tmp_path):
    with pytest.raises(WordorderError, match="not found"):
        load_model(tmp_path / "nope.pt")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(WordorderError):
        load_model(bad)
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, other)
    with pytest.raises(WordorderError, match="not a wordorder checkpoint"):
        load_model(other)


def test_train_writes_checkpoints_and_metrics(tmp_path):
    torch.manual_seed(0)
    pairs = [([4 + i % 5, 4 + (i * 3) % 5], [10 + (i * 3) % 5, 10 + i % 5]) for i in range(64)]
    dev = [p[0] for p in pairs[:8]]
    model = build_model({"preset": "tiny"}, 16)
    scores = []

    def dev_score(hyps):
        assert len(hyps) == 8 and all(isinstance(h, list) for h in hyps)
        scores.append(float(len(scores)))  # improves every time
        return scores[-1]

    opts = TrainOptions.from_dict(
        {
            "device": "cpu",
            "batch_tokens": 60,
            "warmup": 2,
            "max_steps": 7,
            "eval_every": 3,
            "log_every": 2,
            "accum_steps": 2,
            "clip_norm": 1.0,
            "betas": [0.9, 0.98],
        }
    )
    summary = train(
        model,
        pairs,
        dev,
        dev_score,
        opts,
        tmp_path,
        {"variant": "x"},
        dev_tgt=[p[1] for p in pairs[:8]],
    )
    assert summary["steps"] == 7 and summary["best_step"] == 7 and summary["best_dev_bleu"] == 2.0
    assert summary["stop_reason"] == "max_steps" and summary["train_tokens"] > 0
    lines = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    evals = [x for x in lines if "dev_bleu" in x]
    assert [x["step"] for x in evals] == [3, 6, 7]  # and always at the end
    assert all(x["best"] for x in evals) and all(x["dev_loss"] > 0 for x in evals)
    logs = [x for x in lines if "train_loss" in x]
    assert [x["step"] for x in logs] == [2, 4, 6]
    assert {"epoch", "lr", "tokens_per_s", "elapsed_s"} <= set(logs[0])
    best, meta = load_model(tmp_path / "best.pt")
    assert meta["step"] == 7 and meta["variant"] == "x" and meta["dev_bleu"] == 2.0
    assert (tmp_path / "last.pt").is_file()


@pytest.mark.parametrize("best_by", ["bleu", "perplexity"])
def test_best_checkpoint_follows_best_by(tmp_path, best_by):
    """A dev BLEU that only falls (the first evaluation has the highest) and a dev perplexity that
    falls while the model learns: best.pt is the evaluation the option names."""
    torch.manual_seed(0)
    pairs = [([4 + i % 5, 4 + (i * 3) % 5], [10 + (i * 3) % 5, 10 + i % 5]) for i in range(64)]
    model = build_model({"preset": "tiny"}, 16)
    calls = []

    def falling_bleu(hyps):
        calls.append(1)
        return 10.0 - len(calls)

    opts = TrainOptions.from_dict(
        {
            "device": "cpu",
            "batch_tokens": 60,
            "warmup": 2,
            "lr": 3e-3,
            "max_steps": 9,
            "eval_every": 3,
            "log_every": 3,
            "best_by": best_by,
        }
    )
    summary = train(
        model,
        pairs,
        [p[0] for p in pairs[:8]],
        falling_bleu,
        opts,
        tmp_path,
        dev_tgt=[p[1] for p in pairs[:8]],
    )
    evals = [
        x
        for x in map(json.loads, (tmp_path / "metrics.jsonl").read_text().splitlines())
        if "dev_bleu" in x
    ]
    assert [x["step"] for x in evals] == [3, 6, 9]
    assert all(abs(x["dev_ppl"] - math.exp(x["dev_loss"])) < 1e-3 * x["dev_ppl"] for x in evals)
    by_ppl = min(evals, key=lambda x: x["dev_loss"])["step"]
    assert by_ppl != 3  # the two criteria disagree here, or the test would prove nothing
    expected = 3 if best_by == "bleu" else by_ppl
    assert (
        summary["best_step"] == expected and load_model(tmp_path / "best.pt")[1]["step"] == expected
    )
    assert [x["step"] for x in evals if x["best"]][-1] == expected
    with pytest.raises(WordorderError, match="best_by"):
        TrainOptions.from_dict({"best_by": "loss"})


def test_patience_and_unknown_train_options(tmp_path):
    pairs = [([5, 6], [7, 8])] * 10
    model = build_model({"preset": "tiny"}, 10)
    opts = TrainOptions(
        device="cpu", batch_tokens=30, max_steps=100, eval_every=1, patience=2, log_every=100
    )
    summary = train(model, pairs, [[5, 6]], lambda hyps: 1.0, opts, tmp_path)
    assert (
        summary["stop_reason"] == "patience" and summary["steps"] == 3 and summary["best_step"] == 1
    )
    with pytest.raises(WordorderError) as e:
        TrainOptions.from_dict({"learning_rate": 1e-3})
    assert "learning_rate" in str(e.value) and "lr" in str(e.value)


@pytest.mark.parametrize("min_delta, steps", [(0.0, 6), (0.3, 4)])
def test_min_delta_stops_a_creeping_curve(tmp_path, min_delta, steps):
    """Dev BLEU 1.0, 1.5, 1.6, 1.7, ...: every evaluation is a new best, but after the second
    none gains 0.3 on the score patience counts from, so patience 2 stops at the fourth;
    best.pt still follows each gain."""
    pairs = [([5, 6], [7, 8])] * 10
    model = build_model({"preset": "tiny"}, 10)
    curve = iter([1.0, 1.5, 1.6, 1.7, 1.8, 1.8])
    opts = TrainOptions(
        device="cpu",
        batch_tokens=30,
        max_steps=6,
        eval_every=1,
        patience=2,
        log_every=100,
        min_delta=min_delta,
    )
    summary = train(model, pairs, [[5, 6]], lambda hyps: next(curve), opts, tmp_path)
    assert summary["steps"] == steps and summary["stop_reason"] == (
        "patience" if min_delta else "max_steps"
    )
    assert summary["best_step"] == (4 if min_delta else 5)


@pytest.mark.parametrize(
    "target, steps, reason",
    [(1.7, 4, "target_bleu"), (1.6, 3, "target_bleu"), (9.0, 6, "max_steps")],
)
def test_target_bleu_stops_at_the_first_evaluation_that_reaches_it(tmp_path, target, steps, reason):
    """Dev BLEU 1.0, 1.5, 1.6, 1.7, ...: target 1.7 stops at the fourth evaluation, 1.6 (equal
    counts) at the third, an unreached one not at all."""
    pairs = [([5, 6], [7, 8])] * 10
    model = build_model({"preset": "tiny"}, 10)
    curve = iter([1.0, 1.5, 1.6, 1.7, 1.8, 1.8])
    opts = TrainOptions(
        device="cpu", batch_tokens=30, max_steps=6, eval_every=1, log_every=100, target_bleu=target
    )
    summary = train(model, pairs, [[5, 6]], lambda hyps: next(curve), opts, tmp_path)
    assert summary["steps"] == steps and summary["stop_reason"] == reason
    assert TrainOptions.from_dict({"target_bleu": 25.0}).target_bleu == 25.0


def test_average_of_checkpoints_is_the_mean_of_their_weights(tmp_path):
    from wordorder.model_io.checkpoint import average_checkpoints

    models = []
    for k in range(3):
        torch.manual_seed(k)
        models.append(build_model({"preset": "tiny"}, 30))
        save_checkpoint(tmp_path / f"{k}.pt", models[-1], models[-1].options.to_dict(), {})
    avg = average_checkpoints([tmp_path / f"{k}.pt" for k in range(3)])
    name = "encoder.0.ffn.fc1.weight"
    expected = sum(m.state_dict()[name] for m in models) / 3
    torch.testing.assert_close(avg[name], expected)
    other = build_model({"preset": "tiny", "d_ff": 64}, 30)
    save_checkpoint(tmp_path / "other.pt", other, other.options.to_dict(), {})
    with pytest.raises(WordorderError, match="different models cannot be averaged"):
        average_checkpoints([tmp_path / "0.pt", tmp_path / "other.pt"])


def test_train_averages_the_last_evaluations(tmp_path):
    from wordorder.model_io.checkpoint import average_checkpoints

    torch.manual_seed(0)
    pairs = [([4 + i % 5, 4 + (i * 3) % 5], [10 + (i * 3) % 5, 10 + i % 5]) for i in range(64)]
    dev = [p[0] for p in pairs[:8]]
    model = build_model({"preset": "tiny"}, 16)
    opts = TrainOptions(
        device="cpu",
        batch_tokens=60,
        warmup=2,
        max_steps=9,
        eval_every=2,
        log_every=3,
        average_last=3,
    )
    train(model, pairs, dev, lambda h: 1.0, opts, tmp_path)
    kept = sorted(p.name for p in (tmp_path / "history").iterdir())
    assert kept == ["step6.pt", "step8.pt", "step9.pt"]  # evaluations at 2, 4, 6, 8 and the end
    averaged = torch.load(tmp_path / "best.pt", weights_only=True)
    assert averaged["meta"]["averaged_last"] == 3 and (tmp_path / "best_single.pt").is_file()
    expected = average_checkpoints([tmp_path / "history" / k for k in kept])
    assert all(torch.equal(averaged["state_dict"][k], expected[k]) for k in expected)
    lines = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert lines[-1]["averaged_last"] == 3 and lines[-1]["dev_bleu"] == 1.0


def test_eval_batch_tokens_changes_the_batches_not_the_scores(monkeypatch):
    """Dev decoding and dev loss in larger batches (``eval_batch_tokens``, for GPUs, where each
    decoding step costs kernel launches): the same hypotheses and the same loss as in training's
    batches; a batch so small it holds one sentence decodes them one by one."""
    import wordorder.train.state as state
    from wordorder.train.state import DevSet, score_dev

    budgets: list[int] = []
    real = state.translate_batches

    def spy(*args, **kw):  # the real decoder, with the batch budget it was given noted
        budgets.append(kw["batch_tokens"])
        return real(*args, **kw)

    monkeypatch.setattr(state, "translate_batches", spy)
    torch.manual_seed(3)
    model = build_model({"preset": "tiny", "dropout": 0.0}, 20).eval()
    g = torch.Generator().manual_seed(4)
    src = [
        torch.randint(4, 20, (int(n),), generator=g).tolist()
        for n in torch.randint(2, 9, (30,), generator=g)
    ]
    tgt = [
        torch.randint(4, 20, (int(n),), generator=g).tolist()
        for n in torch.randint(2, 9, (30,), generator=g)
    ]
    seen: list[list[list[int]]] = []

    def score(hyps):
        seen.append([list(h) for h in hyps])
        return float(sum(map(len, hyps)))

    dev = DevSet(src, score, tgt)
    cpu = torch.device("cpu")
    results = [
        score_dev(model, dev, TrainOptions(batch_tokens=12, eval_batch_tokens=e), cpu, None)
        for e in (None, 1, 400)
    ]
    assert budgets == [12, 1, 400]
    assert seen[0] == seen[1] == seen[2] and len(seen[0]) == 30
    assert results[0].bleu == results[1].bleu == results[2].bleu
    assert results[0].nll == pytest.approx(results[1].nll, rel=1e-5)
    assert results[0].nll == pytest.approx(results[2].nll, rel=1e-5)
    for bad in (0, -5, 2.5, "big"):
        with pytest.raises(WordorderError, match="eval_batch_tokens"):
            TrainOptions.from_dict({"eval_batch_tokens": bad})
