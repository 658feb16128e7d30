"""Relative position representations (Shaw et al. 2018) and relative preordering encodings
(Kawara et al. 2021, section IV-B), as extra terms of scaled dot-product attention.

For a query i and key j with bucket ``r_ij = clip(d_ij, -k, k) + k`` (``d_ij = j - i`` for
Shaw, ``p_j - p_i`` for preordered positions ``p``)::

    e_ij = q_i · (k_j + w^K[r_ij]) / sqrt(d_z)        z_i = Σ_j α_ij (v_j + w^V[r_ij])

The efficient form never builds the (T, S, d_z) tensor of a^K_ij vectors: ``q_i · w^K[r]``
is computed once per bucket (a (B, H, T, 2k+1) matmul) and gathered into the scores, and
the value term sums the attention weights per bucket (a scatter-add into (B, H, T, 2k+1))
before one matmul with w^V. Both cost O(T·S + T·(2k+1)·d_z) instead of O(T·S·d_z).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def relative_buckets(q_pos: Tensor, k_pos: Tensor, k: int) -> Tensor:
    """Bucket ids ``clip(k_pos[j] - q_pos[i], -k, k) + k`` in [0, 2k].

    Args:
        q_pos: (..., T) positions of the queries.
        k_pos: (..., S) positions of the keys (same leading dims as ``q_pos``, or none).
    Returns:
        (..., T, S) LongTensor.
    """
    return (k_pos.unsqueeze(-2) - q_pos.unsqueeze(-1)).clamp(-k, k).long() + k


def sequence_buckets(
    length: int,
    k: int,
    device: torch.device | None = None,
    offset: int = 0,
    queries: int | None = None,
) -> Tensor:
    """Shaw's buckets for a sequence: queries ``offset .. offset+queries-1`` against keys
    ``0 .. length-1`` (``queries`` defaults to ``length``; incremental decoding uses one query
    at ``offset = t`` against keys 0..t). Returns (queries, length) LongTensor.

    >>> sequence_buckets(4, 2).tolist()
    [[2, 3, 4, 4], [1, 2, 3, 4], [0, 1, 2, 3], [0, 0, 1, 2]]
    """
    queries = length if queries is None else queries
    q = torch.arange(offset, offset + queries, device=device)
    return relative_buckets(q, torch.arange(length, device=device), k)


class RelativeTable(nn.Module):
    """The 2k+1 key vectors w^K and value vectors w^V of one attention layer, each of size
    d_z (the head size), shared by all heads (Shaw et al. 2018, section 3.2)."""

    def __init__(self, k: int, head_dim: int) -> None:
        super().__init__()
        if k < 1:
            raise ValueError(f"the clipping distance must be ≥ 1, got {k}")
        self.k = k
        self.keys = nn.Parameter(torch.empty(2 * k + 1, head_dim))
        self.values = nn.Parameter(torch.empty(2 * k + 1, head_dim))
        # Same scale as the rows of an xavier-initialised projection (std ~ d^-0.5).
        nn.init.normal_(self.keys, std=head_dim**-0.5)
        nn.init.normal_(self.values, std=head_dim**-0.5)

    def extra_repr(self) -> str:
        return f"k={self.k}, head_dim={self.keys.size(1)}"


RelativeTerm = tuple[Tensor, RelativeTable]  # (buckets (T,S) or (B,T,S), table)


def _expand(buckets: Tensor, shape: torch.Size) -> Tensor:
    """(T, S) or (B, T, S) buckets → broadcast view of shape (B, H, T, S)."""
    if buckets.dim() == 3:
        buckets = buckets.unsqueeze(1)
    return buckets.expand(shape)


def relative_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    terms: Sequence[RelativeTerm],
    mask: Tensor | None,
    causal: bool,
    dropout: float = 0.0,
) -> tuple[Tensor, Tensor]:
    """Scaled dot-product attention with relative key and value terms.

    Args:
        q: (B, H, T, d_z); k, v: (B, H, S, d_z).
        terms: (buckets, table) pairs; buckets are (T, S) (shared by the batch) or (B, T, S).
        mask: bool broadcastable to (B, H, T, S), True = may attend; None = all.
        causal: additionally forbid keys j > i + (S - T) (the last query is the last key).
    Returns:
        (B, H, T, d_z) outputs and the (B, H, T, S) attention weights.
    """
    b, h, t, d = q.shape
    s = k.size(2)
    scores = torch.matmul(q, k.transpose(-1, -2))  # (B, H, T, S)
    shape = scores.shape
    for buckets, table in terms:
        by_bucket = torch.matmul(q, table.keys.t())  # (B, H, T, 2k+1): q_i · w^K[r] for every r
        scores = scores + torch.gather(by_bucket, -1, _expand(buckets, shape))
    scores = scores * (1.0 / math.sqrt(d))
    if causal:
        allowed = torch.ones(t, s, dtype=torch.bool, device=q.device).tril(s - t)
        mask = allowed if mask is None else mask & allowed
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    attn = F.dropout(weights, dropout) if dropout > 0 else weights
    out = torch.matmul(attn, v)
    for buckets, table in terms:
        per_bucket = attn.new_zeros(b, h, t, table.values.size(0))
        # Σ_{j: r_ij = r} α_ij
        per_bucket = per_bucket.scatter_add(-1, _expand(buckets, shape), attn)
        out = out + torch.matmul(per_bucket, table.values)
    return out, weights
