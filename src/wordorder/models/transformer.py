"""The Transformer (Vaswani et al. 2017): encoder/decoder layers and the model.

Layer normalisation is "post" (``x = LN(x + Dropout(sublayer(x)))``, as in the paper and the
word-order papers built on it) or "pre" (``x = x + Dropout(sublayer(LN(x)))``, with a final
LN after each stack). Embeddings are scaled by sqrt(d_model), added to sinusoidal positions
and dropped out; with ``tie_embeddings`` the source, target and output embeddings are one
matrix (the vocabulary is a joint BPE).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from wordorder.models.base import DecoderState, EncoderOut, Seq2SeqModel
from wordorder.models.layers import KV, FeedForward, MultiHeadAttention, key_padding_mask
from wordorder.models.positions import SinusoidalPositions
from wordorder.specials import PAD_ID

if TYPE_CHECKING:  # registry imports this module to fill its family table
    from wordorder.models.registry import ModelOptions


class Sublayer(nn.Module):
    """Residual connection + dropout + layer norm around one sublayer (post or pre norm)."""

    def __init__(self, d_model: int, dropout: float, pre_norm: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.pre_norm = pre_norm

    def input(self, x: Tensor) -> Tensor:
        """What the sublayer sees: LN(x) with pre-norm, x itself with post-norm."""
        return self.norm(x) if self.pre_norm else x

    def output(self, x: Tensor, y: Tensor) -> Tensor:
        """Combine the residual input ``x`` with the sublayer output ``y``."""
        out = x + self.dropout(y)
        return out if self.pre_norm else self.norm(out)


class EncoderLayer(nn.Module):
    """Self-attention then FFN, each wrapped in a :class:`Sublayer`."""

    def __init__(self, o: ModelOptions) -> None:
        super().__init__()
        pre = o.norm == "pre"
        self.self_attn = MultiHeadAttention(o.d_model, o.heads, o.attention_dropout)
        self.ffn = FeedForward(o.d_model, o.d_ff, o.activation_dropout)
        self.sub_attn = Sublayer(o.d_model, o.dropout, pre)
        self.sub_ffn = Sublayer(o.d_model, o.dropout, pre)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """x: (B, S, d); mask: (B, 1, 1, S) bool (True = real token). Returns (B, S, d)."""
        h = self.sub_attn.input(x)
        x = self.sub_attn.output(x, self.self_attn(h, mask=mask)[0])
        return self.sub_ffn.output(x, self.ffn(self.sub_ffn.input(x)))


class DecoderLayer(nn.Module):
    """Causal self-attention, cross-attention to the encoder memory, FFN."""

    def __init__(self, o: ModelOptions) -> None:
        super().__init__()
        pre = o.norm == "pre"
        self.self_attn = MultiHeadAttention(o.d_model, o.heads, o.attention_dropout)
        self.cross_attn = MultiHeadAttention(o.d_model, o.heads, o.attention_dropout)
        self.ffn = FeedForward(o.d_model, o.d_ff, o.activation_dropout)
        self.sub_self = Sublayer(o.d_model, o.dropout, pre)
        self.sub_cross = Sublayer(o.d_model, o.dropout, pre)
        self.sub_ffn = Sublayer(o.d_model, o.dropout, pre)

    def forward(
        self, x: Tensor, src_mask: Tensor, cross_kv: KV, past_kv: KV | None = None
    ) -> tuple[Tensor, KV]:
        """Full (``past_kv=None``: x is (B, T, d), causal mask) or incremental (x is (B, 1, d),
        ``past_kv`` each (B, H, t, d/H)) decoding.

        ``cross_kv``: the memory's keys/values for this layer, each (B, H, S, d/H);
        ``src_mask``: (B, 1, 1, S) bool. Returns (B, T, d) and the self-attention keys/values
        including the new positions (the cache for the next step).
        """
        h = self.sub_self.input(x)
        # With a cache the single new query may see every cached position: no mask needed.
        y, self_kv = self.self_attn(h, causal=past_kv is None and x.size(1) > 1, past_kv=past_kv)
        x = self.sub_self.output(x, y)
        y, _ = self.cross_attn(self.sub_cross.input(x), mask=src_mask, static_kv=cross_kv)
        x = self.sub_cross.output(x, y)
        x = self.sub_ffn.output(x, self.ffn(self.sub_ffn.input(x)))
        return x, self_kv


@dataclass
class TransformerState(DecoderState):
    """Incremental decoding state of :class:`TransformerModel` (N rows).

    Attributes:
        src_mask: (N, 1, 1, S) bool, True = real source token.
        cross_kv: per decoder layer, the memory's keys and values, each (N, H, S, d/H);
            computed once in ``init_state``.
        self_kv: per decoder layer, keys and values of the target positions decoded so far,
            each (N, H, t, d/H); None before the first step.
        src_id: (N,) long, the encoded sentence each row belongs to (rows with the same
            ``src_id`` have identical ``src_mask`` and ``cross_kv``).
        offset: number of target positions decoded so far (position of the next token).
    """

    src_mask: Tensor
    cross_kv: list[KV]
    self_kv: list[KV | None]
    src_id: Tensor
    offset: int = 0


class TransformerModel(Seq2SeqModel):
    """Encoder-decoder Transformer; see the module docstring for the conventions."""

    def __init__(self, options: ModelOptions, vocab_size: int) -> None:
        super().__init__()
        o = self.options = options
        self.vocab_size = vocab_size
        self.embed_scale = math.sqrt(o.d_model)
        self.src_embed = self._embedding(vocab_size, o.d_model)
        self.tgt_embed = self.src_embed if o.tie_embeddings else self._embedding(vocab_size, o.d_model)
        self.positions = SinusoidalPositions(o.d_model, o.max_positions)
        self.embed_dropout = nn.Dropout(o.dropout)
        self.encoder = nn.ModuleList(EncoderLayer(o) for _ in range(o.encoder_layers))
        self.decoder = nn.ModuleList(DecoderLayer(o) for _ in range(o.decoder_layers))
        # Pre-norm stacks end un-normalised; post-norm outputs are already normalised.
        pre = o.norm == "pre"
        self.encoder_norm = nn.LayerNorm(o.d_model) if pre else nn.Identity()
        self.decoder_norm = nn.LayerNorm(o.d_model) if pre else nn.Identity()

    @staticmethod
    def _embedding(vocab_size: int, d_model: int) -> nn.Embedding:
        emb = nn.Embedding(vocab_size, d_model, padding_idx=PAD_ID)
        # std d^-0.5 so that after scaling by sqrt(d) the embeddings have unit variance,
        # comparable to the position encodings.
        nn.init.normal_(emb.weight, mean=0.0, std=d_model**-0.5)
        with torch.no_grad():
            emb.weight[PAD_ID].zero_()
        return emb

    def _embed(self, emb: nn.Embedding, ids: Tensor, offset: int = 0) -> Tensor:
        """(B, T) ids → (B, T, d): scaled embeddings + positions offset..offset+T-1, dropout."""
        x = emb(ids) * self.embed_scale + self.positions(ids.size(1), offset).to(emb.weight.dtype)
        return self.embed_dropout(x)

    def _logits(self, h: Tensor) -> Tensor:
        """(..., d) decoder outputs → (..., V) logits through the (tied) output matrix."""
        return F.linear(self.decoder_norm(h), self.tgt_embed.weight)

    def encode(self, src: Tensor) -> EncoderOut:
        """src: (B, S) ids → memory (B, S, d) and the (B, S) source padding flags."""
        pad = src.eq(PAD_ID)
        mask = key_padding_mask(pad)
        x = self._embed(self.src_embed, src)
        for layer in self.encoder:
            x = layer(x, mask)
        return EncoderOut(memory=self.encoder_norm(x), src_pad=pad)

    def _cross_kv(self, memory: Tensor) -> list[KV]:
        return [layer.cross_attn.project_kv(memory) for layer in self.decoder]

    def decode(self, enc: EncoderOut, tgt_in: Tensor) -> Tensor:
        """tgt_in: (B, T) ids → (B, T, V) logits, every position at once (causal)."""
        mask = key_padding_mask(enc.src_pad)
        x = self._embed(self.tgt_embed, tgt_in)
        for layer, kv in zip(self.decoder, self._cross_kv(enc.memory)):
            x, _ = layer(x, mask, kv)
        return self._logits(x)

    def init_state(self, enc: EncoderOut) -> TransformerState:
        return TransformerState(
            src_mask=key_padding_mask(enc.src_pad),
            cross_kv=self._cross_kv(enc.memory),
            self_kv=[None] * len(self.decoder),
            src_id=torch.arange(enc.memory.size(0), device=enc.memory.device),
        )

    def step(self, prev: Tensor, state: TransformerState) -> tuple[Tensor, TransformerState]:
        """prev: (N,) ids → (N, V) float32 log-probs of the next token, updated state."""
        x = self._embed(self.tgt_embed, prev[:, None], offset=state.offset)  # (N, 1, d)
        new_kv = []
        for layer, cross, past in zip(self.decoder, state.cross_kv, state.self_kv):
            x, kv = layer(x, state.src_mask, cross, past_kv=past)
            new_kv.append(kv)
        log_probs = F.log_softmax(self._logits(x[:, 0]).float(), dim=-1)
        return log_probs, dataclasses.replace(state, self_kv=new_kv, offset=state.offset + 1)

    def reorder_state(self, state: TransformerState, index: Tensor) -> TransformerState:
        """Select rows ``index`` ((N',) LongTensor) of every cached tensor."""
        def sel(kv: KV | None) -> KV | None:
            return None if kv is None else (kv[0].index_select(0, index), kv[1].index_select(0, index))

        src_id = state.src_id.index_select(0, index)
        # Beam search reorders rows among the beams of each sentence at every step; the
        # memory's keys/values are the same for all those rows, so they are copied only when
        # the row → sentence mapping changes (beam expansion, finished sentences dropped).
        same_sources = src_id.shape == state.src_id.shape and bool(torch.equal(src_id, state.src_id))
        return TransformerState(
            src_mask=state.src_mask if same_sources else state.src_mask.index_select(0, index),
            cross_kv=state.cross_kv if same_sources else [sel(kv) for kv in state.cross_kv],
            self_kv=[sel(kv) for kv in state.self_kv],
            src_id=src_id,
            offset=state.offset,
        )


def build_transformer(options: ModelOptions, vocab_size: int) -> TransformerModel:
    """Family constructor registered as ``transformer`` in :data:`registry.FAMILIES`."""
    return TransformerModel(options, vocab_size)
