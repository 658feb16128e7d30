"""Word-order constraints for training the top-down BTG preorderer
(docs/algorithms.md §BTG-CONSTRAINT).

A constraint gives every source word a rank among the target-position sets of the aligned
words (-1 for unaligned words); a BTG derivation is *valid* for it when each of its splits keeps
the ranks in order: STR needs ``max L <= min R``, INV needs ``max R <= min L`` (unaligned words
ignored). Derivations are sequences of ``(pivot, label)`` actions on the top span of a stack
(right child expanded first), or equivalently the subtrees ``(b, e, p, label)`` they build;
``label`` 0 = STR, 1 = INV.

The comparison of target sets is the relation of the reference C++ code: ``A <= B`` iff every
``x`` in ``A - B`` is ``<=`` every element of ``B`` and every ``y`` in ``B - A`` is ``>=`` every
element of ``A``. Two words tie only when their sets are equal, and on a set of pairwise
comparable words the relation is a total preorder that agrees with sorting by ``(min, max)``,
so ranks are dense ranks of ``(min, max)`` once every pair has been checked.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numba import njit

from wordorder.errors import WordorderError

STR, INV = 0, 1

#: Reasons :func:`btg_constraint` gives for dropping a sentence.
REASONS = ("unaligned", "incomparable", "not_btg")


@njit(cache=True)
def _le(tgt: np.ndarray, a0: int, a1: int, b0: int, b1: int) -> bool:  # pragma: no cover - numba
    """C++ relation ``A <= B`` on sorted unique slices ``tgt[a0:a1]`` and ``tgt[b0:b1]``."""
    amax = tgt[a1 - 1]
    bmin = tgt[b0]
    i, j = a0, b0
    while i < a1 or j < b1:
        if j >= b1 or (i < a1 and tgt[i] < tgt[j]):
            if tgt[i] > bmin:  # tgt[i] is in A - B
                return False
            i += 1
        elif i >= a1 or tgt[j] < tgt[i]:
            if tgt[j] < amax:  # tgt[j] is in B - A
                return False
            j += 1
        else:
            i += 1
            j += 1
    return True


@njit(cache=True)
def _btg_parsable(seq: np.ndarray) -> bool:  # pragma: no cover - numba
    """Whether ranks ``seq`` (unaligned removed) split recursively into ordered halves.

    Taking the first valid split is enough: every contiguous part of a parsable sequence is
    parsable, so a greedy choice never blocks a parse.
    """
    m = len(seq)
    if m <= 1:
        return True
    stack = np.empty((m, 2), np.int64)
    stack[0, 0], stack[0, 1] = 0, m
    top = 1
    pmin = np.empty(m, np.int64)
    pmax = np.empty(m, np.int64)
    while top > 0:
        top -= 1
        b, e = stack[top, 0], stack[top, 1]
        for k in range(b, e):
            pmin[k] = seq[k] if k == b else min(pmin[k - 1], seq[k])
            pmax[k] = seq[k] if k == b else max(pmax[k - 1], seq[k])
        split = -1
        smin, smax = seq[e - 1], seq[e - 1]
        for p in range(e - 1, b, -1):  # right part [p, e), scanned right to left
            smin, smax = min(smin, seq[p]), max(smax, seq[p])
            if pmax[p - 1] <= smin or smax <= pmin[p - 1]:
                split = p
        if split < 0:
            return False
        if split - b > 1:
            stack[top, 0], stack[top, 1] = b, split
            top += 1
        if e - split > 1:
            stack[top, 0], stack[top, 1] = split, e
            top += 1
    return True


@njit(cache=True)
def _constraint(src: np.ndarray, tgt: np.ndarray, n: int) -> tuple:  # pragma: no cover - numba
    """Ranks and a status (0 ok, 1 unaligned, 2 incomparable, 3 not BTG)
    from sorted unique links."""
    start = np.zeros(n + 1, np.int64)
    for s in src:
        start[s + 1] += 1
    for i in range(n):
        start[i + 1] += start[i]
    ranks = np.full(n, -1, np.int64)
    m = 0
    aligned = np.empty(n, np.int64)
    for i in range(n):
        if start[i + 1] > start[i]:
            aligned[m] = i
            m += 1
    if m < 2:
        return ranks, 1
    for x in range(m):
        a = aligned[x]
        for y in range(x + 1, m):
            c = aligned[y]
            if not (
                _le(tgt, start[a], start[a + 1], start[c], start[c + 1])
                or _le(tgt, start[c], start[c + 1], start[a], start[a + 1])
            ):
                return ranks, 2
    lo = np.empty(m, np.int64)
    hi = np.empty(m, np.int64)
    for x in range(m):
        lo[x] = tgt[start[aligned[x]]]
        hi[x] = tgt[start[aligned[x] + 1] - 1]
    key = lo * (hi.max() + 1) + hi
    order = np.arange(m)  # insertion sort by key: m is a sentence length
    for k in range(1, m):
        x = order[k]
        j = k
        while j > 0 and key[order[j - 1]] > key[x]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = x
    r = -1
    for k in range(m):
        if k == 0 or key[order[k]] != key[order[k - 1]]:
            r += 1
        ranks[aligned[order[k]]] = r
    if not _btg_parsable(ranks[aligned[:m]]):
        return ranks, 3
    return ranks, 0


def btg_constraint(links: np.ndarray, n_src: int) -> tuple[np.ndarray | None, str]:
    """The training constraint of one sentence, or why the sentence is dropped.

    Args:
        links: [L, 2] int (source index i, target index j); duplicates are ignored.
        n_src: number of source words.

    Returns:
        ``(ranks [n_src] int64, "")``: dense ranks 0..R-1 of the aligned words (ties share a
        rank), -1 for unaligned words; or ``(None, reason)`` with reason ``"unaligned"`` (fewer
        than two aligned words: as in the reference code, such a sentence carries no order to
        learn), ``"incomparable"`` (two aligned words incomparable under the C++ relation) or
        ``"not_btg"`` (the ranks cannot be built by a BTG tree).

    Raises:
        WordorderError: a link outside the sentence.

    >>> btg_constraint(np.array([[0, 2], [1, 0], [2, 1]]), 3)[0].tolist()
    [2, 0, 1]
    """
    links = np.asarray(links, dtype=np.int64).reshape(-1, 2)
    if len(links) and (links.min() < 0 or links[:, 0].max() >= n_src):
        bad = links[(links[:, 0] < 0) | (links[:, 1] < 0) | (links[:, 0] >= n_src)][0]
        raise WordorderError(
            f"alignment link {bad[0]}-{bad[1]} is outside a sentence of {n_src} source words",
            hint="the alignment file must match the tokenized source line by line",
        )
    key = np.unique(links[:, 0] * (int(links[:, 1].max(initial=0)) + 1) + links[:, 1])
    width = int(links[:, 1].max(initial=0)) + 1
    ranks, status = _constraint(key // width, key % width, int(n_src))
    if status:
        return None, REASONS[status - 1]
    return ranks, ""


def split_valid(ranks: np.ndarray, b: int, e: int, p: int, label: int) -> bool:
    """Whether splitting span ``[b, e)`` at ``p`` with ``label`` keeps the constraint
    (docs/algorithms.md §BTG-CONSTRAINT)."""
    left, right = ranks[b:p], ranks[p:e]
    left, right = left[left >= 0], right[right >= 0]
    if len(left) == 0 or len(right) == 0:
        return True
    if label == STR:
        return bool(left.max() <= right.min())
    return bool(right.max() <= left.min())


def actions_to_subtrees(
    n: int, actions: Sequence[tuple[int, int]]
) -> list[tuple[int, int, int, int]]:
    """Replay ``(pivot, label)`` actions on the span stack; give the subtrees ``(b, e, p, label)``.

    Raises:
        ValueError: a pivot outside its span, or a sequence that is not a complete derivation.
    """
    stack = [(0, n)] if n >= 2 else []
    out = []
    for p, label in actions:
        if not stack:
            raise ValueError("more actions than the derivation has spans")
        b, e = stack.pop()
        if not b < p < e or label not in (STR, INV):
            raise ValueError(f"action ({p}, {label}) is not a split of span [{b}, {e})")
        out.append((b, e, int(p), int(label)))
        if p - b >= 2:
            stack.append((b, p))
        if e - p >= 2:
            stack.append((p, e))
    if stack:
        raise ValueError(
            f"{len(stack)} spans left unsplit: a derivation of {n} words needs {n - 1} actions"
        )
    return out


def derivation_valid(ranks: np.ndarray, n: int, actions: Sequence[tuple[int, int]]) -> bool:
    """Whether every split of a complete ``(pivot, label)`` derivation is valid for ``ranks``."""
    return all(split_valid(ranks, b, e, p, lab) for b, e, p, lab in actions_to_subtrees(n, actions))


def permutation_from_actions(n: int, actions: Sequence[tuple[int, int, int, int]]) -> np.ndarray:
    """The order a derivation produces (docs/algorithms.md §BTG).

    Args:
        n: sentence length.
        actions: subtrees ``(b, e, p, label)`` in action order, label 0 = STR, 1 = INV.

    Returns:
        [n] int64 ``order`` with ``order[k]`` = source index at output position k.

    >>> permutation_from_actions(3, [(0, 3, 1, INV), (1, 3, 2, STR)]).tolist()
    [1, 2, 0]
    """
    order = np.arange(n, dtype=np.int64)
    for b, e, p, label in reversed(list(actions)):
        if not 0 <= b < p < e <= n:
            raise ValueError(
                f"subtree ({b}, {e}, {p}) is not a split inside a sentence of {n} words"
            )
        if label == INV:
            order[b:e] = np.concatenate([order[p:e], order[b:p]])
    return order
