"""Reordering embeddings (Chen et al. 2019, Eq. 6-9).

In layer n, after the self-attention sublayer ``H̄ⁿ = LN(SelfAtt(Hⁿ⁻¹) + Hⁿ⁻¹)``::

    PPⁿ = sigmoid(V̄ⁿ · tanh(Wⁿ · Hⁿ⁻¹ + W̄ⁿ · H̄ⁿ))      (6)  positional penalty
    REⁿ = PE ⊙ PPⁿ                                      (7)  reordering embedding
    Cⁿ  = LN(H̄ⁿ + REⁿ)                                  (8)

and the next sublayer reads Cⁿ while its residual is still H̄ⁿ
(``Hⁿ = LN(FFN(Cⁿ) + H̄ⁿ)``, Eq. 9). The three d×d matrices have no bias, so a layer adds
exactly 3·d² + 2·d parameters (the matrices and the new layer norm).

The "+Additional PEs" control of the paper fills the same slot without the penalty,
``Cⁿ = LN(H̄ⁿ + PE)`` (``learned=False``: 2·d parameters, the layer norm).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class ReorderingEmbedding(nn.Module):
    """Computes Cⁿ from the layer input Hⁿ⁻¹, the self-attention output H̄ⁿ and the PEs."""

    def __init__(self, d_model: int, learned: bool = True) -> None:
        super().__init__()
        self.learned = learned
        self.norm = nn.LayerNorm(d_model)
        if learned:
            self.w = nn.Linear(d_model, d_model, bias=False)  # Wⁿ, on Hⁿ⁻¹
            self.w_bar = nn.Linear(d_model, d_model, bias=False)  # W̄ⁿ, on H̄ⁿ
            self.v_bar = nn.Linear(d_model, d_model, bias=False)  # V̄ⁿ
            for lin in (self.w, self.w_bar, self.v_bar):
                nn.init.xavier_uniform_(lin.weight)

    def penalty(self, h_prev: Tensor, h_bar: Tensor) -> Tensor:
        """PPⁿ (Eq. 6): (B, T, d) in (0, 1)."""
        return torch.sigmoid(self.v_bar(torch.tanh(self.w(h_prev) + self.w_bar(h_bar))))

    def forward(self, h_prev: Tensor, h_bar: Tensor, pe: Tensor) -> Tensor:
        """Cⁿ (Eq. 8).

        Args:
            h_prev: (B, T, d) the layer input Hⁿ⁻¹.
            h_bar: (B, T, d) the self-attention sublayer's output H̄ⁿ.
            pe: (T, d) absolute position encodings of the T positions.
        """
        if not self.learned:
            return self.norm(h_bar + pe)
        return self.norm(h_bar + pe * self.penalty(h_prev, h_bar))
