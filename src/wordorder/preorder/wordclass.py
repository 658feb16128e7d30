"""Word classes by exchange clustering (Kneser & Ney 1993; Martin, Liermann & Ney 1998).

The BTG preorderer (Nakagawa 2015) uses 256 mkcls/Brown classes as a word attribute. The
exchange algorithm maximizes the class-bigram log-likelihood, which up to a constant is

    F = Σ_{c,d} f(N(c, d)) − 2 Σ_c f(N(c)),   f(x) = x log x,

with N(c, d) the count of class bigrams and N(c) of class unigrams. Every sentence is wrapped
in a boundary token ``<s>`` with its own fixed class, so each token is counted once as a left
and once as a right context and both class marginals equal N(c). Words are visited in order
of decreasing frequency; each is taken out of its class and put into the class that gives the
largest F (its own unless another is strictly better), so F never decreases. The gain of class
``b`` needs only the classes of ``w``'s left and right neighbours: one visit costs
O(context types + context classes × classes). Training stops after ``iterations`` passes or
when no word moves.

Initialization (depends on ``seed``): the ``n_classes`` most frequent words get one class
each, every other word a random class.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numba
import numpy as np

from wordorder.errors import WordorderError
from wordorder.preorder.wordclass_file import (
    UNKNOWN,
    classes_of,
    read_word_classes,
    write_word_classes,
)
from wordorder.progress import progress

__all__ = [
    "UNKNOWN",
    "Clustering",
    "classes_of",
    "cluster_words",
    "read_word_classes",
    "train_word_classes",
    "write_word_classes",
]


@numba.njit(cache=True, inline="always")
def _xlogx(x: np.int64, table: np.ndarray) -> float:
    if x < table.shape[0]:
        return table[x]
    return x * np.log(x)


@numba.njit(cache=True)
def _objective(pair: np.ndarray, count: np.ndarray, table: np.ndarray) -> float:
    """F of class-bigram counts ``pair [C+1, C+1]`` and class counts ``count [C+1]``."""
    total = 0.0
    for c in range(pair.shape[0]):
        for d in range(pair.shape[1]):
            total += _xlogx(pair[c, d], table)
        total -= 2.0 * _xlogx(count[c], table)
    return total


@numba.njit(cache=True)
def _exchange_pass(
    order: np.ndarray,
    cls: np.ndarray,
    freq: np.ndarray,
    r_ptr: np.ndarray,
    r_idx: np.ndarray,
    r_cnt: np.ndarray,
    l_ptr: np.ndarray,
    l_idx: np.ndarray,
    l_cnt: np.ndarray,
    pair: np.ndarray,
    count: np.ndarray,
    n_classes: int,
    table: np.ndarray,
) -> int:
    """Visit every word in ``order`` once, moving it to its best class. Returns the number of moves.

    ``r_*``/``l_*``: CSR of right/left neighbour words and bigram counts per word [V+1].
    ``pair``, ``count``: class-bigram [C+1, C+1] and class [C+1] counts, updated in place.
    """
    n_all = pair.shape[0]
    left = np.zeros(n_all, np.int64)  # left[c]: bigrams (v, w) with v ≠ w in class c
    right = np.zeros(n_all, np.int64)
    touched_l = np.empty(n_all, np.int64)
    touched_r = np.empty(n_all, np.int64)
    moves = 0
    for w in order:
        a = cls[w]
        nw = freq[w]
        self_pairs = 0
        n_l = 0
        n_r = 0
        for k in range(r_ptr[w], r_ptr[w + 1]):
            u = r_idx[k]
            if u == w:
                self_pairs += r_cnt[k]
                continue
            c = cls[u]
            if right[c] == 0:
                touched_r[n_r] = c
                n_r += 1
            right[c] += r_cnt[k]
        for k in range(l_ptr[w], l_ptr[w + 1]):
            v = l_idx[k]
            if v == w:
                continue
            c = cls[v]
            if left[c] == 0:
                touched_l[n_l] = c
                n_l += 1
            left[c] += l_cnt[k]
        # take w out of class a
        for t in range(n_l):
            pair[touched_l[t], a] -= left[touched_l[t]]
        for t in range(n_r):
            pair[a, touched_r[t]] -= right[touched_r[t]]
        pair[a, a] -= self_pairs
        count[a] -= nw
        best = a
        best_gain = -np.inf
        gain_a = 0.0
        for b in range(n_classes):
            g = 0.0
            for t in range(n_l):
                c = touched_l[t]
                if c != b:
                    g += _xlogx(pair[c, b] + left[c], table) - _xlogx(pair[c, b], table)
            for t in range(n_r):
                c = touched_r[t]
                if c != b:
                    g += _xlogx(pair[b, c] + right[c], table) - _xlogx(pair[b, c], table)
            bb = pair[b, b]
            g += _xlogx(bb + left[b] + right[b] + self_pairs, table) - _xlogx(bb, table)
            g -= 2.0 * (_xlogx(count[b] + nw, table) - _xlogx(count[b], table))
            if b == a:
                gain_a = g
            elif g > best_gain:
                best_gain = g
                best = b
        # move only on a real improvement, so rounding cannot make F go down or cycle
        if best_gain <= gain_a + 1e-9 * max(1.0, abs(gain_a)):
            best = a
        else:
            moves += 1
        for t in range(n_l):
            pair[touched_l[t], best] += left[touched_l[t]]
        for t in range(n_r):
            pair[best, touched_r[t]] += right[touched_r[t]]
        pair[best, best] += self_pairs
        count[best] += nw
        cls[w] = best
        for t in range(n_l):
            left[touched_l[t]] = 0
        for t in range(n_r):
            right[touched_r[t]] = 0
    return moves


@dataclass
class Clustering:
    """Result of :func:`cluster_words`: classes and the objective F after
    init and after each pass."""

    classes: dict[str, int]
    objective: list[float]
    moves: list[int]


def _csr(rows: np.ndarray, cols: np.ndarray, counts: np.ndarray, n_rows: int) -> tuple:
    order = np.lexsort((cols, rows))
    ptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=ptr[1:])
    return ptr, cols[order], counts[order]


def cluster_words(
    sentences: Iterable[Sequence[str]],
    n_classes: int = 256,
    iterations: int = 10,
    seed: int = 1,
    progress_bar: bool = True,
) -> Clustering:
    """Exchange clustering of the words of tokenized sentences (see the module docstring)."""
    if n_classes < 2:
        raise WordorderError(f"word classes: need at least 2 classes, not {n_classes}")
    sentences = [s for s in sentences if len(s)]
    freq_counter = Counter(itertools.chain.from_iterable(sentences))
    # frequency order, ties by first occurrence (Counter keeps insertion order): deterministic
    words = [w for w, _ in sorted(freq_counter.items(), key=lambda kv: -kv[1])]
    n_words = len(words)
    if n_words == 0:
        return Clustering({}, [0.0], [])
    index = {w: k for k, w in enumerate(words)}
    boundary = n_words  # id of <s>; its class is n_classes, never moved
    lens = np.fromiter(map(len, sentences), np.int64, len(sentences))
    ids = np.fromiter(
        map(index.__getitem__, itertools.chain.from_iterable(sentences)), np.int64, int(lens.sum())
    )
    # the corpus as one id stream: <s> w w w <s> w w <s> ... <s>; token t of
    # sentence s sits at t + s + 1
    seq = np.full(len(ids) + len(lens) + 1, boundary, np.int64)
    seq[np.arange(len(ids)) + np.repeat(np.arange(len(lens)), lens) + 1] = ids
    keys, pair_counts = np.unique(seq[:-1] * (n_words + 1) + seq[1:], return_counts=True)
    first, second = keys // (n_words + 1), keys % (n_words + 1)
    r_ptr, r_idx, r_cnt = _csr(first, second, pair_counts, n_words + 1)
    l_ptr, l_idx, l_cnt = _csr(second, first, pair_counts, n_words + 1)
    freq = np.bincount(seq[1:], minlength=n_words + 1).astype(np.int64)

    rng = np.random.default_rng(seed)
    cls = np.empty(n_words + 1, np.int64)
    top = min(n_classes, n_words)
    cls[:top] = np.arange(top)
    cls[top:n_words] = rng.integers(0, n_classes, n_words - top)
    cls[boundary] = n_classes
    pair = np.zeros((n_classes + 1, n_classes + 1), np.int64)
    np.add.at(pair, (cls[first], cls[second]), pair_counts)
    count = np.bincount(cls, weights=freq, minlength=n_classes + 1).astype(np.int64)
    table = np.zeros(min(int(freq.sum()) + 2, 1 << 22), np.float64)
    table[1:] = np.arange(1, len(table)) * np.log(np.arange(1, len(table)))

    order = np.arange(n_words, dtype=np.int64)
    objective = [_objective(pair, count, table)]
    moves: list[int] = []
    bar = progress(
        total=iterations,
        desc=f"word classes ({n_words} words, {n_classes} classes)",
        unit=" passes",
        enabled=progress_bar,
    )
    for _ in range(iterations):
        moved = _exchange_pass(
            order,
            cls,
            freq,
            r_ptr,
            r_idx,
            r_cnt,
            l_ptr,
            l_idx,
            l_cnt,
            pair,
            count,
            n_classes,
            table,
        )
        objective.append(_objective(pair, count, table))
        moves.append(int(moved))
        bar.update(1)
        bar.set_postfix(moved=moved, F=f"{objective[-1]:.6g}")
        if moved == 0:
            break
    bar.close()
    return Clustering({w: int(cls[k]) for k, w in enumerate(words)}, objective, moves)


def train_word_classes(
    sentences: list[list[str]],
    n_classes: int = 256,
    iterations: int = 10,
    seed: int = 1,
    progress_bar: bool = True,
) -> dict[str, int]:
    """Word -> class id in ``[0, n_classes)``, by exchange clustering; deterministic for a seed."""
    return cluster_words(sentences, n_classes, iterations, seed, progress_bar).classes
