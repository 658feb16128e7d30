"""RvNN oracle labels and applying labels: the worked examples of docs/algorithms.md §RVNN, a
literal reference, properties."""

from __future__ import annotations

import doctest
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.errors import WordorderError
from wordorder.preorder import rvnn_oracle
from wordorder.preorder.rvnn_oracle import (
    apply_labels,
    apply_labels_corpus,
    flatten_trees,
    kawara_tau,
    oracle_labels,
    oracle_labels_corpus,
    pack_links,
)
from wordorder.syntax.binarize import leaves, spans

A, B, C = 0, 1, 2


@st.composite
def binary_trees(draw, min_n: int = 1, max_n: int = 12):
    """Any binary bracketing of 0..n-1."""
    n = draw(st.integers(min_n, max_n))

    def build(lo: int, hi: int):
        if hi - lo == 1:
            return lo
        mid = draw(st.integers(lo + 1, hi - 1))
        return (build(lo, mid), build(mid, hi))

    return build(0, n)


@st.composite
def trees_and_links(draw, min_n: int = 1, max_n: int = 12):
    """A tree and random links: many-to-many, duplicates, unaligned words on both sides."""
    tree = draw(binary_trees(min_n, max_n))
    n = len(leaves(tree))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, 14)), max_size=3 * n))
    return tree, np.array(pairs, dtype=np.int64).reshape(-1, 2)


