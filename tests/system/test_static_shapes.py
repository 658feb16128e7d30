"""Static shapes (the batches of ``train.cuda_graphs``) leave training unchanged.

Padding a batch to its static shape adds PAD columns and all-PAD rows, which the attention
masks and the loss ignore: 200 updates on padded batches give the loss curve of the same
batches unpadded, to float noise (dropout off, so both runs draw nothing at random). And the
padding the shapes add is measured on a corpus of real sentence lengths.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import torch
from reordering_task import VOCAB, make_data
from test_rnn_variants_learn_reordering import VARIANTS as RNN_VARIANTS
from test_rnn_variants_learn_reordering import features as rnn_features

from wordorder.device import cuda_paths
from wordorder.model_io.batching import collate, make_batches, round_width, static_shape
from wordorder.models import build_model
from wordorder.train.options import TrainOptions
from wordorder.train.routes import route_from_options
from wordorder.train.update import batch_loss, make_optimizer

CPU = torch.device("cpu")

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def loss_curve(pairs, batches, shaped: bool, budget: int, steps: int) -> list[float]:
    """Per-update training loss of a tiny Transformer in float64 through CUDA's code paths (the
    path the graphs capture); ``shaped``: every batch padded to its static shape."""
    torch.manual_seed(1)
    model = build_model({"preset": "tiny", "dropout": 0.0}, VOCAB).train().double()
    opts = TrainOptions(device="cpu", lr=2e-3, warmup=50, label_smoothing=0.1)
    route = route_from_options("eager", model, make_optimizer(model, opts), opts, CPU)
    curve = []
    with cuda_paths():
        for idx in batches:
            shape = static_shape(pairs, idx, budget, steps) if shaped else None
            batch = collate(pairs, idx, shape=shape)
            loss, _ = route.update([batch], batch.target_tokens)
            curve.append(float(loss) / batch.target_tokens)
    return curve


def test_loss_curve_with_static_shapes_equals_the_unpadded_one():
    """200 updates in float64: the curves agree to float64 noise (measured 8.5e-15 at most).

    In float32 the two runs drift apart by up to a few per cent after ~100 updates, as any two
    runs that differ in summation order do: Adam turns the rounding noise of gradients that are
    truly 0 (the key bias, whose gradient softmax cancels) into full-size steps. Float64 shows
    that the padding itself changes nothing."""
    pairs = make_data(4000, 10, seed=3)[0]
    # The task's sentences (3-7 words) sit on the ladder's exact rungs at 4 steps or more, so 1
    # step (powers of two) makes the shapes pad nearly every batch: widths 5-7 become 8.
    budget, steps = 600, 1
    batches = (make_batches(pairs, budget, seed=1, width_steps=steps) * 4)[:200]
    plain = loss_curve(pairs, batches, False, budget, steps)
    shaped = loss_curve(pairs, batches, True, budget, steps)
    padded = sum(
        collate(pairs, b, shape=static_shape(pairs, b, budget, steps)).src.numel()
        > collate(pairs, b).src.numel()
        for b in batches
    )
    assert padded > 150
    assert len(plain) == 200 and plain[-1] < 0.3 * plain[0]  # it learns
    worst = max(abs(a - b) / a for a, b in zip(plain, shaped))
    print(
        f"\n200 updates: loss {plain[0]:.3f} -> {plain[-1]:.3f}, largest relative gap {worst:.1e}"
    )
    assert worst < 1e-10


@pytest.mark.parametrize("name", sorted(RNN_VARIANTS))
def test_rnn_gradients_with_static_shapes_equal_the_unpadded_ones(name):
    """Every RNN variant, in float64 through CUDA's code paths: a batch padded to its static
    shape (PAD columns and 37 all-PAD rows) gives the loss and gradients of the same batch
    unpadded. An all-PAD row has no position to attend to: with −inf masks its softmax was NaN,
    which reached every gradient through the masked loss (0 · NaN) and, in SDAtt, a gather's
    index (out of bounds on the GPU, 2026-11-29); with relation layers (rnmt) the masked batch
    norm also mixed float64 and float32."""
    pairs = make_data(400, 2, seed=5)[0]
    batch_ids = make_batches(pairs, 1500, seed=1, width_steps=4)[1]
    shape = static_shape(pairs, batch_ids, 1500, 4)
    assert shape[0] > len(batch_ids)  # rows of padding only
    torch.manual_seed(1)
    options = {**RNN_VARIANTS[name], "output_dropout": 0.0}  # RNMT's: nothing drawn at random
    model = build_model({"preset": "rnn_tiny", "dropout": 0.0, **options}, VOCAB)
    model = model.double().train()
    feats = rnn_features([s for s, _ in pairs]) if model.options.syntax_tree() else None

    def loss_and_grads(shaped: bool) -> tuple[torch.Tensor, list[torch.Tensor]]:
        model.zero_grad(set_to_none=True)
        batch = collate(pairs, batch_ids, feats, shape=shape if shaped else None)
        with cuda_paths():
            loss, _ = batch_loss(model, batch, 0.1, None)
            loss.backward()
        return loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]

    loss, grads = loss_and_grads(False)
    loss_s, grads_s = loss_and_grads(True)
    torch.testing.assert_close(loss_s, loss)
    assert len(grads_s) == len(grads)
    for g_s, g in zip(grads_s, grads):
        torch.testing.assert_close(g_s, g)


@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not here")
def test_padding_of_static_shapes_on_real_lengths():
    """Padded positions (source + target) of the static shapes against today's batches of the
    same budget, on Tanaka ja->en (words, 8 on average): ≤ 5 % more at 8 steps per doubling,
    while a fixed multiple of 8 adds about a third."""
    folder = DATA / "ja-en_small_parallel_enja"
    read = lambda name: [line.split() for line in gzip.open(folder / name, "rt")]  # noqa: E731
    pairs = list(zip(read("train.ja.gz"), read("train.en.gz")))
    budget = 4096

    def cells(steps: int, multiple: int = 1) -> tuple[int, int]:
        up = lambda w: round_width(-(-w // multiple) * multiple, steps)  # noqa: E731
        lengths = [(len(s) + 1, len(t) + 1) for s, t in pairs]
        # a fixed multiple: the same batcher with widths rounded to it
        widened = [([0] * (up(s) - 1), [0] * (up(t) - 1)) for s, t in lengths]
        total, shapes = 0, set()
        for b in make_batches(widened, budget, seed=1, width_steps=steps):
            shape = static_shape(widened, b, budget, steps) if steps or multiple > 1 else None
            rows, src, tgt = shape or (
                len(b),
                max(lengths[i][0] for i in b),
                max(lengths[i][1] for i in b),
            )
            total += rows * (src + tgt)
            shapes.add((rows, src, tgt))
        return total, len(shapes)

    today, _ = cells(0)
    results = {
        label: cells(*args) for label, args in {"8 steps": (8,), "multiple 8": (0, 8)}.items()
    }
    print(
        f"\ntoday: {today} padded positions; "
        + "; ".join(
            f"{k}: +{100 * (c / today - 1):.1f} %, {n} shapes" for k, (c, n) in results.items()
        )
    )
    assert results["8 steps"][0] <= 1.05 * today
    assert results["multiple 8"][0] > 1.2 * today
