"""Encoder and decoder layers of the Transformer, with the per-layer word-order options.

A layer is self-attention → [position slot] → (cross-attention →) FFN. Options switch on:
Shaw's relative positions (a :class:`RelativeTable` per layer, in self-attention), Kawara's
relative preordering encoding (a second table, encoder only), and the position slot after
self-attention, filled by Chen 2019's reordering embeddings or the additional-PE control
(:class:`ReorderingEmbedding`): the next sublayer then reads Cⁿ while its residual stays H̄ⁿ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch import Tensor, nn

from wordorder.models.dropout import Dropout
from wordorder.models.layers import KV, FeedForward, MultiHeadAttention, StepCache
from wordorder.models.relative import RelativeTable, RelativeTerm
from wordorder.models.reordering import ReorderingEmbedding

if TYPE_CHECKING:
    from wordorder.models.options import TransformerOptions


class Sublayer(nn.Module):
    """Residual connection + dropout + layer norm around one sublayer (post or pre norm)."""

    def __init__(self, d_model: int, dropout: float, pre_norm: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = Dropout(dropout)
        self.pre_norm = pre_norm

    def input(self, x: Tensor) -> Tensor:
        """What the sublayer sees: LN(x) with pre-norm, x itself with post-norm."""
        return self.norm(x) if self.pre_norm else x

    def output(self, x: Tensor, y: Tensor) -> Tensor:
        """Combine the residual input ``x`` with the sublayer output ``y``."""
        out = self.dropout.residual(x, y)
        return out if self.pre_norm else self.norm(out)


@dataclass
class SourceContext:
    """Per-batch inputs of every encoder layer.

    Attributes:
        mask: (B, 1, 1, S) bool, True = real token (may be attended to).
        pe: absolute encodings for the position slot, in the layer input's shape: (S, d)
            for (B, S, d), (B·S, d) for token rows; None when no layer needs them.
        buckets: (S, S) Shaw buckets clip(j − i, k) + k; None without relative positions.
        order_buckets: (B, S, S) buckets clip(p_j − p_i, k') + k' of the preordered
            positions p; None without the relative preordering encoding.
        batch: B, when the layers run on token rows (B·S, d).
    """

    mask: Tensor
    pe: Tensor | None = None
    buckets: Tensor | None = None
    order_buckets: Tensor | None = None
    batch: int | None = None


def _position_slot(o: TransformerOptions, side: str) -> ReorderingEmbedding | None:
    kind = o.position_slot(side)
    return None if kind == "none" else ReorderingEmbedding(o.d_model, learned=kind == "reordering")


def _relative_table(o: TransformerOptions, side: str) -> RelativeTable | None:
    return RelativeTable(o.relative_k, o.head_dim) if o.relative_on(side) else None


class EncoderLayer(nn.Module):
    """Self-attention, [position slot], FFN; each sublayer wrapped in a :class:`Sublayer`."""

    def __init__(self, o: TransformerOptions) -> None:
        super().__init__()
        pre = o.norm == "pre"
        self.self_attn = MultiHeadAttention(
            o.d_model, o.heads, o.attention_dropout, self_attention=True
        )
        self.ffn = FeedForward(o.d_model, o.d_ff, o.activation_dropout)
        self.sub_attn = Sublayer(o.d_model, o.dropout, pre)
        self.sub_ffn = Sublayer(o.d_model, o.dropout, pre)
        self.relative = _relative_table(o, "encoder")
        self.preorder_relative = (
            RelativeTable(o.preorder_k, o.head_dim) if o.preorder_encoding == "relative" else None
        )
        self.slot = _position_slot(o, "encoder")
        self.need_weights = False  # set by the model for position disagreement

    def forward(self, x: Tensor, ctx: SourceContext) -> Tensor:
        """x: (B, S, d), or (B·S, d) token rows with ``ctx.batch`` = B → the same shape."""
        terms: list[RelativeTerm] = []
        # the model fills the buckets of every table its options create
        if self.relative is not None:
            assert ctx.buckets is not None
            terms.append((ctx.buckets, self.relative))
        if self.preorder_relative is not None:
            assert ctx.order_buckets is not None
            terms.append((ctx.order_buckets, self.preorder_relative))
        y, _ = self.self_attn(
            self.sub_attn.input(x),
            batch=ctx.batch,
            mask=ctx.mask,
            relative=terms,
            need_weights=self.need_weights,
        )
        h_bar = self.sub_attn.output(x, y)
        c = h_bar if self.slot is None else self.slot(x, h_bar, ctx.pe)
        return self.sub_ffn.output(h_bar, self.ffn(self.sub_ffn.input(c)))


class DecoderLayer(nn.Module):
    """Causal self-attention, [position slot], cross-attention to the encoder memory, FFN."""

    def __init__(self, o: TransformerOptions) -> None:
        super().__init__()
        pre = o.norm == "pre"
        p_self = o.decoder_self_attention_dropout
        p_self = o.attention_dropout if p_self is None else p_self
        self.self_attn = MultiHeadAttention(o.d_model, o.heads, p_self, self_attention=True)
        self.cross_attn = MultiHeadAttention(o.d_model, o.heads, o.attention_dropout)
        self.ffn = FeedForward(o.d_model, o.d_ff, o.activation_dropout)
        self.sub_self = Sublayer(o.d_model, o.dropout, pre)
        self.sub_cross = Sublayer(o.d_model, o.dropout, pre)
        self.sub_ffn = Sublayer(o.d_model, o.dropout, pre)
        self.relative = _relative_table(o, "decoder")
        self.slot = _position_slot(o, "decoder")

    def forward(
        self,
        x: Tensor,
        src_mask: Tensor,
        cross_kv: KV,
        past_kv: KV | None = None,
        pe: Tensor | None = None,
        buckets: Tensor | None = None,
        cache: StepCache | None = None,
        batch: int | None = None,
    ) -> tuple[Tensor, KV]:
        """Full (``past_kv=None``: x is (B, T, d), causal mask) or incremental (x is (B, 1, d),
        ``past_kv`` each (B, H, t, d/H); or ``cache``, of fixed size, written in place) decoding.
        x may be token rows instead, (B·T, d) with ``batch`` = B, and ``pe`` then (B·T, d)
        (or (1, d) at T = 1); the output has x's shape.

        ``cross_kv``: the memory's keys/values for this layer, each (B, H, S, d/H);
        ``src_mask``: (B, 1, 1, S) bool; ``pe``: (T, d) encodings of the new positions (for
        the position slot); ``buckets``: (T, t+T) Shaw buckets of the new queries against all
        target positions so far. Returns (B, T, d) and the self-attention keys/values
        including the new positions (the cache for the next step).
        """
        h = self.sub_self.input(x)
        terms = [(buckets, self.relative)] if self.relative is not None else []
        # With a cache the single new query may see every cached position: no mask needed.
        # Without one the mask is causal whatever T (at T = 1 it masks nothing): a test of the
        # length would be a symbolic bool under torch.compile's dynamic shapes, which SDPA's
        # is_causal refuses, and every attention call fell back to eager, uncompiled.
        causal = past_kv is None and cache is None
        y, self_kv = self.self_attn(
            h, batch=batch, causal=causal, past_kv=past_kv, cache=cache, relative=terms
        )
        h_bar = self.sub_self.output(x, y)
        c = h_bar if self.slot is None else self.slot(x, h_bar, pe)
        y, _ = self.cross_attn(
            self.sub_cross.input(c),
            batch=batch,
            mask=src_mask,
            static_kv=cross_kv,
            need_weights=self.cross_attn.record,
        )
        x = self.sub_cross.output(h_bar, y)
        x = self.sub_ffn.output(x, self.ffn(self.sub_ffn.input(x)))
        return x, self_kv
