"""Training constraints of the BTG preorderer and derivation → permutation
(docs/algorithms.md §BTG, §BTG-CONSTRAINT)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.errors import WordorderError
from wordorder.preorder.constraint import (
    INV,
    STR,
    actions_to_subtrees,
    btg_constraint,
    derivation_valid,
    permutation_from_actions,
    split_valid,
)
from wordorder.preorder.metrics import (
    alignment_ranks,
    fuzzy_reordering_score,
    kendall_tau,
    order_ranks,
)


def _links(*pairs: str) -> np.ndarray:
    return np.array([[int(x) for x in p.split("-")] for p in pairs], dtype=np.int64).reshape(-1, 2)


def test_worked_example_three_words():
    ranks, reason = btg_constraint(_links("0-2", "1-0", "2-1"), 3)
    assert reason == "" and ranks.tolist() == [2, 0, 1]
    actions = [(1, INV), (2, STR)]
    assert derivation_valid(ranks, 3, actions)
    order = permutation_from_actions(3, actions_to_subtrees(3, actions))
    assert order.tolist() == [1, 2, 0]
    r = order_ranks(order, ranks)
    assert kendall_tau(r) == 1.0 and fuzzy_reordering_score(r) == 1.0
    ident = order_ranks(np.arange(3), ranks)
    assert kendall_tau(ident) == pytest.approx(1 / 3) and fuzzy_reordering_score(ident) == 0.25


def test_worked_example_i_bought_a_book_yesterday():
    ranks, _ = btg_constraint(_links("0-0", "1-3", "3-2", "4-1"), 5)
    assert ranks.tolist() == [0, 3, -1, 2, 1]
    actions = [(1, STR), (4, INV), (2, INV), (3, STR)]
    subtrees = actions_to_subtrees(5, actions)
    assert subtrees == [(0, 5, 1, STR), (1, 5, 4, INV), (1, 4, 2, INV), (2, 4, 3, STR)]
    order = permutation_from_actions(5, subtrees)
    assert order.tolist() == [0, 4, 2, 3, 1]
    assert derivation_valid(ranks, 5, actions)
    assert kendall_tau(order_ranks(order, ranks)) == 1.0
    assert kendall_tau(order_ranks(np.arange(5), ranks)) == 0.5
    assert fuzzy_reordering_score(order_ranks(np.arange(5), ranks)) == pytest.approx(0.2)
    # The identity tree (all STR) violates the constraint at the split of "bought" from "yesterday".
    assert not derivation_valid(ranks, 5, [(1, STR), (2, STR), (3, STR), (4, STR)])


def test_incomparable_sets_drop_the_sentence_but_minmax_orders_them():
    links = _links("0-1", "0-3", "1-2", "1-4")  # {1,3} vs {2,4}
    assert btg_constraint(links, 2) == (None, "incomparable")
    assert alignment_ranks(links, 2).tolist() == [0, 1]  # the evaluation's min/max relation


@pytest.mark.parametrize("perm", [[1, 3, 0, 2], [2, 0, 3, 1], [0, 2, 4, 1, 3]])
def test_not_btg_parsable(perm):
    links = np.array([[i, j] for i, j in enumerate(perm)])
    assert btg_constraint(links, len(perm)) == (None, "not_btg")


def test_parsable_with_unaligned_words_in_between():
    # 2413 is not BTG, but the unaligned word does not change that; 2143 is BTG.
    assert btg_constraint(_links("0-1", "1-3", "3-0", "4-2"), 5)[1] == "not_btg"
    ranks, _ = btg_constraint(_links("0-1", "1-0", "3-3", "4-2"), 5)
    assert ranks.tolist() == [1, 0, -1, 3, 2]


def test_unaligned_and_single_aligned_word():
    assert btg_constraint(np.zeros((0, 2), np.int64), 4) == (None, "unaligned")
    assert btg_constraint(_links("2-5"), 4) == (None, "unaligned")
    assert btg_constraint(_links("0-0"), 1) == (None, "unaligned")


def test_ties_and_nested_sets():
    # Same target sets tie; {0} < {0,1} under the C++ relation; duplicates are ignored.
    ranks, _ = btg_constraint(_links("0-0", "0-1", "1-0", "1-1", "2-2", "2-2"), 3)
    assert ranks.tolist() == [0, 0, 1]
    ranks, _ = btg_constraint(_links("0-0", "1-0", "1-1"), 2)
    assert ranks.tolist() == [0, 1]
    assert btg_constraint(_links("0-0", "0-2", "1-1"), 2) == (None, "incomparable")  # {0,2} vs {1}


def test_link_out_of_range():
    with pytest.raises(WordorderError, match="outside"):
        btg_constraint(_links("0-0", "3-1"), 3)


def _cpp_le(a: set, b: set) -> bool:
    return all(x <= y for x in a - b for y in b) and all(y >= x for y in b - a for x in a)


def _parsable(seq: list) -> bool:
    if len(seq) <= 1:
        return True
    return any(
        (max(seq[:p]) <= min(seq[p:]) or max(seq[p:]) <= min(seq[:p]))
        and _parsable(seq[:p])
        and _parsable(seq[p:])
        for p in range(1, len(seq))
    )


def _brute(links: np.ndarray, n: int):
    sets = [set(links[links[:, 0] == i, 1].tolist()) for i in range(n)]
    aligned = [i for i in range(n) if sets[i]]
    if len(aligned) < 2:
        return None, "unaligned"
    for i, j in itertools.combinations(aligned, 2):
        if not (_cpp_le(sets[i], sets[j]) or _cpp_le(sets[j], sets[i])):
            return None, "incomparable"
    groups = {frozenset(sets[i]) for i in aligned}
    ranks = [-1] * n
    for i in aligned:
        ranks[i] = sum(
            1 for g in groups if _cpp_le(set(g), sets[i]) and not _cpp_le(sets[i], set(g))
        )
    if not _parsable([ranks[i] for i in aligned]):
        return None, "not_btg"
    return ranks, ""


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 7).flatmap(
        lambda n: st.tuples(
            st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 6)), max_size=12)
        )
    )
)
def test_matches_brute_force_relation(case):
    n, pairs = case
    links = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    ranks, reason = btg_constraint(links, n)
    want, want_reason = _brute(links, n)
    assert reason == want_reason
    if want is not None:
        assert ranks.tolist() == want


def test_split_valid():
    ranks = np.array([2, -1, 0, 1])
    assert split_valid(ranks, 0, 4, 1, INV) and not split_valid(ranks, 0, 4, 1, STR)
    # one side unaligned
    assert split_valid(ranks, 0, 2, 1, STR) and split_valid(ranks, 0, 2, 1, INV)
    assert split_valid(ranks, 2, 4, 3, STR) and not split_valid(ranks, 2, 4, 3, INV)
    tied = np.array([1, 1])
    assert split_valid(tied, 0, 2, 1, STR) and split_valid(tied, 0, 2, 1, INV)


def _random_derivation(n: int, draws: list[int]) -> list[tuple[int, int]]:
    stack, actions, k = [(0, n)] if n >= 2 else [], [], 0
    while stack:
        b, e = stack.pop()
        p = b + 1 + draws[k % len(draws)] % (e - b - 1)
        actions.append((p, draws[(k + 1) % len(draws)] % 2))
        k += 2
        stack += [s for s in ((b, p), (p, e)) if s[1] - s[0] >= 2]
    return actions


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 25), st.lists(st.integers(0, 1000), min_size=1, max_size=30))
def test_derivations_give_permutations(n, draws):
    actions = _random_derivation(n, draws)
    assert len(actions) == max(n - 1, 0)
    subtrees = actions_to_subtrees(n, actions)
    order = permutation_from_actions(n, subtrees)
    assert order.dtype == np.int64 and sorted(order.tolist()) == list(range(n))
    # All-STR keeps the order; flipping every label reverses it.
    flipped = [(b, e, p, 1 - lab) for b, e, p, lab in subtrees]
    assert (permutation_from_actions(n, flipped) == order[::-1]).all()
    assert permutation_from_actions(
        n, [(b, e, p, STR) for b, e, p, _ in subtrees]
    ).tolist() == list(range(n))


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 12), st.lists(st.integers(0, 1000), min_size=1, max_size=30))
def test_a_derivation_is_valid_for_the_order_it_produces(n, draws):
    actions = _random_derivation(n, draws)
    order = permutation_from_actions(n, actions_to_subtrees(n, actions))
    links = np.stack([order, np.arange(n)], axis=1)  # source word order[k] is aligned to target k
    ranks, reason = btg_constraint(links, n)
    assert reason == "" and ranks[order].tolist() == list(range(n))
    assert derivation_valid(ranks, n, actions)


def test_bad_derivations_are_rejected():
    with pytest.raises(ValueError):
        actions_to_subtrees(3, [(1, STR)])  # [1, 3) left open
    with pytest.raises(ValueError):
        actions_to_subtrees(3, [(3, STR), (1, STR)])  # pivot outside (0, 3)
    with pytest.raises(ValueError):
        permutation_from_actions(3, [(0, 4, 1, INV)])
