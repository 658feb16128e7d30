"""Gold preorders from word alignments (docs/algorithms.md §GOLD): the
upper bound of any preorderer.

Each aligned source word gets a key from its target positions (mean by default; min, median
or max as options); an unaligned word borrows the key of its nearest aligned neighbour on the
left (or on the right if it has none there; ``attach="right"`` prefers the right neighbour,
which keeps determiners with their nouns when translating into Japanese). The permutation is a
stable sort by (key, original position), so it is deterministic and removes every crossing
that a reordering of the source alone can remove.
"""

from __future__ import annotations

import numpy as np

KEYS = ("mean", "min", "median", "max")
ATTACH = ("left", "right")


def word_keys(links: np.ndarray, n_src: int, key: str = "mean") -> np.ndarray:
    """[n_src] float key of each source word from its target positions; NaN if unaligned.

    >>> word_keys(np.array([[0, 0], [1, 3], [3, 2], [4, 1]]), 5).tolist()
    [0.0, 3.0, nan, 2.0, 1.0]
    """
    if key not in KEYS:
        raise ValueError(f"unknown key {key!r}; use one of {', '.join(KEYS)}")
    links = np.asarray(links, dtype=np.int64).reshape(-1, 2)
    keys = np.full(n_src, np.nan)
    if len(links) == 0:
        return keys
    src, tgt = links[:, 0], links[:, 1].astype(float)
    count = np.bincount(src, minlength=n_src)
    aligned = count > 0
    if key == "mean":
        keys[aligned] = (np.bincount(src, weights=tgt, minlength=n_src) / np.maximum(count, 1))[
            aligned
        ]
    elif key == "min":
        np.fmin.at(keys, src, tgt)
    elif key == "max":
        np.fmax.at(keys, src, tgt)
    else:  # median of each word's target positions, from the links sorted by (source, target)
        order = np.lexsort((tgt, src))
        s, t = src[order], tgt[order]
        start = np.searchsorted(s, np.flatnonzero(aligned))
        c = count[aligned]
        keys[aligned] = (t[start + (c - 1) // 2] + t[start + c // 2]) / 2
    return keys


def _fill(keys: np.ndarray, forward: bool) -> np.ndarray:
    """Carry the last non-NaN key forward (or backward) over NaN positions."""
    k = keys if forward else keys[::-1]
    idx = np.where(np.isnan(k), -1, np.arange(len(k)))
    np.maximum.accumulate(idx, out=idx)
    filled = np.where(idx >= 0, k[np.maximum(idx, 0)], np.nan)
    return filled if forward else filled[::-1]


def gold_permutation(
    links: np.ndarray, n_src: int, key: str = "mean", attach: str = "left"
) -> np.ndarray:
    """The gold preorder ``perm`` of one sentence (``reordered[k] = src[perm[k]]``).

    A sentence without any link keeps its order.

    >>> gold_permutation(np.array([[0, 0], [1, 3], [3, 2], [4, 1]]), 5).tolist()
    [0, 4, 3, 1, 2]
    >>> gold_permutation(np.array([[0, 0], [1, 3], [3, 2], [4, 1]]), 5, attach="right").tolist()
    [0, 4, 2, 3, 1]
    """
    if attach not in ATTACH:
        raise ValueError(f"unknown attach {attach!r}; use left or right")
    keys = word_keys(links, n_src, key)
    if n_src == 0 or np.isnan(keys).all():
        return np.arange(n_src, dtype=np.int64)
    first, second = (True, False) if attach == "left" else (False, True)
    filled = _fill(keys, first)
    filled = np.where(np.isnan(filled), _fill(keys, second), filled)
    return np.lexsort((np.arange(n_src), filled)).astype(np.int64)


def crossings(links: np.ndarray, perm: np.ndarray | None = None) -> int:
    """Number of crossing link pairs, #{(i,j),(i',j'): (i-i')(j-j') < 0},
    after applying ``perm``."""
    links = np.asarray(links, dtype=np.int64).reshape(-1, 2)
    src = links[:, 0]
    if perm is not None:
        position = np.empty(len(perm), dtype=np.int64)
        position[np.asarray(perm)] = np.arange(len(perm))
        src = position[src]
    di = src[:, None] - src[None, :]
    dj = links[:, 1][:, None] - links[:, 1][None, :]
    return int(np.count_nonzero(np.triu(di * dj < 0, k=1)))
