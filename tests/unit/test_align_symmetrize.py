"""Symmetrization: hand-derived grow-diag-final(-and) cases and set properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.align.symmetrize import METHODS, symmetrize, symmetrize_flat


def run(fwd, rev, n, m, method):
    out = symmetrize(
        [np.array(fwd, np.int64).reshape(-1, 2)],
        [np.array(rev, np.int64).reshape(-1, 2)],
        [n],
        [m],
        method,
    )
    return {tuple(x) for x in out[0].tolist()}


def test_grow_along_the_diagonal():
    # intersection {00, 22}; (1,1) touches (0,0) diagonally and word 1 is unaligned -> added;
    # (1,2) then has both its words aligned -> never added
    fwd, rev = [(0, 0), (1, 1), (2, 2)], [(0, 0), (2, 2), (1, 2)]
    assert run(fwd, rev, 3, 3, "intersection") == {(0, 0), (2, 2)}
    assert run(fwd, rev, 3, 3, "union") == {(0, 0), (1, 1), (2, 2), (1, 2)}
    for method in ("grow-diag", "grow-diag-final", "grow-diag-final-and"):
        assert run(fwd, rev, 3, 3, method) == {(0, 0), (1, 1), (2, 2)}


def test_final_and_versus_final():
    # nothing grows (no union link touches the intersection); final-and takes the forward (3,0)? no:
    # target 0 is aligned; then reverse (2,3): both words free -> yes; (3,3): target 3 now aligned
    # -> no. final (either word free) also takes (3,0), after which (3,3) has both aligned.
    fwd, rev = [(0, 0), (1, 1), (3, 0)], [(0, 0), (1, 1), (2, 3), (3, 3)]
    assert run(fwd, rev, 4, 4, "grow-diag") == {(0, 0), (1, 1)}
    assert run(fwd, rev, 4, 4, "grow-diag-final-and") == {(0, 0), (1, 1), (2, 3)}
    assert run(fwd, rev, 4, 4, "grow-diag-final") == {(0, 0), (1, 1), (2, 3), (3, 0)}


def test_growth_chains_within_one_scan_and_forward_goes_first():
    # (1,0) grows from (0,0), then (2,1) from (1,0)
    assert run([(0, 0)], [(0, 0), (1, 0), (2, 1)], 3, 3, "grow-diag-final-and") == {
        (0, 0),
        (1, 0),
        (2, 1),
    }
    # empty intersection: final-and adds the forward link first, which blocks the reverse one
    assert run([(0, 1)], [(0, 0)], 1, 2, "grow-diag-final-and") == {(0, 1)}
    assert run([(0, 1)], [(0, 0)], 1, 2, "intersection") == set()
    assert run([], [], 0, 0, "grow-diag-final-and") == set()


def test_flat_corpus_and_bad_input():
    fwd = np.array([[0, 0], [1, 1], [0, 0]])
    rev = np.array([[0, 0], [1, 1], [0, 1]])
    links, offsets = symmetrize_flat(
        fwd,
        np.array([0, 2, 2, 3]),
        rev,
        np.array([0, 2, 2, 3]),
        [2, 0, 1],
        [2, 0, 2],
        "grow-diag-final-and",
    )
    assert offsets.tolist() == [0, 2, 2, 3] and links.tolist() == [[0, 0], [1, 1], [0, 0]]
    with pytest.raises(ValueError, match="unknown symmetrization"):
        symmetrize_flat(fwd, np.array([0, 3]), rev, np.array([0, 3]), [2], [2], "gdfa")
    with pytest.raises(ValueError, match="out of range"):
        symmetrize_flat(fwd, np.array([0, 3]), rev, np.array([0, 3]), [2], [1], "union")


def reference(fwd: set, rev: set, n: int, m: int, method: str) -> set:
    """Koehn's pseudo-code, written plainly over sets."""
    union, a = fwd | rev, set(fwd & rev)
    if method in ("intersection", "union"):
        return a if method == "intersection" else union
    rows = lambda e: any(p[0] == e for p in a)  # noqa: E731
    cols = lambda f: any(p[1] == f for p in a)  # noqa: E731
    added = True
    while added:
        added = False
        for e in range(n):
            for f in range(m):
                if (e, f) not in a:
                    continue
                for de, df in (
                    (-1, 0),
                    (0, -1),
                    (1, 0),
                    (0, 1),
                    (-1, -1),
                    (-1, 1),
                    (1, -1),
                    (1, 1),
                ):
                    p = (e + de, f + df)
                    if p in union and p not in a and (not rows(p[0]) or not cols(p[1])):
                        a.add(p)
                        added = True
    if method == "grow-diag":
        return a
    for directional in (fwd, rev):
        for e in range(n):
            for f in range(m):
                if (e, f) in directional and (e, f) not in a:
                    free_e, free_f = not rows(e), not cols(f)
                    if (
                        (free_e and free_f)
                        if method == "grow-diag-final-and"
                        else (free_e or free_f)
                    ):
                        a.add((e, f))
    return a


@st.composite
def sentence_pairs(draw):
    n, m = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    cell = st.tuples(st.integers(0, n - 1), st.integers(0, m - 1))
    return draw(st.sets(cell, max_size=8)), draw(st.sets(cell, max_size=8)), n, m


@settings(max_examples=150, deadline=None)
@given(st.lists(sentence_pairs(), min_size=1, max_size=4))
def test_matches_reference_and_nests(corpus):
    results = {}
    for method in METHODS:
        out = symmetrize(
            [np.array(sorted(f), np.int64).reshape(-1, 2) for f, _, _, _ in corpus],
            [np.array(sorted(r), np.int64).reshape(-1, 2) for _, r, _, _ in corpus],
            [n for *_, n, _ in corpus],
            [m for *_, m in corpus],
            method,
        )
        results[method] = [{tuple(x) for x in a.tolist()} for a in out]
        for got, (f, r, n, m), arr in zip(results[method], corpus, out):
            assert got == reference(f, r, n, m, method)
            assert arr.tolist() == sorted(arr.tolist())  # row-major order
    for k in range(len(corpus)):
        inter, union = results["intersection"][k], results["union"][k]
        gd, gdf, gdfa = (
            results[x][k] for x in ("grow-diag", "grow-diag-final", "grow-diag-final-and")
        )
        # (gdfa ⊆ gdf does not hold: a link that final adds can block one that final-and adds)
        assert inter <= gd <= gdfa <= union and gd <= gdf <= union