def tau_exact(a) -> Fraction:
    m = len(a)
    if m <= 1:
        return Fraction(0)
    conc = sum(a[i] <= a[j] for i in range(m) for j in range(i + 1, m))
    return 2 * Fraction(conc, m * (m - 1) // 2) - 1


def literal_oracle(tree, links):
    """The oracle of docs/algorithms.md §RVNN read literally: candidate full-sentence orders,
    alignment read in target order.

    Returns post-order labels and the (τ_straight, τ_inverted) of every internal node.
    """
    n = len(leaves(tree))
    labels, taus = [], []
    by_target: dict[int, list[int]] = {}
    for i, j in sorted(map(tuple, links.tolist()), key=lambda x: (x[1], x[0])):
        by_target.setdefault(j, []).append(i)  # ascending source index, as in a GIZA A3 line

    def read(order):
        position = {w: k for k, w in enumerate(order)}
        return [position[i] for j in sorted(by_target) for i in by_target[j]]

    def visit(node):
        if isinstance(node, int):
            return [node]
        left, right = visit(node[0]), visit(node[1])
        start, end = min(left), max(right) + 1
        outside_l, outside_r = list(range(start)), list(range(end, n))  # original order outside
        straight = tau_exact(read(outside_l + left + right + outside_r))
        inverted = tau_exact(read(outside_l + right + left + outside_r))
        taus.append((straight, inverted))
        labels.append(int(inverted > straight))
        return right + left if inverted > straight else left + right

    order = visit(tree)
    return labels, taus, order


def test_worked_example():
    tree = ((A, B), C)
    links = np.array([[C, 0], [A, 1], [B, 2]])  # target order C A B
    labels, taus, _ = literal_oracle(tree, links)
    assert taus == [(Fraction(-1, 3), Fraction(-1)), (Fraction(-1, 3), Fraction(1))]
    assert labels == [0, 1]
    assert oracle_labels(tree, links).tolist() == [0, 1]  # node (A B) STRAIGHT, root INVERTED
    assert apply_labels(tree, oracle_labels(tree, links)).tolist() == [C, A, B]


def test_tie_goes_to_straight():
    tree = ((A, B), C)
    links = np.array([[A, 0], [A, 2], [B, 1]])
    labels, taus, _ = literal_oracle(tree, links)
    assert taus[0] == (Fraction(1, 3), Fraction(1, 3))
    assert oracle_labels(tree, links).tolist()[0] == 0


def test_kawara_tau_definition():
    assert kawara_tau([0, 1, 2]) == 1.0 and kawara_tau([2, 1, 0]) == -1.0
    assert kawara_tau([0, 0]) == 1.0  # ties are concordant
    assert kawara_tau([1, 1, 0]) == pytest.approx(-1 / 3)
    assert kawara_tau([]) == 0.0 and kawara_tau([7]) == 0.0  # |a| <= 1
    assert kawara_tau([2, 0, 1]) == pytest.approx(float(tau_exact([2, 0, 1])))


def test_shared_target_word_favours_straight():
    # B is aligned to t0 and to t1 with A. Within t1 the A3 line lists A first (ascending source
    # index), so the pairs at t1 favour STRAIGHT and tie with the one at t0 favouring INVERTED.
    links = np.array([[A, 1], [B, 0], [B, 1]])
    assert literal_oracle((A, B), links)[0] == [0]
    assert oracle_labels((A, B), links).tolist() == [0]
    # One more link placing A after B tips it.
    assert oracle_labels((A, B), np.array([[A, 1], [A, 2], [B, 0], [B, 1]])).tolist() == [1]


def test_many_to_many_and_unaligned():
    # "I bought a book" -> 私 は 本 を 買った: 'a' (2) unaligned, 'I' -> two target words.
    tree = (0, (1, (2, 3)))
    links = np.array([[0, 0], [0, 1], [3, 2], [3, 3], [1, 4]])
    labels = oracle_labels(tree, links)
    # (a book) straight, (bought (a book)) inverted, root straight
    assert labels.tolist() == [0, 1, 0]
    assert apply_labels(tree, labels).tolist() == [0, 2, 3, 1]
    # nothing aligned
    assert oracle_labels(tree, np.zeros((0, 2), dtype=np.int64)).tolist() == [0, 0, 0]


@settings(max_examples=200, deadline=None)
@given(trees_and_links())
def test_kernel_matches_literal_oracle(case):
    tree, links = case
    labels, _, order = literal_oracle(tree, links)
    got = oracle_labels(tree, links)
    assert got.dtype == np.int8 and got.tolist() == labels
    assert apply_labels(tree, got).tolist() == order


def reference_apply(tree, labels):
    it = iter(labels.tolist())

    def visit(node):
        if isinstance(node, int):
            return [node]
        left, right = visit(node[0]), visit(node[1])
        return right + left if next(it) else left + right

    return visit(tree)


@settings(max_examples=100, deadline=None)
@given(binary_trees(), st.data())
def test_apply_labels_gives_a_permutation(tree, data):
    n = len(leaves(tree))
    labels = np.array(
        data.draw(st.lists(st.integers(0, 1), min_size=n - 1, max_size=n - 1)), dtype=np.int8
    )
    perm = apply_labels(tree, labels)
    assert sorted(perm.tolist()) == list(range(n))
    assert perm.tolist() == reference_apply(tree, labels)
    if n > 1:  # every node inverted reverses the sentence; none inverted keeps it
        assert apply_labels(tree, np.ones(n - 1, np.int8)).tolist() == list(range(n))[::-1]
        assert apply_labels(tree, np.zeros(n - 1, np.int8)).tolist() == list(range(n))


@settings(max_examples=30, deadline=None)
@given(st.lists(trees_and_links(), min_size=1, max_size=6))
def test_corpus_path_matches_per_tree(cases):
    trees = [t for t, _ in cases] + [None, 0]
    links = [lk for _, lk in cases] + [np.zeros((0, 2), np.int64), np.array([[0, 3]])]
    lengths = [len(leaves(t)) for t, _ in cases] + [0, 1]
    flat = flatten_trees(trees, lengths)
    assert flat.n.tolist() == lengths
    labels = oracle_labels_corpus(flat, pack_links(links, lengths))
    per_tree = [oracle_labels(t, lk) for t, lk in cases]
    assert labels.tolist() == np.concatenate(per_tree + [np.zeros(0, np.int8)]).tolist()
    perms = apply_labels_corpus(flat, labels)
    assert [p.tolist() for p in perms[-2:]] == [[], [0]]
    for k, ((t, _), lab, perm) in enumerate(zip(cases, per_tree, perms)):
        assert perm.tolist() == apply_labels(t, lab).tolist()
        rows = flat.spans[flat.node_offsets[k] : flat.node_offsets[k + 1]]
        assert [(s, e) for s, _m, e in rows.tolist()] == spans(t)


def test_flat_tree_layout():
    flat = flatten_trees([((0, 1), ((2, (3, 4)), 5))])
    assert flat.spans.tolist() == [[0, 1, 2], [3, 4, 5], [2, 3, 5], [2, 5, 6], [0, 2, 6]]
    # internal k -> id n + k
    assert flat.children.tolist() == [[0, 1], [3, 4], [2, 7], [8, 5], [6, 9]]
    assert flat.height.tolist() == [1, 1, 2, 3, 4]


@pytest.mark.parametrize(
    "tree, n, what",
    [
        (((0, 2), 1), 3, "leaf 2 where word 1"),
        (((0, 1), 2), 4, "3 leaves but the sentence has 4"),
        (1, 1, "must be the leaf 0"),
        (((0, 1), "x"), 3, "int leaf or a pair"),
    ],
)
def test_bad_trees_name_the_line(tree, n, what):
    with pytest.raises(WordorderError, match=what) as err:
        flatten_trees([(0, 1), tree], [2, n], path="x.tree")
    assert err.value.line == 2 and err.value.path == "x.tree"


def test_bad_links_name_the_line():
    with pytest.raises(WordorderError, match="outside") as err:
        pack_links([np.array([[0, 0]]), np.array([[2, 0]])], [2, 2], path="x.align")
    assert err.value.line == 2
    with pytest.raises(WordorderError, match=r"\[L, 2\]"):
        pack_links([np.array([0, 1, 2])], [3])


def test_doctests():
    assert doctest.testmod(rvnn_oracle).failed == 0
