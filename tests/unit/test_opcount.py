"""Operators per training update (wordorder.train.opcount): the host's share of a GPU update.

Counted through CUDA's code paths on the CPU, under bf16 autocast, for the Transformer-base
structure (6+6 layers, 8 heads) at a narrow width: the count depends on the structure only.
"""

from __future__ import annotations

import random

import pytest
import torch

from wordorder.model_io.batching import collate, make_batches
from wordorder.models import build_model
from wordorder.train.opcount import count_ops, count_update

VOCAB = 300


def batch():
    rng = random.Random(0)
    pairs = [
        (
            [rng.randrange(4, VOCAB) for _ in range(rng.randint(5, 12))],
            [rng.randrange(4, VOCAB) for _ in range(rng.randint(5, 12))],
        )
        for _ in range(64)
    ]
    return collate(pairs, make_batches(pairs, 256, seed=1)[0])


def base_structure(**extra):
    torch.manual_seed(0)
    return build_model({"preset": "base", "d_model": 64, "d_ff": 128, **extra}, VOCAB).train()


@pytest.mark.parametrize("amp", [torch.bfloat16, None], ids=["bf16", "fp32"])
def test_a_base_update_dispatches_at_most_1500_operators_and_never_waits_for_the_device(amp):
    """Forward, backward, clipping and fused Adam of a Transformer-base update, as the trainer
    runs it (parameters stacked by shape after the first update): ≤ 1,500 ATen operators, views
    included (bf16: 2,612 before the fused QKV projection, 2,351 before the stacks, the token
    rows and dropout as CUDA dispatches it; 1,487 after), and no operator that reads a value
    back (.item(), nonzero...)."""
    count = count_update(base_structure(), batch(), amp, label_smoothing=0.1, clip_norm=1.0)
    print(count.summary())
    assert count.syncs == 0, count.summary()
    assert count.total <= 1500, count.summary()


def test_stacked_parameters_save_the_per_parameter_operators():
    """Per parameter, unstacked: an accumulation (detach) and, under bf16, two casts (the
    weight forward, its gradient backward); stacked, a few operators per stack instead."""
    counts = {
        stack: count_update(base_structure(), batch(), torch.bfloat16, stack=stack)
        for stack in (False, True)
    }
    params = len(list(base_structure().parameters()))
    saved = counts[False].total - counts[True].total
    assert saved >= 2 * params, (saved, params)
    assert counts[True].by_op["_to_copy"] < counts[False].by_op["_to_copy"] - params
    assert counts[True].by_op["detach"] < counts[False].by_op["detach"] - 0.9 * params


def test_the_count_does_not_grow_with_heads_or_width():
    """No loop over heads or positions: the same operators at 4 or 16 heads and any width
    (d_ff = 2d: parameters of equal shape share a stack, so d_ff = d would count fewer)."""
    counts = {
        (heads, d): count_update(
            base_structure(heads=heads, d_model=d, d_ff=2 * d, encoder_layers=2, decoder_layers=2),
            batch(),
            torch.bfloat16,
        ).total
        for heads, d in [(4, 64), (16, 64), (4, 128)]
    }
    assert len(set(counts.values())) == 1, counts


def test_the_counter_sees_host_syncs_and_views():
    x = torch.arange(6.0)
    count = count_ops(lambda: (x.sum().item(), x.view(2, 3).t(), x.nonzero()))
    assert count.syncs == 2 and count.views == 2
    assert count.by_op["_local_scalar_dense"] == 1
