"""Helpers of the training-job tests: a toy training run on a tiny copy task (its options, PAIRS,
DEV) and a toy corpus for the train step. Shared here rather than imported from a test module
(issue 47)."""

from __future__ import annotations

from pathlib import Path

import torch

from wordorder.models import build_model
from wordorder.train.loop import TrainOptions, train

PAIRS = [([4 + i % 5, 4 + (i * 3) % 5], [10 + (i * 3) % 5, 10 + i % 5]) for i in range(64)]
DEV = [p[0] for p in PAIRS[:8]]
OPTIONS = dict(
    device="cpu",
    batch_tokens=60,
    warmup=2,
    max_steps=8,
    eval_every=3,
    log_every=2,
    checkpoint_every=3,
    average_last=2,
    threads=1,
)


def run(tmp_path: Path, scores: list | None = None, **changes) -> dict:
    """One training job of the toy task (``scores``: collects the dev evaluations)."""
    torch.manual_seed(0)
    model = build_model({"preset": "tiny"}, 16)
    calls = scores if scores is not None else []

    def dev_score(hyps):  # a function of the hypotheses, so that a resumed run scores as the first
        calls.append(len(hyps))
        return float(sum(a == b for h, (_, t) in zip(hyps, PAIRS) for a, b in zip(h, t)))

    opts = TrainOptions(**{**OPTIONS, **changes})
    return train(
        model,
        PAIRS,
        DEV,
        dev_score,
        opts,
        tmp_path / "out",
        state_path=tmp_path / "resume" / "state.pt",
    )


def toy_corpus(tmp_path: Path) -> tuple[dict[str, Path], Path]:
    """Files of a toy reversal task (train.src/tgt, dev.src/ref) and a joint 40-piece subword
    model, for tests of the training step itself."""
    from wordorder.text.subword_train import train_sentencepiece

    words = "a b c d e f g h".split()
    src = [" ".join(words[(i + k) % 8] for k in range(3)) for i in range(40)]
    tgt = [" ".join(reversed(line.split())) for line in src]
    files = {}
    for name, lines in (
        ("train.src", src),
        ("train.tgt", tgt),
        ("dev.src", src[:6]),
        ("dev.ref", tgt[:6]),
    ):
        files[name] = tmp_path / name
        files[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return files, train_sentencepiece(
        [files["train.src"], files["train.tgt"]], tmp_path / "spm", vocab_size=40
    )
