"""Token-budget batching and collation."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.model_io.batching import collate, example_length, make_batches, pad
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
