"""Packed pairs (wordorder.model_io.packed) give exactly the batches of ``collate``."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.model_io.batching import collate, make_batches, static_shape
from wordorder.model_io.packed import PackedPairs

sentence = st.lists(st.integers(4, 99), min_size=0, max_size=30)
corpus = st.lists(st.tuples(sentence, sentence), min_size=1, max_size=60)


def features(pairs):
    """One of each kind of feature collate treats apart (EOS values): order, word, head, tags."""
    return {
        "order": [list(reversed(range(len(s)))) for s, _ in pairs],
        "word": [[i // 2 for i in range(len(s))] for s, _ in pairs],
        "head": [[(i + 1) % 3 for i in range(len(s))] for s, _ in pairs],
        "pos": [[5 + i % 4 for i in range(len(s))] for s, _ in pairs],
    }


def same(a, b):
    assert torch.equal(a.src, b.src) and torch.equal(a.tgt_in, b.tgt_in)
    assert torch.equal(a.tgt_out, b.tgt_out)
    assert (a.feats is None) == (b.feats is None)
    for name in a.feats or {}:
        assert torch.equal(a.feats[name], b.feats[name]), name


@settings(max_examples=150, deadline=None)
@given(
    pairs=corpus,
    budget=st.integers(1, 300),
    steps=st.sampled_from([0, 4, 8]),
    with_feats=st.booleans(),
)
def test_batches_equal_collate(pairs, budget, steps, with_feats):
    feats = features(pairs) if with_feats else None
    packed = PackedPairs(pairs, feats)
    for b in make_batches(pairs, budget, seed=1, width_steps=steps):
        same(packed.batch(b), collate(pairs, b, feats))
        assert packed.target_tokens(b) == collate(pairs, b).target_tokens
        shape = static_shape(pairs, b, budget, steps)
        assert packed.static_shape(b, budget, steps) == shape
        same(packed.batch(b, shape), collate(pairs, b, feats, shape))


def test_a_shape_too_small_is_an_error():
    packed = PackedPairs([([5, 6, 7], [8])])
    with pytest.raises(ValueError, match="does not fit"):
        packed.batch([0], (1, 2, 8))
