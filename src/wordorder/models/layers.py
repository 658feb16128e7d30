"""Building blocks: multi-head attention with a key/value cache, position-wise FFN.

Attention uses :func:`torch.nn.functional.scaled_dot_product_attention` (fused kernels on
CUDA, a memory-efficient path on CPU), except in low precision on the CPU (explicit
products). Masks are boolean with SDPA's meaning: True = the query may attend to that key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from wordorder.device import cpu_kernels
from wordorder.models.dropout import Dropout
from wordorder.models.relative import RelativeTerm, relative_attention

KV = tuple[Tensor, Tensor]


@dataclass
class StepCache:
    """A self-attention cache of fixed size, for decoding with static shapes (CUDA graphs):
    the new position's keys and values are written at ``t`` and the query attends to the whole
    buffer, masked to the positions written so far, so no shape depends on the step.

    Attributes:
        k, v: (N, H, W, d/H) keys and values of W positions; filled up to ``t``.
        t: (1,) long, the position being decoded, on the device (read by no host code).
        visible: (1, 1, 1, W) bool, True at positions ≤ t.
    """

    k: Tensor
    v: Tensor
    t: Tensor
    visible: Tensor


def key_padding_mask(pad: Tensor) -> Tensor:
    """(B, S) bool padding flags (True = PAD) → (B, 1, 1, S) bool "may attend" mask.

    A row that is padding only (an empty sentence in a batch) would have no key to attend
    to, and softmax over nothing is NaN; such rows are allowed to attend everywhere instead,
    which gives finite (and unused) outputs.
    """
    allowed = ~pad
    allowed = allowed | ~allowed.any(dim=-1, keepdim=True)
    return allowed[:, None, None, :]


def _batch(x: Tensor, batch: int | None) -> int:
    """B of (B, T, d), or the ``batch`` given with (B·T, d) token rows."""
    if x.dim() == 3:
        return x.size(0)
    if batch is None:
        raise ValueError("attention over token rows (B·T, d) needs batch=B")
    return batch


def _rows(x: Tensor) -> Tensor:
    """(B, T, d) → (B·T, d); token rows as they are (no operator dispatched)."""
    return x if x.dim() == 2 else x.reshape(-1, x.size(-1))


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention (Vaswani et al. 2017, section 3.2).

    One module serves self-attention (``memory=None``) and cross-attention. For
    incremental decoding, self-attention takes the cached keys/values of the previous
    positions (``past_kv``) and returns them extended by the new position; cross-attention
    takes keys/values of the encoder memory computed once (``static_kv``, from
    :meth:`project_kv`).
    """

    def __init__(
        self, d_model: int, heads: int, dropout: float = 0.0, self_attention: bool = False
    ) -> None:
        """``self_attention``: queries, keys and values always come from the same input, so
        they are projected by one (3d, d) matrix (``qkv_proj``) in one product, instead of
        ``q_proj`` (d, d) and ``kv_proj`` (2d, d) for cross-attention."""
        super().__init__()
        if d_model % heads:
            raise ValueError(f"d_model={d_model} is not divisible by heads={heads}")
        self.d_model, self.heads, self.head_dim = d_model, heads, d_model // heads
        self.dropout = dropout
        self.self_attention = self_attention
        # When set (disagreement regularisation, analyses), forward keeps the per-head outputs
        # (B, H, T, d/H), values (B, H, S, d/H) and, on the explicit path, attention weights.
        self.record = False
        self.recorded: dict[str, Tensor] = {}
        if self_attention:
            self.qkv_proj = nn.Linear(d_model, 3 * d_model)
            # Initialised as the two matrices it stands for (xavier over each one's shape).
            q_w, kv_w = self.qkv_proj.weight.data.split([d_model, 2 * d_model])
            inits = [q_w, kv_w]
        else:
            self.q_proj = nn.Linear(d_model, d_model)
            # Keys and values in one matrix multiplication: they always come from the same input.
            self.kv_proj = nn.Linear(d_model, 2 * d_model)
            inits = [self.q_proj.weight.data, self.kv_proj.weight.data]
        self.out_proj = nn.Linear(d_model, d_model)
        for weight in [*inits, self.out_proj.weight.data]:
            nn.init.xavier_uniform_(weight)
        for lin in self._projections():
            nn.init.zeros_(lin.bias)

    def _projections(self) -> list[nn.Linear]:
        if self.self_attention:
            return [self.qkv_proj, self.out_proj]
        return [self.q_proj, self.kv_proj, self.out_proj]

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        # Checkpoints written before the fused projection hold q_proj and kv_proj for
        # self-attention too: their rows, stacked, are qkv_proj's.
        if self.self_attention and prefix + "q_proj.weight" in state_dict:
            for kind in ("weight", "bias"):
                q = state_dict.pop(f"{prefix}q_proj.{kind}")
                kv = state_dict.pop(f"{prefix}kv_proj.{kind}")
                state_dict[f"{prefix}qkv_proj.{kind}"] = torch.cat([q, kv])
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def _heads(self, x: Tensor, b: int, parts: int) -> tuple[Tensor, ...]:
        """(B·T, parts·d) token rows of B sentences → ``parts`` tensors (B, H, T, d/H): one
        view, one permute and one unbind whatever ``parts`` (dispatched operators are a GPU
        host's work: :mod:`wordorder.train.opcount`)."""
        t = x.size(0) // b if b else 0
        if parts == 1:
            return (x.view(b, t, self.heads, self.head_dim).transpose(1, 2),)
        x = x.view(b, t, parts, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        return x.unbind(0)

    def project_kv(self, x: Tensor, batch: int | None = None) -> KV:
        """(B, S, d), or (B·S, d) token rows with ``batch`` = B → keys and values, each
        (B, H, S, d/H)."""
        b = _batch(x, batch)
        x = _rows(x)
        if self.self_attention:
            d = self.d_model
            kv = F.linear(x, self.qkv_proj.weight[d:], self.qkv_proj.bias[d:])
        else:
            kv = self.kv_proj(x)
        k, v = self._heads(kv, b, 2)
        return k, v

    def forward(
        self,
        query: Tensor,
        memory: Tensor | None = None,
        *,
        batch: int | None = None,
        mask: Tensor | None = None,
        causal: bool = False,
        past_kv: KV | None = None,
        static_kv: KV | None = None,
        cache: StepCache | None = None,
        relative: Sequence[RelativeTerm] = (),
        need_weights: bool = False,
    ) -> tuple[Tensor, KV]:
        """Attend from ``query`` to ``memory`` (or to itself).

        Args:
            query: (B, T, d); or (B·T, d) token rows, with ``batch`` = B (what the layer
                stacks pass: products of rows need no reshapes, forward or backward).
            memory: (B, S, d) or (B·S, d) keys/values input for cross-attention; None =
                self-attention.
            batch: B, for token rows.
            mask: bool, broadcastable to (B, H, T, S): True = may attend (see
                :func:`key_padding_mask`).
            causal: position t attends to positions ≤ t only (full self-attention, T = S).
            past_kv: self-attention cache, each (B, H, t0, d/H): keys/values of the
                previous positions, prepended to those of ``query``.
            static_kv: precomputed (B, H, S, d/H) keys/values (cross-attention cache).
            cache: self-attention cache of fixed size (one query, instead of ``past_kv``):
                the new keys/values are written into it in place and ``mask`` is its own.
            relative: relative position terms (see :mod:`wordorder.models.relative`); they
                need the explicit attention path instead of the fused kernel.
            need_weights: record the attention weights too (explicit path).
        Returns:
            the output in the query's shape, and the keys/values attended to (the extended
            cache for self-attention).
        """
        shape = query.shape
        b = _batch(query, batch)
        query = _rows(query)
        if self.self_attention and memory is None and static_kv is None:
            q, k, v = self._heads(self.qkv_proj(query), b, 3)
        else:
            if self.self_attention:
                d = self.d_model
                q = F.linear(query, self.qkv_proj.weight[:d], self.qkv_proj.bias[:d])
            else:
                q = self.q_proj(query)
            (q,) = self._heads(q, b, 1)
            k, v = (
                static_kv
                if static_kv is not None
                else self.project_kv(query if memory is None else memory, b)
            )
        if cache is not None:
            cache.k.index_copy_(2, cache.t, k)
            cache.v.index_copy_(2, cache.t, v)
            k, v, mask = cache.k, cache.v, cache.visible
        elif static_kv is None and past_kv is not None:
            k = torch.cat([past_kv[0], k], dim=2)
            v = torch.cat([past_kv[1], v], dim=2)
        dropout = self.dropout if self.training else 0.0
        # Under the CPU's bf16 autocast, torch's fused CPU kernel is 3-6× slower than in float32
        # (forward + backward, B = 300, T = 14, d/H = 64: 43 ms against 13 ms in float32 and
        # 6 ms by explicit bf16 products), so low precision on the CPU takes the explicit path.
        explicit = q.dtype in (torch.bfloat16, torch.float16) and cpu_kernels(q)
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
        out = self.out_proj(out.transpose(1, 2).reshape(-1, self.d_model))
        return (out if len(shape) == 2 else out.view(shape)), (k, v)


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
