"""Directional self-attention (DiSAN, Shen et al., AAAI 2018) as an NMT encoder input layer.

Per direction, with h = d_model / 2 features:

* h_i = ELU(W_h x_i + b_h)
* f_ij = 5·tanh((W_1 h_j + W_2 h_i + b) / 5), one logit per feature (multi-dimensional attention)
* P_ij = softmax over the allowed keys j, per feature; s_i = Σ_j P_ij ⊙ h_j
* F_i = σ(W_f1 h_i + W_f2 s_i + b_f); u_i = F_i ⊙ h_i + (1 − F_i) ⊙ s_i

The forward direction lets query i see keys j < i, the backward one j > i; padding is never
a key. The output per token is [u_fw; u_bw] (d_model); the source2token pooling of the
sentence-encoding paper is left out because NMT needs one vector per token.

Cost: the logits are a (B, S, S, d_model/2) tensor per direction, DiSAN's known price for
feature-wise attention.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

LOGIT_SCALE = 5.0  # c in c·tanh(·/c), the paper's value


def direction_mask(n: int, forward: bool, device: torch.device | None = None) -> Tensor:
    """(n, n) bool, [i, j] True when query i may attend to key j: j < i (forward) or j > i.

    >>> direction_mask(3, True).nonzero().tolist()
    [[1, 0], [2, 0], [2, 1]]
    """
    ones = torch.ones(n, n, dtype=torch.bool, device=device)
    return ones.tril(-1) if forward else ones.triu(1)


class _Direction(nn.Module):
    """One direction of DiSAN: d_model inputs → d_model/2 outputs."""

    def __init__(self, d_model: int, dim: int) -> None:
        super().__init__()
        self.dense = nn.Linear(d_model, dim)
        self.key = nn.Linear(dim, dim, bias=False)  # W_1, applied to h_j
        self.query = nn.Linear(dim, dim, bias=False)  # W_2, applied to h_i
        self.logit_bias = nn.Parameter(torch.zeros(dim))
        self.fusion = nn.Linear(2 * dim, dim)  # [W_f1 W_f2] on [h; s], bias b_f

    def forward(self, x: Tensor, allowed: Tensor) -> Tensor:
        """x: (B, S, d_model); allowed: (B, S, S) bool, [b, i, j] = query i may see key j
        → (B, S, dim)."""
        h = F.elu(self.dense(x))  # (B, S, dim)
        # Broadcast keys along dim 2 (j) and queries along dim 1 (i): (B, S_i, S_j, dim).
        pre = self.key(h)[:, None, :, :] + self.query(h)[:, :, None, :] + self.logit_bias
        logits = LOGIT_SCALE * torch.tanh(pre / LOGIT_SCALE)
        # A query without any allowed key (the first token forward, the last backward) would
        # give softmax over nothing = NaN; it attends everywhere here and gets s_i = 0 below.
        has_key = allowed.any(dim=-1)  # (B, S)
        safe = allowed | ~has_key[..., None]
        probs = torch.softmax(logits.masked_fill(~safe[..., None], float("-inf")), dim=2)
        s = torch.einsum("bijf,bjf->bif", probs, h) * has_key[..., None].to(h.dtype)
        gate = torch.sigmoid(self.fusion(torch.cat([h, s], dim=-1)))
        return gate * h + (1.0 - gate) * s


class DirectionalSelfAttention(nn.Module):
    """DiSAN over a source sentence: (B, S, d_model) → (B, S, d_model) = [u_fw; u_bw]."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        if d_model < 2 or d_model % 2:
            raise ValueError(
                f"DiSAN splits d_model between two directions; it must be even, got {d_model}"
            )
        self.d_model = d_model
        self.fw = _Direction(d_model, d_model // 2)
        self.bw = _Direction(d_model, d_model // 2)

    def forward(self, x: Tensor, pad: Tensor) -> Tensor:
        """x: (B, S, d); pad: (B, S) bool, True = PAD → (B, S, d), zero at padding."""
        s = x.size(1)
        is_key = ~pad[:, None, :]  # (B, 1, S_j)
        u_fw = self.fw(x, direction_mask(s, True, x.device) & is_key)
        u_bw = self.bw(x, direction_mask(s, False, x.device) & is_key)
        return torch.cat([u_fw, u_bw], dim=-1).masked_fill(pad[..., None], 0.0)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}"
