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
def test_a_base_update_launches_at_most_1500_kernels_and_never_waits_for_the_device(amp):
    """Forward, backward, clipping and fused Adam of a Transformer-base update: ≤ 1,500 kernels
    (2,612 operators, 1,225 kernels before the fused QKV projection; one host sync in the loss
    under fp32 before the loss took the logits path on CUDA), no operator that reads a value
    back (.item(), nonzero...). The total with metadata-only views is pinned too, so that a
    per-head or per-parameter loop cannot creep back in."""
    count = count_update(base_structure(), batch(), amp, label_smoothing=0.1, clip_norm=1.0)
    print(count.summary())
    assert count.syncs == 0, count.summary()
    assert count.launches <= 1500, count.summary()
    assert count.total <= 2400, count.summary()


def test_the_count_does_not_grow_with_heads_or_width():
    """No loop over heads or positions: the same operators at 4 or 16 heads and any width."""
    counts = {
        (heads, d): count_update(
            base_structure(heads=heads, d_model=d, encoder_layers=2, decoder_layers=2),
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
