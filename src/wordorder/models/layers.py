"""Building blocks: multi-head attention with a key/value cache, position-wise FFN.

Attention uses :func:`torch.nn.functional.scaled_dot_product_attention` (fused kernels on
CUDA, a memory-efficient path on CPU), except in low precision on the CPU (explicit
products). Masks are boolean with SDPA's meaning: True = the query may attend to that key.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from wordorder.models.dropout import Dropout
from wordorder.models.relative import RelativeTerm, relative_attention

KV = tuple[Tensor, Tensor]


def key_padding_mask(pad: Tensor) -> Tensor:
    """(B, S) bool padding flags (True = PAD) → (B, 1, 1, S) bool "may attend" mask.

    A row that is padding only (an empty sentence in a batch) would have no key to attend
    to, and softmax over nothing is NaN; such rows are allowed to attend everywhere instead,
    which gives finite (and unused) outputs.
    """
    allowed = ~pad
    allowed = allowed | ~allowed.any(dim=-1, keepdim=True)
    return allowed[:, None, None, :]


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention (Vaswani et al. 2017, section 3.2).

    One module serves self-attention (``memory=None``) and cross-attention. For
    incremental decoding, self-attention takes the cached keys/values of the previous
    positions (``past_kv``) and returns them extended by the new position; cross-attention
    takes keys/values of the encoder memory computed once (``static_kv``, from
    :meth:`project_kv`).
    """

    def __init__(self, d_model: int, heads: int, dropout: float = 0.0) -> None:
        super().__init__()
        if d_model % heads:
            raise ValueError(f"d_model={d_model} is not divisible by heads={heads}")
        self.d_model, self.heads, self.head_dim = d_model, heads, d_model // heads
        self.dropout = dropout
        # When set (disagreement regularisation, analyses), forward keeps the per-head outputs
        # (B, H, T, d/H), values (B, H, S, d/H) and, on the explicit path, attention weights.
        self.record = False
        self.recorded: dict[str, Tensor] = {}
        self.q_proj = nn.Linear(d_model, d_model)
        # Keys and values in one matrix multiplication: they always come from the same input.
        self.kv_proj = nn.Linear(d_model, 2 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        for lin in (self.q_proj, self.kv_proj, self.out_proj):
            nn.init.xavier_uniform_(lin.weight)
            nn.init.zeros_(lin.bias)

    def _split(self, x: Tensor) -> Tensor:
        """(B, T, d) → (B, H, T, d/H)."""
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_dim).transpose(1, 2)

    def project_kv(self, x: Tensor) -> KV:
        """(B, S, d) → keys and values, each (B, H, S, d/H)."""
        k, v = self.kv_proj(x).chunk(2, dim=-1)
        return self._split(k), self._split(v)

    def forward(
        self,
        query: Tensor,
        memory: Tensor | None = None,
        *,
        mask: Tensor | None = None,
        causal: bool = False,
        past_kv: KV | None = None,
        static_kv: KV | None = None,
        relative: Sequence[RelativeTerm] = (),
        need_weights: bool = False,
    ) -> tuple[Tensor, KV]:
        """Attend from ``query`` to ``memory`` (or to itself).

        Args:
            query: (B, T, d).
            memory: (B, S, d) keys/values input for cross-attention; None = self-attention.
            mask: bool, broadcastable to (B, H, T, S): True = may attend (see
                :func:`key_padding_mask`).
            causal: position t attends to positions ≤ t only (full self-attention, T = S).
            past_kv: self-attention cache, each (B, H, t0, d/H): keys/values of the
                previous positions, prepended to those of ``query``.
            static_kv: precomputed (B, H, S, d/H) keys/values (cross-attention cache).
            relative: relative position terms (see :mod:`wordorder.models.relative`); they
                need the explicit attention path instead of the fused kernel.
            need_weights: record the attention weights too (explicit path).
        Returns:
            (B, T, d) output, and the keys/values attended to (the extended cache for
            self-attention).
        """
        q = self._split(self.q_proj(query))
        if static_kv is not None:
            k, v = static_kv
        else:
            k, v = self.project_kv(query if memory is None else memory)
            if past_kv is not None:
                k = torch.cat([past_kv[0], k], dim=2)
                v = torch.cat([past_kv[1], v], dim=2)
        dropout = self.dropout if self.training else 0.0
        # Under the CPU's bf16 autocast, torch's fused CPU kernel is 3-6× slower than in float32
        # (forward + backward, B = 300, T = 14, d/H = 64: 43 ms against 13 ms in float32 and
        # 6 ms by explicit bf16 products), so low precision on the CPU takes the explicit path.
        explicit = q.dtype in (torch.bfloat16, torch.float16) and q.device.type == "cpu"
        if relative or need_weights or explicit:
            out, weights = relative_attention(q, k, v, relative, mask, causal, dropout)
            if self.record:
                self.recorded["weights"] = weights
        else:
            out = F.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, is_causal=causal, dropout_p=dropout
            )
        # out: (B, H, T, d/H)
        if self.record:
            self.recorded.update(heads=out, values=v)
        b, _, t, _ = out.shape
        out = out.transpose(1, 2).reshape(b, t, self.d_model)
        return self.out_proj(out), (k, v)


class FeedForward(nn.Module):
    """Position-wise feed-forward network: Linear(d → d_ff), ReLU, dropout, Linear(d_ff → d).

    Works on any (..., d) tensor.
    """

    def __init__(self, d_model: int, d_ff: int, activation_dropout: float = 0.0) -> None:
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_ff)
        self.fc2 = nn.Linear(d_ff, d_model)
        self.dropout = Dropout(activation_dropout)
        for lin in (self.fc1, self.fc2):
            nn.init.xavier_uniform_(lin.weight)
            nn.init.zeros_(lin.bias)

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(self.dropout(F.relu(self.fc1(x))))
