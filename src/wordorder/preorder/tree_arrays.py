"""The binary source trees of a corpus as flat arrays (:class:`TreeArrays`, CSR by sentence), the
form in which the recursive-NN preorderer's oracle, batching and label application read them
(:mod:`wordorder.preorder.rvnn_oracle`, which re-exports these names). Flattening checks every
tree against its sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wordorder.errors import WordorderError
from wordorder.syntax.binarize import Tree


@dataclass
class TreeArrays:
    """The binary trees of a corpus as flat arrays.

    Attributes:
        n: [T] int64, words per sentence.
        node_offsets: [T+1] int64. The internal nodes of sentence t are rows
            ``node_offsets[t]:node_offsets[t+1]``, n_t − 1 of them (none for n_t <= 1), in
            post-order.
        children: [N, 2] int64, local ids of the left and right child. A leaf's id is its token
            index (< n_t); the k-th internal node of the sentence in post-order has id n_t + k.
        spans: [N, 3] int64, (start, mid, end): the node covers [start, end), and its left
            child covers [start, mid).
        height: [N] int64; a node over two leaves has height 1.
    """

    n: np.ndarray
    node_offsets: np.ndarray
    children: np.ndarray
    spans: np.ndarray
    height: np.ndarray

    def __len__(self) -> int:
        return len(self.n)


def _bad_tree(t: int, what: str, path: str | Path | None) -> WordorderError:
    return WordorderError(
        f"bad binary tree: {what}",
        path=path,
        line=t + 1,
        hint="trees must be binary, with the words 0..n-1 as leaves from left to right",
    )


def flatten_trees(
    trees: Sequence[Tree | None],
    lengths: Sequence[int] | None = None,
    path: str | Path | None = None,
) -> TreeArrays:
    """Flatten trees; ``None`` is an empty sentence. ``lengths`` are checked when given.

    This is a Python walk over every node, run once per corpus to prepare the data. The hot
    paths (oracle, batching, applying labels) work on the arrays.

    Raises:
        WordorderError: a tree whose leaves are not 0..n−1 from left to right, or whose size is
            not the sentence length. The error names the 1-based line ``t + 1``.
    """
    if lengths is not None and len(lengths) != len(trees):
        raise WordorderError(f"{len(trees)} trees for {len(lengths)} sentences", path=path)
    n_all = np.zeros(len(trees), dtype=np.int64)
    counts = np.zeros(len(trees), dtype=np.int64)
    rows: list[tuple[int, int, int, int, int, int]] = []  # left, right, start, mid, end, height
    for t, tree in enumerate(trees):
        n = 0
        if tree is not None:
            if isinstance(tree, (int, np.integer)) and not isinstance(tree, bool):
                if int(tree) != 0:
                    raise _bad_tree(t, f"a one-word tree must be the leaf 0, got {tree}", path)
                n = 1
            else:
                n = _walk(tree, rows, t, path)
        if lengths is not None and n != lengths[t]:
            raise _bad_tree(
                t, f"the tree has {n} leaves but the sentence has {lengths[t]} words", path
            )
        n_all[t], counts[t] = n, max(n - 1, 0)
    table = np.array(rows, dtype=np.int64).reshape(-1, 6)
    offsets = np.zeros(len(trees) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return TreeArrays(
        n_all, offsets, table[:, 0:2].copy(), table[:, 2:5].copy(), table[:, 5].copy()
    )


def _walk(tree: Tree, rows: list, t: int, path: str | Path | None) -> int:
    """Append the post-order internal nodes of one tree to ``rows``; return its number of leaves."""
    first = len(rows)
    # Each stack entry is (node, expanded). Results hold (local id, start, end, height).
    stack: list[tuple[Tree, bool]] = [(tree, False)]
    results: list[tuple[int, int, int, int]] = []
    leaf_count = 0
    while stack:
        node, expanded = stack.pop()
        if isinstance(node, tuple) and len(node) == 2:
            if expanded:
                (lid, ls, le, lh), (rid, _rs, re, rh) = results[-2], results[-1]
                del results[-2:]
                k = len(rows) - first
                rows.append((lid, rid, ls, le, re, max(lh, rh) + 1))
                results.append((-1 - k, ls, re, max(lh, rh) + 1))  # negative: internal, fixed below
            else:
                stack += [(node, True), (node[1], False), (node[0], False)]
        elif isinstance(node, (int, np.integer)) and not isinstance(node, bool):
            if int(node) != leaf_count:
                raise _bad_tree(t, f"leaf {int(node)} where word {leaf_count} was expected", path)
            results.append((leaf_count, leaf_count, leaf_count + 1, 0))
            leaf_count += 1
        else:
            raise _bad_tree(t, f"a node must be an int leaf or a pair, got {node!r}", path)
    n = leaf_count
    for r in range(first, len(rows)):  # internal ids −1−k become n + k
        lid, rid, s, m, e, h = rows[r]
        rows[r] = (n - 1 - lid if lid < 0 else lid, n - 1 - rid if rid < 0 else rid, s, m, e, h)
    return n
