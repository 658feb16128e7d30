"""Token-budget batching and collation."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.model_io.batching import (
    collate,
    example_length,
    make_batches,
    pad,
    round_width,
    static_shape,
)
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID

sentence = st.lists(st.integers(4, 99), min_size=0, max_size=40)
corpus = st.lists(st.tuples(sentence, sentence), min_size=0, max_size=120)


@settings(max_examples=150, deadline=None)
@given(pairs=corpus, budget=st.integers(1, 400), seed=st.integers(0, 2**31))
def test_budget_respected_and_every_index_exactly_once(pairs, budget, seed):
    batches = make_batches(pairs, budget, seed=seed)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(pairs)))
    for b in batches:
        assert b
        cost = max(example_length(pairs[i]) for i in b) * len(b)
        assert cost <= budget or len(b) == 1  # an over-long example is alone
    assert make_batches(pairs, budget, seed=seed) == batches  # deterministic


@settings(max_examples=50, deadline=None)
@given(pairs=corpus, budget=st.integers(1, 400))
def test_unshuffled_batches_are_in_length_order(pairs, budget):
    batches = make_batches(pairs, budget, seed=0, shuffle=False)
    lengths = [example_length(pairs[i]) for b in batches for i in b]
    assert lengths == sorted(lengths)


def test_seed_changes_the_order_but_not_the_content():
    pairs = [([5] * (i % 17 + 1), [6] * (i % 13 + 1)) for i in range(500)]
    a, b = make_batches(pairs, 200, seed=1), make_batches(pairs, 200, seed=2)
    assert a != b
    assert sorted(i for x in a for i in x) == sorted(i for x in b for i in x)
    # Batches group similar lengths: much less padding than random grouping would give.
    padded = sum(max(example_length(pairs[i]) for i in x) * len(x) for x in a)
    real = sum(example_length(p) for p in pairs)
    assert padded < 1.2 * real


def test_collate_exact_tensors():
    pairs = [([10, 11, 12], [20]), ([13], [21, 22, 23, 24])]
    batch = collate(pairs)
    assert batch.src.tolist() == [[10, 11, 12, EOS_ID], [13, EOS_ID, PAD_ID, PAD_ID]]
    assert batch.tgt_in.tolist() == [[BOS_ID, 20, PAD_ID, PAD_ID, PAD_ID], [BOS_ID, 21, 22, 23, 24]]
    assert batch.tgt_out.tolist() == [
        [20, EOS_ID, PAD_ID, PAD_ID, PAD_ID],
        [21, 22, 23, 24, EOS_ID],
    ]
    assert batch.src.dtype == torch.long
    assert batch.target_tokens == 7
    assert collate(pairs, [1]).src.tolist() == [[13, EOS_ID]]


def test_pad_handles_empty_sequences():
    assert pad([[], [4, 5]]).tolist() == [[PAD_ID, PAD_ID], [4, 5]]
    assert pad([]).shape == (0, 0)


@settings(max_examples=100, deadline=None)
@given(
    pairs=corpus.filter(bool),
    budget=st.integers(1, 400),
    seed=st.integers(0, 2**31),
    steps=st.sampled_from([1, 2, 4, 8, 16]),
)
def test_static_shapes_hold_their_batch_and_depend_on_the_widths_only(pairs, budget, seed, steps):
    """Every batch fits its static shape (rounded widths, rows to the budget); the shape is a
    function of the rounded widths, so the shapes are at most one per pair of them; and the
    rounded batches still respect the budget."""
    shapes: dict[tuple[int, int], int] = {}
    for b in make_batches(pairs, budget, seed=seed, width_steps=steps):
        rows, src, tgt = static_shape(pairs, b, budget, steps)
        for width, side in ((src, 0), (tgt, 1)):
            need = max(len(pairs[i][side]) for i in b) + 1
            assert need <= width == round_width(need, steps) == round_width(width, steps)
        assert rows >= len(b)
        assert rows * max(src, tgt) <= budget or len(b) == 1
        assert shapes.setdefault((src, tgt), rows) == rows
        batch = collate(pairs, b, shape=(rows, src, tgt))
        assert batch.src.shape == (rows, src) and batch.tgt_in.shape == (rows, tgt)
        assert batch.target_tokens == sum(len(pairs[i][1]) + 1 for i in b)


def test_static_shape_padding_rows_are_padding_only():
    pairs = [([5, 6], [7]), ([8], [9, 10, 11])]
    feats = {"order": [[0, 1], [0]]}
    batch = collate(pairs, [0, 1], feats, shape=(4, 8, 8))
    plain = collate(pairs, [0, 1], feats)
    assert batch.src.shape == (4, 8) and batch.tgt_out.shape == (4, 8)
    assert batch.feats["order"].shape == (4, 8)
    assert torch.equal(batch.src[:2, :3], plain.src) and not batch.src[:2, 3:].any()
    assert torch.equal(batch.tgt_in[:2, :4], plain.tgt_in)
    assert torch.equal(batch.feats["order"][:2, :3], plain.feats["order"])
    for t in (batch.src[2:], batch.tgt_in[2:], batch.tgt_out[2:], batch.feats["order"][2:]):
        assert t.eq(PAD_ID).all()


def test_no_width_steps_gives_todays_batches():
    pairs = [([5] * (i % 17 + 1), [6] * (i % 13 + 1)) for i in range(300)]
    assert make_batches(pairs, 200, seed=3, width_steps=0) == make_batches(pairs, 200, seed=3)


@settings(max_examples=200, deadline=None)
@given(width=st.integers(1, 5000), steps=st.sampled_from([2, 4, 8, 16]))
def test_round_width_ladder(width, steps):
    """Exact up to ``steps``, then never more than 1/steps above the width, and ``steps``
    values per doubling."""
    rounded = round_width(width, steps)
    assert width <= rounded <= width * (1 + 1 / steps)
    if width <= steps:
        assert rounded == width
    octave = 1 << (width.bit_length() - 1)
    if octave >= steps:
        inside = {round_width(w, steps) for w in range(octave, 2 * octave)} - {2 * octave}
        assert len(inside) == steps


def test_round_width_examples():
    assert [round_width(w, 8) for w in (7, 8, 15, 16, 17, 33, 64, 65, 129)] == [
        7,
        8,
        15,
        16,
        18,
        36,
        64,
        72,
        144,
    ]
    assert round_width(13, 0) == 13


def reference_batches(pairs, budget, seed, shuffle=True, steps=0):
    """make_batches as it was written before it was vectorised (lists and a keyed sort)."""
    import random

    rng = random.Random(seed)
    order = list(range(len(pairs)))
    if shuffle:
        rng.shuffle(order)
    lengths = [round_width(example_length(p), steps) for p in pairs]
    order.sort(key=lambda i: (example_length(pairs[i]), len(pairs[i][0]), len(pairs[i][1])))
    batches, current, width = [], [], 0
    for i in order:
        new_width = max(width, lengths[i])
        if current and new_width * (len(current) + 1) > budget:
            batches.append(current)
            current, new_width = [], lengths[i]
        current.append(i)
        width = new_width
    if current:
        batches.append(current)
    if shuffle:
        rng.shuffle(batches)
    return batches


@settings(max_examples=150, deadline=None)
@given(
    pairs=corpus,
    budget=st.integers(1, 400),
    seed=st.integers(0, 2**31),
    shuffle=st.booleans(),
    steps=st.sampled_from([0, 4, 8]),
)
def test_make_batches_equals_the_reference(pairs, budget, seed, shuffle, steps):
    """The same batches, in the same order, as the list-based version: a run's batches (and
    so its results) do not change with the implementation."""
    got = make_batches(pairs, budget, seed=seed, shuffle=shuffle, width_steps=steps)
    assert got == reference_batches(pairs, budget, seed, shuffle, steps)
