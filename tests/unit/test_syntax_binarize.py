"""Binary trees for RvNN preordering: hand-made trees, non-projective lifting, properties."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_strategies import projective_trees, trees

from wordorder.preorder.rvnn_oracle import apply_labels, oracle_labels
from wordorder.syntax import binarize as binarize_module
from wordorder.syntax.binarize import (
    binarize,
    binarize_counted,
    flat_tree,
    from_sexpr,
    is_projective,
    leaves,
    nonprojective_arcs,
    projectivize,
    spans,
    to_sexpr,
)


def test_my_father_is_a_teacher():
    # My->father, father->is, is root, a->teacher, teacher->is, .->is
    tree = binarize([2, 3, 0, 5, 3, 3])
    assert tree == ((0, 1), ((2, (3, 4)), 5))
    assert spans(tree) == [(0, 2), (3, 5), (2, 5), (2, 6), (0, 6)]


@pytest.mark.parametrize(
    "heads, expected",
    [
        ([0], 0),
        ([0, 1, 2, 3], (0, (1, (2, 3)))),  # chain to the right
        ([2, 3, 4, 0], (((0, 1), 2), 3)),  # chain to the left: each head takes its left dependent
        ([3, 3, 0], (0, (1, 2))),  # only left dependents, nearest (1) first
        ([0, 1, 1], ((0, 1), 2)),  # only right dependents, nearest (1) first
        ([3, 3, 0, 3, 3], (0, (1, ((2, 3), 4)))),  # two left and two right dependents
    ],
)
def test_hand_made_trees(heads, expected):
    assert binarize(heads) == expected


def test_nonprojective_arc_is_lifted_to_the_grandparent():
    # "A hearing is scheduled on the issue today": "on the issue" (4..6) modifies "hearing" (1)
    # across "is scheduled"; arcs: A->hearing, hearing->scheduled, is->scheduled, scheduled root,
    # on->hearing (non-projective), the->issue, issue->on, today->scheduled.
    heads = [2, 4, 4, 0, 2, 7, 5, 4]
    assert nonprojective_arcs(heads) == [4] and not is_projective(heads)
    lifted, lifts = projectivize(heads)
    assert lifted.tolist() == [2, 4, 4, 0, 4, 7, 5, 4] and lifts == 1
    tree = binarize(heads)
    assert leaves(tree) == list(range(8))
    # scheduled takes "on the issue" (nearest right), then "today", then "is", then "A hearing"
    assert to_sexpr(tree) == "((0 1) (2 ((3 (4 (5 6))) 7)))"


def test_numpy_heads_are_accepted():
    for dtype in (np.int32, np.int64, np.uint16):
        heads = np.array([2, 4, 4, 0, 2, 7, 5, 4], dtype=dtype)
        assert nonprojective_arcs(heads) == [4]
        assert binarize_counted(heads) == (((0, 1), (2, ((3, (4, (5, 6))), 7))), 1)


def test_lifting_picks_the_shortest_arc_first():
    # 0-based: 4 is root; 0->3 (spans 1, 2), 1->4, 2->0 (spans 1), 3->4. Non-projective:
    # 0->2 (|2-0| = 2: 1 is not under 0) and 3->0 (|3-0| = 3: 1 is not under 3).
    heads = [4, 5, 1, 5, 0]
    assert nonprojective_arcs(heads) == [0, 2]
    # the shorter arc 0->2 is lifted first (2 -> 3), which leaves 3->0 non-projective (0 -> 4)
    lifted, lifts = projectivize(heads)
    assert lifted.tolist() == [5, 5, 4, 5, 0] and lifts == 2
    # root 4 takes its left dependents nearest first: 3 (with its left dependent 2), 1, 0
    assert binarize(heads) == (0, (1, ((2, 3), 4)))


def test_sexpr_round_trip_and_errors():
    assert from_sexpr("((0 1) ((2 (3 4)) 5))") == ((0, 1), ((2, (3, 4)), 5))
    assert from_sexpr("3") == 3
    for bad in ("(0 1", "(0 1 2)", "(0 x)", "0 1", ")"):
        with pytest.raises(ValueError, match="malformed tree"):
            from_sexpr(bad)
    assert flat_tree(1) == 0 and flat_tree(3) == (0, (1, 2))


@pytest.mark.parametrize(
    "heads, what",
    [
        ([0, 0], "exactly one root"),
        ([2, 1, 0], "cycle"),
        ([2, 0, 4], "in 0..3"),
        ([], "at least one token"),
        ([1, 0], "its own head"),
        ([1.0, 0], "integers"),
        (["1", "0"], "integers"),
        ([[0]], "1-D"),
        (np.array([3, 0, 1, 1]), "cycle"),
        ([-1, 0], "in 0..2"),
    ],
)
def test_invalid_trees(heads, what):
    for f in (binarize, projectivize, nonprojective_arcs, is_projective):
        with pytest.raises(ValueError, match=what):
            f(heads)


def test_docstring_examples():
    assert doctest.testmod(binarize_module).failed == 0


def _ancestors(heads, i):
    """1-based chain of heads above 0-based token i."""
    out = []
    while heads[i]:
        out.append(heads[i])
        i = heads[i] - 1
    return out


def _internal_nodes_postorder(tree):
    out, stack = [], [(tree, False)]
    while stack:
        node, done = stack.pop()
        if isinstance(node, tuple):
            if done:
                out.append(node)
            else:
                stack += [(node, True), (node[1], False), (node[0], False)]
    return out


@settings(max_examples=300, deadline=None)
@given(trees())
def test_properties(heads):
    n = len(heads)
    lifted, lifts = projectivize(heads)
    lifted = lifted.tolist()
    assert is_projective(lifted)
    assert (lifts == 0) == is_projective(heads) == (nonprojective_arcs(heads) == [])
    assert lifted.index(0) == heads.index(0)  # same root
    for i in range(n):  # lifting only moves a token up: its new head is its old head or above it
        assert lifted[i] == heads[i] or lifted[i] in _ancestors(heads, heads[i] - 1)
    if lifts == 0:
        assert lifted == heads
    tree = binarize(heads)
    assert binarize_counted(heads) == (tree, lifts)
    assert leaves(tree) == list(range(n))
    node_spans = spans(tree)
    nodes = _internal_nodes_postorder(tree)
    assert len(node_spans) == len(nodes) == n - 1  # a full binary tree over n leaves
    for (start, end), node in zip(node_spans, nodes):  # every node covers a contiguous span
        assert leaves(node) == list(range(start, end))
    # every head's (lifted) subtree is one node of the binary tree
    for a in set(lifted) - {0}:
        under = [i for i in range(n) if a in _ancestors(lifted, i)] + [a - 1]
        assert (min(under), max(under) + 1) in node_spans
    assert from_sexpr(to_sexpr(tree)) == tree


@settings(max_examples=200, deadline=None)
@given(projective_trees())
def test_projective_trees_are_left_alone(heads):
    assert is_projective(heads) and nonprojective_arcs(heads) == []
    lifted, lifts = projectivize(np.array(heads))
    assert lifted.tolist() == heads and lifts == 0
    assert leaves(binarize(heads)) == list(range(len(heads)))


def test_long_sentence_has_no_recursion_limit():
    n = 3000
    tree = binarize([0] + list(range(1, n)))  # a chain 3000 deep
    assert leaves(tree) == list(range(n)) and len(spans(tree)) == n - 1
    text = to_sexpr(tree)
    assert to_sexpr(from_sexpr(text)) == text  # (== on 3000-deep tuples would itself recurse)


@settings(max_examples=300, deadline=None)
@given(trees(), st.data())
def test_punctuation_tails_keep_every_node_contiguous(heads, data):
    n = len(heads)
    punct = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    tree, lifts = binarize_counted(heads, punct)
    assert lifts == binarize_counted(heads)[1]
    assert leaves(tree) == list(range(n))
    node_spans = spans(tree)
    for (start, end), node in zip(node_spans, _internal_nodes_postorder(tree)):
        assert leaves(node) == list(range(start, end))
    lifted = projectivize(heads)[0].tolist()
    for a in set(lifted) - {0}:  # every head's subtree is still one node
        under = [i for i in range(n) if a in _ancestors(lifted, i)] + [a - 1]
        assert (min(under), max(under) + 1) in node_spans
    assert binarize_counted(heads, [False] * n) == binarize_counted(heads)  # no punct: as before


def test_final_punctuation_is_the_tail_of_a_head_final_clause():
    # 私 は 本 を 読む 。 (UD: 私→読む, は→私, 本→読む, を→本, 。→読む) → "I read a book ."
    heads = [5, 1, 5, 3, 0, 5]
    punct = [False] * 5 + [True]
    assert to_sexpr(binarize(heads)) == "((0 1) ((2 3) (4 5)))"
    assert to_sexpr(binarize(heads, punct)) == "(((0 1) ((2 3) 4)) 5)"
    # links: 私-I, 読む-read, 本-book, 。-. ; the target order 私 は 読む 本 を 。 needs the
    # object and verb swapped, which drags "。" along unless it is the clause's tail
    links = np.array([[0, 0], [4, 1], [2, 3], [5, 4]])
    target = [0, 1, 4, 2, 3, 5]
    for tree, reachable in ((binarize(heads), False), (binarize(heads, punct), True)):
        order = apply_labels(tree, oracle_labels(tree, links)).tolist()
        assert (order == target) == reachable, order


def test_punctuation_flags_must_match_the_tokens():
    with pytest.raises(ValueError, match="2 punctuation flags for 3 tokens"):
        binarize_counted([2, 0, 2], [False, True])
