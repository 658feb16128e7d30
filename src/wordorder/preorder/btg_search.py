"""Decoding with a trained top-down BTG preorderer (docs/algorithms.md §BTG-SEARCH): the order of
a derivation, a whole corpus in one GIL-free kernel call per chunk, and one sentence's search
from Python. The beam search itself is :mod:`wordorder.preorder.btg_beam` (its names are
re-exported here).

Numba's on-disk cache does not notice edits to callees in other modules: after changing
:mod:`wordorder.preorder.btg_beam` or :mod:`wordorder.preorder.btg_features`, delete the
``btg_*.nbi/.nbc`` files in ``__pycache__``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from wordorder.preorder.btg_beam import MEMO_MAX_N, beam_search, replay

__all__ = ["MEMO_MAX_N", "beam_search", "decode_all", "order_from_actions", "replay", "search"]


@njit(cache=True)
def order_from_actions(n, acts):  # pragma: no cover - numba
    """[n] order of a complete derivation (docs/algorithms.md §BTG)."""
    order = np.arange(n)
    spans = np.empty((max(n - 1, 0), 3), np.int64)
    replay(n, acts, n - 1, spans)
    for t in range(n - 2, -1, -1):
        if acts[t, 1] == 1:
            b, e, p = spans[t, 0], spans[t, 1], acts[t, 0]
            tmp = order[b:e].copy()
            order[b : b + e - p] = tmp[p - b :]
            order[b + e - p : e] = tmp[: p - b]
    return order


@njit(cache=True, nogil=True)
def decode_all(hashes, offsets, W, shift, K, out):  # pragma: no cover - numba
    """Best orders of all sentences into ``out`` (flat, sentence s at offsets[s]:offsets[s+1]).

    Releases the GIL, so callers run chunks of a corpus on several threads (measured about as
    fast as a ``prange`` kernel, which takes seconds longer to compile).
    """
    no_ranks = np.zeros(0, np.int64)
    for s in range(len(offsets) - 1):
        a = offsets[s]
        n = offsets[s + 1] - a
        if n <= 1:
            for k in range(n):
                out[a + k] = k
        else:
            sys = np.empty((n - 1, 2), np.int64)
            ref = np.empty((1, 2), np.int64)
            # train = len(no_ranks) > 0 is False but not a literal: one compiled
            # beam_search serves all callers
            beam_search(
                hashes[a : a + n],
                n,
                no_ranks,
                len(no_ranks) > 0,
                W,
                shift,
                K,
                n <= MEMO_MAX_N,
                sys,
                ref,
            )
            out[a : a + n] = order_from_actions(n, sys)


def search(
    hashes: np.ndarray,
    weights: np.ndarray,
    hash_bits: int,
    beam: int,
    ranks: np.ndarray | None = None,
    memo: bool = True,
) -> tuple[np.ndarray, np.ndarray | None, bool]:
    """Beam search on one sentence from Python (tests, inspection).

    Args:
        hashes: [n, 3] uint64 attribute hashes (n >= 2); weights: [2**hash_bits, 2] float32.
        ranks: [n] constraint ranks for a training search (oracle and early update), or None.

    Returns:
        (system [T, 2] (pivot, label) actions, oracle [T, 2] actions or None, early update?).
    """
    hs = np.ascontiguousarray(hashes, dtype=np.uint64)
    n = len(hs)
    if n < 2:
        raise ValueError("a derivation needs at least two words")
    sys = np.zeros((n - 1, 2), np.int64)
    ref = np.zeros((n - 1, 2), np.int64)
    train = ranks is not None
    r = np.asarray(ranks if train else np.zeros(n), dtype=np.int64)
    T, early = beam_search(
        hs,
        n,
        r,
        train,
        np.ascontiguousarray(weights, np.float32),
        64 - hash_bits,
        beam,
        memo,
        sys,
        ref,
    )
    return sys[:T], (ref[:T] if train else None), bool(early)
