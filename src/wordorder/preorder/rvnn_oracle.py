"""Node labels for recursive-NN preordering: the τ oracle and applying labels.

Every internal node of a binary tree over the source gets a label, STRAIGHT (0, keep ``l r``) or
INVERTED (1, emit ``r l``). The oracle (Kawara et al. 2018; docs/algorithms.md §RVNN) works
bottom-up. At a node it builds two candidate orders of the whole sentence, one with the node as
``l r`` and one as ``r l``. For each order it reads the alignment in target order: for each target
word in turn, the current positions of its source words, in ascending original source index as
in a GIZA A3 line. Each candidate is scored by τ(a) = 2·#{i<j: a_i <= a_j}/C(|a|,2) − 1, and the
label is INVERTED iff τ_inv > τ_str strictly.

The two candidates differ only in the order of pairs of entries with one source word in ``l`` and
one in ``r``. Pairs inside one child keep their relative order, and a word outside the node stays
on the same side of the node's span. For such a pair with target positions j_l and j_r, the
straight order is concordant iff j_l <= j_r: when j_l == j_r, the ``l`` word is listed first.
The inverted order is concordant iff j_l > j_r. Hence

    INVERTED  iff  #{j_l > j_r} > #{j_l < j_r} + #{j_l == j_r},

counted over all link pairs across the split. This does not depend on how the rest of the
sentence is ordered, so all nodes of a corpus are labelled independently by one numba kernel.
Every link pair is counted at exactly one node, the lowest one that separates the two words,
so a sentence costs O(L²) plus O(nodes · log L).

Trees are stored flat, CSR by sentence (:class:`~wordorder.preorder.tree_arrays.TreeArrays`,
re-exported here). A permutation satisfies ``reordered[k] = src[perm[k]]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

from wordorder.errors import WordorderError
from wordorder.preorder.tree_arrays import TreeArrays, flatten_trees
from wordorder.syntax.binarize import Tree

__all__ = [
    "INVERTED",
    "STRAIGHT",
    "LinkArrays",
    "TreeArrays",
    "apply_labels",
    "apply_labels_corpus",
    "flatten_trees",
    "kawara_tau",
    "oracle_labels",
    "oracle_labels_corpus",
    "pack_links",
]

STRAIGHT, INVERTED = 0, 1


def kawara_tau(a: Sequence[int] | np.ndarray) -> float:
    """τ(a) = 2·#{i<j: a_i <= a_j}/C(|a|,2) − 1, ties concordant; 0 when |a| <= 1
    (docs/algorithms.md §RVNN).

    This is the oracle's definition, kept for reference and tests: the kernel never needs it.

    >>> kawara_tau([2, 0, 1]), kawara_tau([0, 0]), kawara_tau([3])
    (-0.3333333333333333, 1.0, 0.0)
    """
    a = np.asarray(a)
    m = len(a)
    if m <= 1:
        return 0.0
    concordant = int(np.count_nonzero(np.triu(a[:, None] <= a[None, :], k=1)))
    return (4 * concordant - m * (m - 1)) / (m * (m - 1))  # one division: exact for small m


@dataclass
class LinkArrays:
    """Alignment links of a corpus, CSR by sentence and sorted by (source, target) within each.

    Attributes:
        offsets: [T+1] int64; the links of sentence t are rows ``offsets[t]:offsets[t+1]``.
        src, tgt: [L] int64 source and target word indices.
    """

    offsets: np.ndarray
    src: np.ndarray
    tgt: np.ndarray

    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)


def pack_links(
    links: Sequence[np.ndarray], lengths: Sequence[int], path: str | Path | None = None
) -> LinkArrays:
    """Stack per-sentence [L, 2] (source i, target j) links, checked against the source lengths.

    Duplicate links are kept: each one adds an entry, as in the reference code.

    Raises:
        WordorderError: a malformed array, or a source index outside the sentence. The error
            names the 1-based line.
    """
    if len(links) != len(lengths):
        raise WordorderError(
            f"{len(links)} alignment lines for {len(lengths)} sentences", path=path
        )
    arrays = []
    for t, lk in enumerate(links):
        a = np.asarray(lk)
        if a.size == 0:
            a = np.zeros((0, 2), dtype=np.int64)
        if a.ndim != 2 or a.shape[1] != 2 or a.dtype.kind not in "iu":
            raise WordorderError(
                f"links must be an integer [L, 2] array, got shape {a.shape} {a.dtype}",
                path=path,
                line=t + 1,
            )
        if len(a) and (a.min() < 0 or a[:, 0].max() >= lengths[t]):
            raise WordorderError(
                f"a link points outside the {lengths[t]}-word source sentence",
                path=path,
                line=t + 1,
                hint="are the alignments line-aligned with the source?",
            )
        arrays.append(a.astype(np.int64, copy=False))
    counts = np.array([len(a) for a in arrays], dtype=np.int64)
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    flat = np.concatenate(arrays) if arrays else np.zeros((0, 2), dtype=np.int64)
    sent = np.repeat(np.arange(len(arrays)), counts)
    order = np.lexsort((flat[:, 1], flat[:, 0], sent))
    return LinkArrays(offsets, flat[order, 0].copy(), flat[order, 1].copy())


@njit(cache=True)
def _oracle_kernel(node_offsets, spans, link_offsets, src, tgt, out):  # pragma: no cover - numba
    for t in range(len(node_offsets) - 1):
        lo, hi = link_offsets[t], link_offsets[t + 1]
        s_src = src[lo:hi]
        for k in range(node_offsets[t], node_offsets[t + 1]):
            a = lo + np.searchsorted(s_src, spans[k, 0])
            b = lo + np.searchsorted(s_src, spans[k, 1])
            c = lo + np.searchsorted(s_src, spans[k, 2])
            later = 0  # j_l > j_r: only the inverted order is concordant
            other = 0  # j_l <= j_r: only the straight order is
            for x in range(a, b):
                for y in range(b, c):
                    if tgt[x] > tgt[y]:
                        later += 1
                    else:
                        other += 1
            out[k] = 1 if later > other else 0


def oracle_labels_corpus(trees: TreeArrays, links: LinkArrays) -> np.ndarray:
    """Oracle labels of every internal node of a corpus: [N] int8, rows as in ``trees``."""
    out = np.zeros(len(trees.spans), dtype=np.int8)
    _oracle_kernel(trees.node_offsets, trees.spans, links.offsets, links.src, links.tgt, out)
    return out


@njit(cache=True)
def _apply_kernel(n, node_offsets, spans, labels, perm_offsets, out):  # pragma: no cover - numba
    for t in range(len(n)):
        base = perm_offsets[t]
        for i in range(n[t]):
            out[base + i] = i
        # Post-order: both children are already in their final internal order, so inverting a
        # node just rotates its block, moving each child's block as a whole.
        for k in range(node_offsets[t], node_offsets[t + 1]):
            if labels[k] == 1:
                s, m, e = base + spans[k, 0], base + spans[k, 1], base + spans[k, 2]
                block = out[s:e].copy()
                out[s : s + e - m] = block[m - s :]
                out[s + e - m : e] = block[: m - s]


def apply_labels_corpus(trees: TreeArrays, labels: np.ndarray) -> list[np.ndarray]:
    """Permutations of all sentences from node labels ([N], rows as in ``trees``)."""
    labels = np.asarray(labels, dtype=np.int8)
    if labels.shape != (len(trees.spans),):
        raise ValueError(f"need {len(trees.spans)} labels, got shape {labels.shape}")
    perm_offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum(trees.n, out=perm_offsets[1:])
    out = np.empty(perm_offsets[-1], dtype=np.int64)
    _apply_kernel(trees.n, trees.node_offsets, trees.spans, labels, perm_offsets, out)
    return np.split(out, perm_offsets[1:-1])


def oracle_labels(tree: Tree, links: np.ndarray) -> np.ndarray:
    """Oracle labels of one tree: [n−1] int8 in post-order (the order of ``spans(tree)``).

    Args:
        tree: binary tree whose leaves are 0..n−1 from left to right.
        links: [L, 2] int (source i, target j); unaligned words simply have no link.

    >>> oracle_labels(((0, 1), 2), np.array([[2, 0], [0, 1], [1, 2]])).tolist()   # C A B
    [0, 1]
    """
    flat = flatten_trees([tree])
    return oracle_labels_corpus(flat, pack_links([links], [int(flat.n[0])]))


def apply_labels(tree: Tree, labels: np.ndarray) -> np.ndarray:
    """The permutation of one tree under post-order labels (1: emit right child before left).

    >>> apply_labels(((0, 1), 2), np.array([0, 1])).tolist()
    [2, 0, 1]
    """
    return apply_labels_corpus(flatten_trees([tree]), labels)[0]
