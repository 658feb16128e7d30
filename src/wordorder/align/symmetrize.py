"""Symmetrization of two directional word alignments (Koehn et al. 2003; Koehn 2010, §4.5.3).

Both inputs are in source-target orientation (``i`` a source word, ``j`` a target word).
``grow-diag-final-and`` starts from the intersection, repeatedly adds union links that touch
an existing link horizontally, vertically or diagonally and whose source or target word is
still unaligned ("grow-diag"), then adds the remaining forward and then reverse links whose
source *and* target words are both still unaligned ("final-and"; "final" needs only one).
The scans follow Koehn's pseudo-code order (rows, then columns, neighbours in the order
left, up, right, down, then the diagonals), which matters because a link added during a scan
changes which later candidates qualify.

One numba kernel runs over the whole corpus in the flat form of :mod:`wordorder.align.links`
(``links [N, 2]``, ``offsets [S + 1]``), with two ``n × m`` scratch grids per sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

METHODS = ("grow-diag-final-and", "grow-diag-final", "grow-diag", "intersection", "union")

# (d_source, d_target): the four direct neighbours, then the four diagonal ones
_NEIGHBOURS = np.array(
    [[-1, 0], [0, -1], [1, 0], [0, 1], [-1, -1], [-1, 1], [1, -1], [1, 1]], np.int64
)


@numba.njit(cache=True)
def _symmetrize(
    fwd: np.ndarray,
    fwd_off: np.ndarray,
    rev: np.ndarray,
    rev_off: np.ndarray,
    src_lens: np.ndarray,
    tgt_lens: np.ndarray,
    method: int,
    neighbours: np.ndarray,
) -> tuple:
    """method: 0 gdfa, 1 gdf, 2 gd, 3 intersection, 4 union. Returns (links [N,2] row-major
    per sentence, offsets)."""
    n_sent = src_lens.shape[0]
    out = np.empty((fwd.shape[0] + rev.shape[0], 2), np.int64)
    offsets = np.zeros(n_sent + 1, np.int64)
    size = 1
    for s in range(n_sent):
        size = max(size, src_lens[s] * tgt_lens[s])
    # grid cell codes: bit 1 forward link, bit 2 reverse link; `cur` marks the symmetrized set
    grid = np.zeros(size, np.uint8)
    cur = np.zeros(size, np.uint8)
    max_len = max(1, src_lens.max() if n_sent else 1, tgt_lens.max() if n_sent else 1)
    row_n = np.zeros(max_len, np.int64)  # links of the current set per source word
    col_n = np.zeros(max_len, np.int64)
    p = 0
    for s in range(n_sent):
        n = src_lens[s]
        m = tgt_lens[s]
        for k in range(fwd_off[s], fwd_off[s + 1]):
            grid[fwd[k, 0] * m + fwd[k, 1]] |= 1
        for k in range(rev_off[s], rev_off[s + 1]):
            grid[rev[k, 0] * m + rev[k, 1]] |= 2
        for c in range(n * m):
            if grid[c] == 3 or (method == 4 and grid[c] != 0):
                cur[c] = 1
                row_n[c // m] += 1
                col_n[c % m] += 1
        if method <= 2:
            added = True
            while added:
                added = False
                for e in range(n):
                    for f in range(m):
                        if cur[e * m + f] == 0:
                            continue
                        for t in range(neighbours.shape[0]):
                            e2 = e + neighbours[t, 0]
                            f2 = f + neighbours[t, 1]
                            if e2 < 0 or e2 >= n or f2 < 0 or f2 >= m:
                                continue
                            c = e2 * m + f2
                            if cur[c] == 0 and grid[c] != 0 and (row_n[e2] == 0 or col_n[f2] == 0):
                                cur[c] = 1
                                row_n[e2] += 1
                                col_n[f2] += 1
                                added = True
            if method <= 1:
                # final(-and) with the forward links first, then the reverse ones
                for bit in (1, 2):
                    for e in range(n):
                        for f in range(m):
                            c = e * m + f
                            if cur[c] or not (grid[c] & bit):
                                continue
                            if (method == 0 and row_n[e] == 0 and col_n[f] == 0) or (
                                method == 1 and (row_n[e] == 0 or col_n[f] == 0)
                            ):
                                cur[c] = 1
                                row_n[e] += 1
                                col_n[f] += 1
        for c in range(n * m):
            if cur[c]:
                out[p, 0] = c // m
                out[p, 1] = c % m
                p += 1
            cur[c] = 0
            grid[c] = 0
        row_n[:n] = 0
        col_n[:m] = 0
        offsets[s + 1] = p
    return out[:p], offsets


def symmetrize_flat(
    fwd: np.ndarray,
    fwd_offsets: np.ndarray,
    rev: np.ndarray,
    rev_offsets: np.ndarray,
    src_lens: Sequence[int] | np.ndarray,
    tgt_lens: Sequence[int] | np.ndarray,
    method: str = "grow-diag-final-and",
) -> tuple[np.ndarray, np.ndarray]:
    """Symmetrize a corpus in flat form.

    Args:
        fwd, rev: ``[N, 2]`` and ``[M, 2]`` int64 links, source-target orientation, in range.
        fwd_offsets, rev_offsets: ``[S + 1]`` sentence boundaries into ``fwd`` and ``rev``.
        src_lens, tgt_lens: ``[S]`` sentence lengths in words.
        method: one of :data:`METHODS`.

    Returns:
        ``(links [K, 2], offsets [S + 1])``, each sentence's links sorted by ``(i, j)``.
    """
    if method not in METHODS:
        raise ValueError(f"unknown symmetrization {method!r}; choose one of {', '.join(METHODS)}")
    sl = np.asarray(src_lens, np.int64)
    tl = np.asarray(tgt_lens, np.int64)
    if not (len(fwd_offsets) == len(rev_offsets) == len(sl) + 1 == len(tl) + 1):
        raise ValueError(
            "forward, reverse and the sentence lengths cover different numbers of sentences"
        )
    for links, off in ((fwd, fwd_offsets), (rev, rev_offsets)):
        sent = np.repeat(np.arange(len(sl)), np.diff(off))
        if len(links) and (
            (links < 0).any() or (links[:, 0] >= sl[sent]).any() or (links[:, 1] >= tl[sent]).any()
        ):
            raise ValueError("a link is out of range for its sentence")
    return _symmetrize(
        np.ascontiguousarray(fwd, np.int64).reshape(-1, 2),
        np.asarray(fwd_offsets, np.int64),
        np.ascontiguousarray(rev, np.int64).reshape(-1, 2),
        np.asarray(rev_offsets, np.int64),
        sl,
        tl,
        METHODS.index(method),
        _NEIGHBOURS,
    )


def symmetrize(
    fwd: Sequence[np.ndarray],
    rev: Sequence[np.ndarray],
    src_lens: Sequence[int] | np.ndarray,
    tgt_lens: Sequence[int] | np.ndarray,
    method: str = "grow-diag-final-and",
) -> list[np.ndarray]:
    """Symmetrize per-sentence ``[L, 2]`` link arrays (see :func:`symmetrize_flat`)."""
    from wordorder.align.links import flatten, unflatten

    return unflatten(*symmetrize_flat(*flatten(fwd), *flatten(rev), src_lens, tgt_lens, method))
