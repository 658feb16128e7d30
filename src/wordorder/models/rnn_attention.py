"""Attention of the RNN decoders: one additive scorer (Bahdanau et al. 2015) and the ways of
turning its scores into weights — global, Luong's local-p, flexible (Shu & Nakayama 2017,
reconstructed) and Chen et al. 2018's syntax-directed attention.

All weights are (N, S) rows over the source positions of one decoder step; ``valid`` (N, S)
is False at padding. Positions are 0-based and the source length J counts the EOS.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def masked_softmax(scores: Tensor, allowed: Tensor) -> Tensor:
    """Softmax of (N, S) ``scores`` over the positions ``allowed``: 0 elsewhere.

    Masked with the dtype's lowest finite value, not −inf: a row with no position allowed (the
    all-PAD rows a static shape adds for CUDA graphs) then gets finite weights (uniform) where
    −inf gave NaN, which reached the gradients through the masked loss (0 · NaN) and, as a
    position, a gather's index (SDAtt). Rows with a position allowed get exactly the weights
    of −inf (exp of the masked ones underflows to 0)."""
    return scores.masked_fill(~allowed, torch.finfo(scores.dtype).min).softmax(dim=-1)


class AdditiveScorer(nn.Module):
    """e_ij = vᵀ tanh(W_c h_j + b + W_s q_i): the keys W_c h + b are computed once per sentence."""

    def __init__(self, d_memory: int, d_query: int, d_attention: int) -> None:
        super().__init__()
        self.key = nn.Linear(d_memory, d_attention)
        self.query = nn.Linear(d_query, d_attention, bias=False)
        self.v = nn.Linear(d_attention, 1, bias=False)

    def keys(self, memory: Tensor) -> Tensor:
        """(N, S, d_memory) annotations → (N, S, d_attention)."""
        return self.key(memory)

    def forward(self, keys: Tensor, query: Tensor) -> Tensor:
        """(N, S, a) keys, (N, d_query) query → (N, S) scores."""
        return self.v(torch.tanh(keys + self.query(query)[:, None, :])).squeeze(-1)


class PositionPredictor(nn.Module):
    """Luong's p = J · σ(v_pᵀ tanh(W_p q)), a real position in [0, J]."""

    def __init__(self, d_query: int, d_attention: int) -> None:
        super().__init__()
        self.w = nn.Linear(d_query, d_attention, bias=False)
        self.v = nn.Linear(d_attention, 1, bias=False)

    def forward(self, query: Tensor, length: Tensor) -> Tensor:
        """(N, d_query), (N,) source lengths → (N,) predicted positions."""
        return length.to(query.dtype) * torch.sigmoid(self.v(torch.tanh(self.w(query))).squeeze(-1))


def gaussian(distance: Tensor, sigma: float) -> Tensor:
    """exp(−d² / 2σ²), elementwise."""
    return torch.exp(-distance.square() / (2.0 * sigma * sigma))


class LocalWeights(nn.Module):
    """Luong et al. 2015's local-p: softmax over the window |s − p| ≤ D, times the Gaussian
    exp(−(s − p)²/2σ²) with σ = D/2, not renormalised (the weights sum to less than 1)."""

    def __init__(self, d_query: int, d_attention: int, window: int) -> None:
        super().__init__()
        self.predict = PositionPredictor(d_query, d_attention)
        self.window = window

    def forward(self, scores: Tensor, valid: Tensor, query: Tensor, length: Tensor) -> Tensor:
        p = self.predict(query, length)[:, None]  # (N, 1)
        offset = torch.arange(scores.size(1), device=scores.device, dtype=p.dtype)[None, :] - p
        inside = valid & offset.abs().le(self.window)
        return masked_softmax(scores, inside) * gaussian(offset, self.window / 2.0)


