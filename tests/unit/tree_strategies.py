"""Hypothesis strategies for dependency trees (1-based heads, 0 = root),
shared by the syntax tests."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def trees(draw, max_n: int = 30):
    """Any tree: each node in a random order takes a random earlier node as its head."""
    n = draw(st.integers(1, max_n))
    order = draw(st.permutations(range(n)))
    heads = [0] * n
    for k in range(1, n):
        heads[order[k]] = order[draw(st.integers(0, k - 1))] + 1
    return heads


@st.composite
def projective_trees(draw, max_n: int = 30):
    """A projective tree: a span picks its head, and the parts left and right of the head are
    cut into contiguous chunks, each the subtree of one dependent."""
    n = draw(st.integers(1, max_n))
    heads = [0] * n
    todo = [(0, n, 0)]  # (start, end, 1-based head of the span's head)
    while todo:
        lo, hi, parent = todo.pop()
        h = draw(st.integers(lo, hi - 1))
        heads[h] = parent
        for a, b in ((lo, h), (h + 1, hi)):
            cuts = sorted(draw(st.sets(st.integers(a + 1, b - 1), max_size=3))) if b - a > 1 else []
            bounds = [a, *cuts, b]
            todo += [(x, y, h + 1) for x, y in zip(bounds, bounds[1:]) if x < y]
    return heads
