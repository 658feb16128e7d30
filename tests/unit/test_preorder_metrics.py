"""Kendall tau, FRS and gold preorders: the worked examples of docs/algorithms.md §TAU and
§GOLD, and properties."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.preorder import gold as gold_module
from wordorder.preorder import metrics as metrics_module
from wordorder.preorder.gold import crossings, gold_permutation, word_keys
from wordorder.preorder.metrics import (
    alignment_ranks,
    fuzzy_reordering_score,
    kendall_tau,
    kendall_tau_eq7,
    order_ranks,
    score_orders,
)

# "I bought a book yesterday" -> 私は 昨日 本を 買った: 5-4 ||| 0-0 1-3 3-2 4-1 ("a" unaligned)
BOOK = np.array([[0, 0], [1, 3], [3, 2], [4, 1]])


def scores(perm, links, n):
    r = order_ranks(np.asarray(perm), alignment_ranks(links, n))
    return kendall_tau(r), fuzzy_reordering_score(r)


def test_doctests():
    for module in (metrics_module, gold_module):
        assert doctest.testmod(module).failed == 0


def test_three_word_example():
    links = np.array([[0, 2], [1, 0], [2, 1]])
    assert alignment_ranks(links, 3).tolist() == [2, 0, 1]
    tau, frs = scores([0, 1, 2], links, 3)
    assert tau == pytest.approx(1 / 3) and frs == pytest.approx(0.25)
    assert scores([1, 2, 0], links, 3) == (1.0, 1.0)


def test_book_example_identity_and_gold():
    assert alignment_ranks(BOOK, 5).tolist() == [0, 3, -1, 2, 1]
    tau, frs = scores(range(5), BOOK, 5)
    assert tau == pytest.approx(0.5) and frs == pytest.approx(0.2)
    assert scores([0, 4, 2, 3, 1], BOOK, 5) == (1.0, 1.0)


def test_gold_attachment_and_crossings():
    assert word_keys(BOOK, 5)[[0, 1, 3, 4]].tolist() == [0, 3, 2, 1]
    left = gold_permutation(BOOK, 5, attach="left")
    right = gold_permutation(BOOK, 5, attach="right")
    assert left.tolist() == [0, 4, 3, 1, 2]
    assert right.tolist() == [0, 4, 2, 3, 1]
    assert crossings(BOOK) == 3
    assert crossings(BOOK, left) == crossings(BOOK, right) == 0
    for perm in (left, right):
        assert scores(perm, BOOK, 5) == (1.0, 1.0)


def test_gold_keys_min_max_median():
    links = np.array([[0, 1], [0, 5], [0, 6], [1, 3]])
    assert word_keys(links, 2, "min").tolist() == [1, 3]
    assert word_keys(links, 2, "max").tolist() == [6, 3]
    assert word_keys(links, 2, "median").tolist() == [5, 3]
    assert word_keys(links, 2, "mean").tolist() == [4, 3]
    assert gold_permutation(links, 2, "min").tolist() == [0, 1]
    assert gold_permutation(links, 2, "mean").tolist() == [1, 0]


def test_unaligned_edges():
    # leading unaligned words take the right neighbour's key even with left
    # attachment; trailing ones the left
    links = np.array([[2, 1], [3, 0]])
    assert gold_permutation(links, 5).tolist() == [3, 4, 0, 1, 2]  # keys 1 1 1 0 0
    assert gold_permutation(np.zeros((0, 2), int), 3).tolist() == [0, 1, 2]
    assert gold_permutation(np.zeros((0, 2), int), 0).tolist() == []


def test_ties_are_not_errors_and_short_sentences_score_one():
    # two source words aligned to the same target word: a tie, in either order
    links = np.array([[0, 0], [1, 0], [2, 1]])
    assert alignment_ranks(links, 3).tolist() == [0, 0, 1]
    assert scores([1, 0, 2], links, 3) == (1.0, 1.0)
    assert kendall_tau(np.array([4])) == 1.0 and fuzzy_reordering_score(np.array([], int)) == 1.0


def test_incomparable_sentence_is_skipped():
    # {1,3} vs {2}: word 1's span nests inside word 0's -> incomparable under min/max
    links = np.array([[0, 1], [0, 3], [1, 2]])
    assert alignment_ranks(links, 2) is None
    # {1,3} vs {2,4} is comparable under the min/max relation (docs/algorithms.md §TAU)
    assert alignment_ranks(np.array([[0, 1], [0, 3], [1, 2], [1, 4]]), 2).tolist() == [0, 1]
    s = score_orders([np.arange(2), np.array([1, 0])], [links, np.array([[0, 1], [1, 0]])], [2, 2])
    summary = s.summary()
    assert summary["scored"] == 1 and summary["skipped_incomparable"] == 1
    assert summary["tau"] == 1.0 and summary["complete_match"] == 1.0


@st.composite
def sentences(draw):
    n = draw(st.integers(1, 12))
    m = draw(st.integers(1, 12))
    pairs = draw(st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, m - 1)), max_size=20))
    return n, np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)


@settings(max_examples=200, deadline=None)
@given(
    sentences(),
    st.sampled_from(["mean", "min", "median", "max"]),
    st.sampled_from(["left", "right"]),
)
def test_gold_is_a_permutation_and_removes_all_crossings_of_one_link_words(sentence, key, attach):
    n, links = sentence
    perm = gold_permutation(links, n, key, attach)
    assert sorted(perm.tolist()) == list(range(n))
    # With at most one link per source word the key is that link's target position, so the sorted
    # order crosses nothing. (With several links per word no key can promise that: a word aligned
    # to {0, 1, 3} and one aligned to {2} cross in either order.)
    _, first = np.unique(links[:, 0], return_index=True)
    one_link = links[first]
    assert crossings(one_link, gold_permutation(one_link, n, key, attach)) == 0
    ranks = alignment_ranks(links, n)
    if ranks is not None and len(links):
        tau, frs = scores(perm, links, n)
        assert 0 <= frs <= 1 and 0 <= tau <= 1


@settings(max_examples=200, deadline=None)
@given(st.permutations(list(range(9))))
def test_tau_of_a_one_to_one_alignment(target_order):
    # word i aligned to target position target_order[i]: the gold order has tau 1, its reverse 0
    links = np.array([[i, t] for i, t in enumerate(target_order)])
    perm = gold_permutation(links, 9)
    assert [target_order[i] for i in perm] == list(range(9))
    assert scores(perm, links, 9) == (1.0, 1.0)
    tau, frs = scores(perm[::-1], links, 9)
    assert tau == 0.0 and frs == pytest.approx(0.0)


def test_eq7_tau_worked_examples():
    # docs/algorithms.md §TAU: ranks [2, 0, 1]: one ascending pair of three -> 4/6 - 1
    # = -1/3 (normalised: 1/3)
    assert kendall_tau_eq7(np.array([2, 0, 1])) == pytest.approx(-1 / 3)
    # "I bought a book yesterday": identity ranks [0, 3, 2, 1] (a unaligned): 3 ascending of 6 -> 0
    r = order_ranks(np.arange(5), alignment_ranks(BOOK, 5))
    assert kendall_tau_eq7(r) == pytest.approx(0.0) and kendall_tau(r) == pytest.approx(0.5)
    # ties count against under Eq. 7 (strict <) but not in the normalised
    # tau, nor in Kawara's oracle
    tied = np.array([0, 1, 0])
    assert kendall_tau_eq7(tied) == pytest.approx(-1 / 3) and kendall_tau(tied) == pytest.approx(
        2 / 3
    )
    assert kendall_tau_eq7(np.array([1, 1])) == -1.0 and kendall_tau_eq7(np.array([7])) == 1.0
    assert (
        kendall_tau_eq7(np.arange(6)) == 1.0 and kendall_tau_eq7(np.arange(6)[::-1].copy()) == -1.0
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=2, max_size=12))
def test_eq7_tau_is_twice_the_normalised_minus_one_without_ties(values):
    r = np.array(values)
    t7 = kendall_tau_eq7(r)
    assert -1.0 <= t7 <= 1.0
    if len(set(values)) == len(values):
        assert t7 == pytest.approx(2 * kendall_tau(r) - 1)
    else:  # a tie is an error here and not in the normalised tau
        assert t7 < 2 * kendall_tau(r) - 1


def test_score_orders_reports_both_scales():
    links = np.array([[0, 2], [1, 0], [2, 1]])
    s = score_orders([np.arange(3), np.array([1, 2, 0])], [links, links], [3, 3]).summary()
    assert s["tau"] == pytest.approx((1 / 3 + 1) / 2) and s["tau_eq7"] == pytest.approx(
        (-1 / 3 + 1) / 2
    )
