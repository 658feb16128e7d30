"""Binary trees for RvNN preordering: hand-made trees, non-projective lifting, properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.syntax.binarize import (
    binarize,
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


def test_sexpr_round_trip_and_errors():
    assert from_sexpr("((0 1) ((2 (3 4)) 5))") == ((0, 1), ((2, (3, 4)), 5))
    assert from_sexpr("3") == 3
    for bad in ("(0 1", "(0 1 2)", "(0 x)", "0 1", ")"):
        with pytest.raises(ValueError, match="malformed tree"):
            from_sexpr(bad)
    assert flat_tree(1) == 0 and flat_tree(3) == (0, (1, 2))


@pytest.mark.parametrize(
    "heads, what",
    [([0, 0], "exactly one root"), ([2, 1, 0], "cycle"), ([2, 0, 4], "in 0..3"), ([], "at least one token"),
     ([1, 0], "its own head")],
)
def test_invalid_trees(heads, what):
    with pytest.raises(ValueError, match=what):
        binarize(heads)


@st.composite
def trees(draw, max_n: int = 30):
    n = draw(st.integers(1, max_n))
    order = draw(st.permutations(range(n)))
    heads = [0] * n
    for k in range(1, n):
        heads[order[k]] = order[draw(st.integers(0, k - 1))] + 1
    return heads


@settings(max_examples=200, deadline=None)
@given(trees())
def test_properties(heads):
    n = len(heads)
    lifted, lifts = projectivize(heads)
    assert is_projective(lifted)
    assert lifted.tolist().index(0) == heads.index(0)  # same root
    if is_projective(heads):
        assert lifts == 0 and lifted.tolist() == heads
    tree = binarize(heads)
    assert leaves(tree) == list(range(n))
    node_spans = spans(tree)
    assert len(node_spans) == n - 1  # a full binary tree over n leaves
    # every node covers a contiguous span of positions
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            under = leaves(node)
            assert under == list(range(under[0], under[0] + len(under)))
            stack += list(node)
    assert all(0 <= s < e <= n for s, e in node_spans)
    assert from_sexpr(to_sexpr(tree)) == tree


def test_long_sentence_has_no_recursion_limit():
    n = 3000
    tree = binarize([0] + list(range(1, n)))  # a chain 3000 deep
    assert leaves(tree) == list(range(n)) and len(spans(tree)) == n - 1
    text = to_sexpr(tree)
    assert to_sexpr(from_sexpr(text)) == text  # (== on 3000-deep tuples would itself recurse)
