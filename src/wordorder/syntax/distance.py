"""Syntax-distance masks (Chen et al. 2018, §3.1): M[i][j] = edges between
words i and j in the tree.

The masks are a pure function of the head array, so the pipeline stores only heads (CoNLL-U)
and computes masks per batch where a model needs them, never J×J for a whole corpus.

Method: with A[i, k] = 1 iff k is i or an ancestor of i, the number of common ancestors of i
and j is depth(lca(i, j)) + 1, so M = depth_i + depth_j − 2·depth(lca) = d_i + d_j − 2(A·Aᵀ − 1).
A is built by walking all tokens up the tree at once (one vectorised step per tree level), and
A·Aᵀ is one (batched) matrix product: no Python loop over tokens.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch loads in the batch functions: the tree code is read by jobs without it
    import torch

PAD_DISTANCE = -1  # value of mask entries that involve padding in the batched form


def ancestor_matrix(heads: Sequence[int] | np.ndarray) -> np.ndarray:
    """[n, n] bool: A[i, k] iff token k is token i or one of its ancestors.

    Args:
        heads: [n] 1-based heads, 0 for the root (CoNLL-U convention).

    Raises:
        ValueError: a head is out of range or the heads contain a cycle.
    """
    heads = np.asarray(heads, dtype=np.int64)
    n = heads.shape[0]
    if heads.ndim != 1 or (n and (heads.min() < 0 or heads.max() > n)):
        raise ValueError(f"heads must be a 1-D array of values in 0..{n}, got {heads.tolist()}")
    parent = heads - 1  # -1 marks "above the root"
    anc = np.zeros((n, n), dtype=bool)
    rows = np.arange(n)
    cur = rows.copy()
    active = np.ones(n, dtype=bool)
    for _ in range(n):
        anc[rows[active], cur[active]] = True
        cur = np.where(active, parent[np.maximum(cur, 0)], -1)
        active &= cur >= 0
        if not active.any():
            return anc
    raise ValueError(f"the heads contain a cycle: {heads.tolist()}")


def tree_distances(heads: Sequence[int] | np.ndarray) -> np.ndarray:
    """[n, n] int64 syntax-distance mask of one tree (symmetric, 0 on the diagonal).

    >>> tree_distances([2, 0, 2]).tolist()   # "the cat sat"-like: 1 <- 2 -> 3
    [[0, 1, 2], [1, 0, 1], [2, 1, 0]]
    """
    anc = ancestor_matrix(heads).astype(np.int64)
    depth = anc.sum(1) - 1
    common = anc @ anc.T
    return depth[:, None] + depth[None, :] - 2 * (common - 1)


def batch_tree_distances(
    heads: torch.Tensor, lengths: torch.Tensor, sync_free: bool = False
) -> torch.Tensor:
    """Masks for a padded batch of trees, on the device of ``heads``.

    Args:
        heads: [B, J] long, 1-based heads (0 = root); values at padding are ignored.
        lengths: [B] number of words of each sentence.
        sync_free: never read a value back from the device (a CUDA graph can then capture
            it): the ancestors by repeated squaring of the parent relation, ⌈log₂ J⌉ batched
            products, instead of one step per tree level until none is left; a cycle in the
            heads is then not detected (the parsers' trees have none).

    Returns:
        [B, J, J] long distances; entries involving padding are ``PAD_DISTANCE``.
    """
    import torch

    bsz, j = heads.shape
    valid = torch.arange(j, device=heads.device)[None, :] < lengths[:, None]  # [B, J]
    parent = torch.where(valid, heads - 1, torch.full_like(heads, -1))  # [B, J]
    eye = torch.eye(j, dtype=torch.bool, device=heads.device)
    if sync_free:
        # reach[b, i, k]: k is i or an ancestor of i within 2^n steps; squaring doubles n
        step = (parent[..., None] == torch.arange(j, device=heads.device)) & valid[..., None]
        reach = ((step | eye) & valid[..., None]).to(torch.float32)
        for _ in range(max(j - 1, 1).bit_length()):
            reach = (torch.bmm(reach, reach) > 0).to(torch.float32)
        anc = reach > 0
    else:
        cur = torch.arange(j, device=heads.device).expand(bsz, j).clone()
        active = valid.clone()
        anc = torch.zeros(bsz, j, j, dtype=torch.bool, device=heads.device)
        for _ in range(j):  # one step per tree level, all tokens of the batch at once
            anc |= eye[cur.clamp(min=0)] & active[..., None]
            cur = torch.where(active, parent.gather(1, cur.clamp(min=0)), torch.full_like(cur, -1))
            active = active & (cur >= 0)
            if not bool(active.any()):
                break
        else:
            raise ValueError("the heads of a batch contain a cycle")
    a = anc.to(torch.float32)
    depth = a.sum(-1) - 1  # [B, J]
    common = torch.bmm(a, a.transpose(1, 2))  # [B, J, J] = depth(lca) + 1
    dist = (depth[:, :, None] + depth[:, None, :] - 2 * (common - 1)).round().long()
    pair_valid = valid[:, :, None] & valid[:, None, :]
    return dist.masked_fill(~pair_valid, PAD_DISTANCE)


def project_to_subwords(dist: np.ndarray, word_index: Sequence[int] | np.ndarray) -> np.ndarray:
    """[S, S] subword mask: pieces of one word share that word's row and column.

    Args:
        dist: [n, n] word-level mask.
        word_index: [S] index of the word of each subword piece.
    """
    wi = np.asarray(word_index, dtype=np.int64)
    return dist[np.ix_(wi, wi)]


def batch_project_to_subwords(dist: torch.Tensor, word_index: torch.Tensor) -> torch.Tensor:
    """Batched :func:`project_to_subwords`.

    Args:
        dist: [B, J, J] word-level masks.
        word_index: [B, S] word of each piece (any valid index at padding: callers mask it).

    Returns:
        [B, S, S] subword-level masks.
    """

    bsz, s = word_index.shape
    rows = dist.gather(1, word_index[:, :, None].expand(bsz, s, dist.shape[2]))  # [B, S, J]
    return rows.gather(2, word_index[:, None, :].expand(bsz, s, s))
