"""``train.compile``: the loss through ``torch.compile`` (inductor on the CPU) equals the eager
loss, and so do the gradients, for a model of each family. The Transformer on batches of two
shapes: one compilation with dynamic shapes serves both (measured: 23 s, then 1.9 s for the
second shape). The RNN on one, of one-word targets: its decoder loops over the target positions
in Python, which the compiler unrolls, so every new target length compiles anew and the time
grows with it (2 decoder steps: 36 s in a first run on the project's 2-core machine; 4 steps:
75 s in a CI run). The compile times are printed (``-s``)."""

from __future__ import annotations

import copy
import time

import pytest
import torch
from test_learns_reordering import VOCAB, make_data

from wordorder.model_io.batching import collate, make_batches
from wordorder.models import build_model
from wordorder.models.registry import FAMILIES
from wordorder.train.update import loss_function

PRESETS = {"transformer": "tiny", "rnn": "rnn_tiny"}


def test_every_family_is_covered():
    assert set(PRESETS) == set(FAMILIES)


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(PRESETS))
def test_compiled_loss_and_gradients_equal_eager(family):
    torch.manual_seed(1)
    model = build_model({"preset": PRESETS[family], "dropout": 0.0}, VOCAB).train()
    compiled_model = copy.deepcopy(model)
    eager, compiled = loss_function(0.1, None), loss_function(0.1, None, compile_it=True)
    pairs = make_data(300, 2, seed=5)[0]
    if family == "rnn":
        pairs = [(s, t[:1]) for s, t in pairs]
    batches = make_batches(pairs, 300, seed=1, shuffle=False)
    two = [collate(pairs, batches[0]), collate(pairs, batches[-1])]
    assert two[0].src.shape != two[1].src.shape
    for i, batch in enumerate(two if family == "transformer" else two[:1]):
        start = time.perf_counter()
        loss, nll = compiled(compiled_model, batch)
        loss.backward()
        seconds = time.perf_counter() - start
        ref_loss, ref_nll = eager(model, batch)
        ref_loss.backward()
        print(f"\n{family}, batch {tuple(batch.src.shape)}: compiled call {seconds:.1f} s")
        torch.testing.assert_close(loss.detach(), ref_loss.detach(), rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(nll, ref_nll, rtol=1e-5, atol=1e-4)
        for (name, p), (_, q) in zip(model.named_parameters(), compiled_model.named_parameters()):
            assert (p.grad is None) == (q.grad is None), name
            if p.grad is not None:
                error = float((q.grad - p.grad).norm() / (p.grad.norm() + 1e-12))
                assert error < 1e-3, f"{name} (batch {i}): gradient off by {error:.1e} in norm"
