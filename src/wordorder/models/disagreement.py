"""Disagreement regularisation of multi-head attention (Li et al., EMNLP 2018).

For H heads, each term is −(1/H²) Σ_{i,j} sim(head_i, head_j), averaged over the valid
tokens; the training objective is log-likelihood + λ·D, so maximising D pushes heads apart.
The sums include i = j, so D ∈ [−1, 0] for the cosine terms, −1 when all heads agree.

* output:   cosine between the per-head outputs O^i_t (the paper's best term)
* subspace: cosine between the per-head value vectors V^i_s
* position: Σ_s A^i_ts A^j_ts between the per-head attention rows

Σ_{i,j} cos(a_i, a_j) = ‖Σ_i â_i‖² with â = a/‖a‖, which avoids the H×H products. A zero
vector has no direction; it is normalised to zero (norm clamped at ``EPS``), so its cosine
with any head, itself included, counts as 0.
"""

from __future__ import annotations

from torch import Tensor

EPS = 1e-8


def _mean_over(values: Tensor, valid: Tensor) -> Tensor:
    """values: (B, T), valid: (B, T) bool → mean of the valid entries (0 if there are none)."""
    valid = valid.to(values.dtype)
    return (values * valid).sum() / valid.sum().clamp(min=1.0)


def _cosine_disagreement(vectors: Tensor, valid: Tensor) -> Tensor:
    """vectors: (B, H, T, d), valid: (B, T) bool → scalar −(1/H²) Σ_{i,j} cos, token mean."""
    v = vectors.float()  # half-precision norms of long vectors lose too much
    heads = v.size(1)
    unit = v / v.norm(dim=-1, keepdim=True).clamp(min=EPS)
    agreement = unit.sum(dim=1).pow(2).sum(dim=-1)  # (B, T) = Σ_{i,j} cos
    return _mean_over(-agreement / heads**2, valid)


def output_disagreement(heads: Tensor, valid: Tensor) -> Tensor:
    """D_out. heads: (B, H, T, d_h) per-head attention outputs; valid: (B, T) bool, True at
    real query tokens → scalar in [−1, 0]."""
    return _cosine_disagreement(heads, valid)


def subspace_disagreement(values: Tensor, valid: Tensor) -> Tensor:
    """D_sub. values: (B, H, S, d_h) per-head value projections; valid: (B, S) bool, True at
    real tokens → scalar in [−1, 0]."""
    return _cosine_disagreement(values, valid)


def position_disagreement(attn: Tensor, valid_query: Tensor) -> Tensor:
    """D_pos. attn: (B, H, T, S) attention weights; valid_query: (B, T) bool → scalar
    −(1/H²) Σ_{i,j} Σ_s A^i_ts A^j_ts averaged over the valid queries."""
    a = attn.float()
    heads = a.size(1)
    agreement = a.sum(dim=1).pow(2).sum(dim=-1)  # (B, T) = Σ_s (Σ_h A^h_ts)²
    return _mean_over(-agreement / heads**2, valid_query)