class FlexibleWeights(nn.Module):
    """Flexible attention (Shu & Nakayama 2017), reconstructed as docs/algorithms.md §FLEX records:
    only the paper's abstract is available, which says the model tracks a centre of attention
    and adds a position penalty to the scores, and at test time skips positions with a heavy
    penalty. Here the centre is the previous step's expected position p = Σ_s α_{t−1}(s)·s
    (0 before the first step), the penalty κ_t (s − p)² with κ_t = softplus(w_κᵀ q_t) ≥ 0 is
    learned, and in eval mode positions whose penalty reaches ``skip`` are not scored (the
    position nearest p always is). ``span`` counts scored and real positions (eval only), so
    the average vision span can be reported."""

    def __init__(self, d_query: int, skip: float) -> None:
        super().__init__()
        self.kappa = nn.Linear(d_query, 1)
        self.skip = skip
        self.span = [0, 0]  # positions scored, real positions (eval mode)

    def forward(self, scores: Tensor, valid: Tensor, query: Tensor, previous: Tensor) -> Tensor:
        """``previous``: (N, S) the weights of the step before."""
        pos = torch.arange(scores.size(1), device=scores.device, dtype=scores.dtype)[None, :]
        centre = (previous * pos).sum(dim=-1, keepdim=True)  # (N, 1)
        penalty = F.softplus(self.kappa(query)) * (pos - centre).square()
        allowed = valid
        if not self.training:
            nearest = pos.eq(centre.round().clamp(max=float(scores.size(1) - 1)))
            allowed = valid & (penalty.lt(self.skip) | nearest)
            allowed = allowed | (valid & ~allowed.any(dim=-1, keepdim=True) & pos.eq(0))
            self.span[0] += int(allowed.sum())
            self.span[1] += int(valid.sum())
        return masked_softmax(scores - penalty, allowed)


class SyntaxWeights(nn.Module):
    """Chen et al. 2018's syntax-directed attention (Eq. 10-12).

    The predicted position p (Eq. 5) selects the syntax-distance row M[p]; the scores become
    e^s_j = e_j · exp(−M[p][j]² / 2σ²) with σ = n/2 (Eq. 10, a factor on the score, as the
    paper writes it), and are normalised only over the words within syntax distance n of p
    (Eq. 11); the others get weight 0. p is real-valued: the support comes from the nearest
    row, and the Gaussian from the linear interpolation of the two rows around p, so that the
    position predictor gets a gradient (the paper does not say how p is rounded).

    p = (J − 1)·σ(·), Eq. 5 on the 0-based rows 0..J−1 of M: J·σ(·) capped at J − 1 would give
    the predictor no gradient wherever p passed J − 1, and a trained model's centres drifted
    there and froze (docs/algorithms.md §SDATT).

    e_j carries a learned scalar bias c (``score_bias``, 0 at the start), as the score of
    Nematus, the paper's toolkit, does (its ``c_tt``): a constant that a softmax ignores, but
    under Eq. 10's product it sets how strongly the Gaussian favours syntactically near words.
    Without it most scores are negative, and a factor below 1 raises them: a blur, not a
    penalty.
    """

    def __init__(self, d_query: int, d_attention: int, n: int) -> None:
        super().__init__()
        self.predict = PositionPredictor(d_query, d_attention)
        self.score_bias = nn.Parameter(torch.zeros(()))
        self.n = n

    def forward(
        self, scores: Tensor, valid: Tensor, query: Tensor, length: Tensor, distance: Tensor
    ) -> Tensor:
        """``distance``: (N, S, S) syntax distances (negative at padding)."""
        s = scores.size(1)
        last = (length - 1).clamp(min=0)  # (N,) the last row of M: the EOS
        p = self.predict(query, last)  # (N,) in [0, J − 1]: no cap, so never a dead gradient
        low = p.detach().floor().long()
        high = torch.minimum(low + 1, last)
        frac = (p - low.to(p.dtype))[:, None]

        def row(index: Tensor) -> Tensor:
            return distance.gather(1, index[:, None, None].expand(-1, 1, s)).squeeze(1)  # (N, S)

        m_low, m_high = row(low), row(high)
        m = (1.0 - frac) * m_low.to(scores.dtype) + frac * m_high.to(scores.dtype)
        nearest = torch.where(frac >= 0.5, m_high, m_low)
        support = valid & nearest.ge(0) & nearest.le(self.n)
        tuned = (scores + self.score_bias) * gaussian(m, self.n / 2.0)
        return masked_softmax(tuned, support)


def context(weights: Tensor, memory: Tensor) -> Tensor:
    """(N, S) weights, (N, S, d) annotations → (N, d)."""
    return torch.bmm(weights[:, None, :].to(memory.dtype), memory).squeeze(1)
