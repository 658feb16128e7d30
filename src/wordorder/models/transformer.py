"""The Transformer (Vaswani et al. 2017) and the word-order options of the papers built on it.

Layer normalisation is "post" (``x = LN(x + Dropout(sublayer(x)))``, as in the paper and the
word-order papers built on it) or "pre" (``x = x + Dropout(sublayer(LN(x)))``, with a final
LN after each stack). Embeddings are scaled by sqrt(d_model), added to sinusoidal positions
and dropped out. With ``tie_embeddings`` the source and target embeddings are one matrix (the
vocabulary is a joint BPE); otherwise each side has its own, of its own vocabulary's size.
With ``tie_output`` the output projection is the target embedding matrix, otherwise a
(V_tgt, d) matrix of its own. The defaults tie all three.

The source input (the plain embedding + PE, Chen 2020's grouped input, Sennrich & Haddow's
factors, Kawara 2021's absolute preordering encoding, DiSAN, positions counted in words) is the
model's source side, :mod:`wordorder.models.transformer_source`. The layers
(:mod:`wordorder.models.transformer_layers`) carry relative positions, relative preordering
encodings and reordering embeddings. Extra source inputs arrive as ``feats``: (B, S)
LongTensors named ``pos``/``bieo``/``dep`` (tag ids) and ``order`` (preordered positions).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from wordorder.models.base import DecoderState, EncoderOut, Seq2SeqModel
from wordorder.models.dropout import Dropout
from wordorder.models.layers import KV, key_padding_mask
from wordorder.models.positions import SinusoidalPositions
from wordorder.models.relative import relative_buckets, sequence_buckets
from wordorder.models.transformer_layers import DecoderLayer, EncoderLayer, SourceContext
from wordorder.models.transformer_source import SourceSide, build_source_input
from wordorder.models.transformer_static import StaticDecoding
from wordorder.specials import PAD_ID

if TYPE_CHECKING:  # registry imports this module to fill its family table
    from wordorder.models.options import TransformerOptions

Feats = Mapping[str, Tensor]


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


class TransformerModel(SourceSide, StaticDecoding, Seq2SeqModel[EncoderOut, TransformerState]):
    """Encoder-decoder Transformer; see the module docstring for the conventions (its source
    side: :class:`~wordorder.models.transformer_source.SourceSide`; its decoding step of static
    shapes: :class:`~wordorder.models.transformer_static.StaticDecoding`)."""

    def __init__(
        self, options: TransformerOptions, vocab_size: int, tgt_vocab_size: int | None = None
    ) -> None:
        super().__init__()
        o = self.options = options
        self.vocab_size = vocab_size
        self.tgt_vocab_size = vocab_size if tgt_vocab_size is None else tgt_vocab_size
        self.embed_scale = math.sqrt(o.d_model)
        # Sennrich & Haddow's factors take part of d_model: an untied source matrix holds only
        # the word part (a tied one keeps d_model columns for the target side).
        src_width = (
            o.d_model - sum(o.factors.values()) if o.factors and not o.tie_embeddings else o.d_model
        )
        self.src_embed = self._embedding(vocab_size, src_width, o.d_model)
        self.tgt_embed = (
            self.src_embed
            if o.tie_embeddings
            else self._embedding(self.tgt_vocab_size, o.d_model, o.d_model)
        )
        self.positions = SinusoidalPositions(o.d_model, o.max_positions)
        # position_unit: word - 1 where a source id begins a word, 0 inside one, -1 = not set
        # (set_word_starts; kept in the checkpoint, so decoding numbers words as training did)
        self.register_buffer(
            "word_start",
            torch.full((vocab_size,), -1, dtype=torch.int8) if o.position_unit == "word" else None,
        )
        self.embed_dropout = Dropout(o.dropout)
        self.source_input = build_source_input(o)
        self.directional = None
        if o.directional:
            from wordorder.models.disan import DirectionalSelfAttention

            self.directional = DirectionalSelfAttention(o.d_model)
        self.encoder = nn.ModuleList(EncoderLayer(o) for _ in range(o.encoder_layers))
        self.decoder = nn.ModuleList(DecoderLayer(o) for _ in range(o.decoder_layers))
        # Pre-norm stacks end un-normalised; post-norm outputs are already normalised.
        pre = o.norm == "pre"
        self.encoder_norm = nn.LayerNorm(o.d_model) if pre else nn.Identity()
        self.decoder_norm = nn.LayerNorm(o.d_model) if pre else nn.Identity()
        # Created last, so the models with a tied output draw the same initial weights as before.
        self.output_proj: nn.Linear | None = None
        if not o.tie_output:
            self.output_proj = nn.Linear(o.d_model, self.tgt_vocab_size, bias=False)
            # as a tied matrix
            nn.init.normal_(self.output_proj.weight, mean=0.0, std=o.d_model**-0.5)
        self.auxiliary_loss: Tensor | None = None  # λ·(−D) of the last training encode
        if o.disagreement != "none":
            for layer in self._encoder_layers():
                layer.self_attn.record = True
                layer.need_weights = o.disagreement == "position"

    def _embed_target(self, ids: Tensor, offset: int = 0) -> Tensor:
        """(B, T) ids → (B, T, d): scaled embeddings + positions offset..offset+T-1, dropout."""
        x = self.tgt_embed(ids) * self.embed_scale
        if self.options.positions == "absolute":
            x = x + self._pe(ids.size(1), x.dtype, offset)
        return self.embed_dropout(x)

    def _logits(self, h: Tensor) -> Tensor:
        """(..., d) decoder outputs → (..., V_tgt) logits through the output matrix."""
        return F.linear(self.decoder_norm(h), self.output_weight)

    def forward(self, src: Tensor, tgt_in: Tensor, feats: Feats | None = None) -> Tensor:
        """(B, S) source ids, (B, T) decoder input ids, optional source features → (B, T, V)."""
        return self.decode(self.encode(src, feats), tgt_in)

    def encode(self, src: Tensor, feats: Feats | None = None) -> EncoderOut:
        """src: (B, S) ids (+ feats, each (B, S)) → memory (B, S, d) and
        the (B, S) padding flags."""
        o = self.options
        feats = feats or {}
        pad = src.eq(PAD_ID)
        s = src.size(1)
        words = self.source_words(src) if o.position_unit == "word" else None
        x = self._embed_source(src, pad, feats, words)
        b = x.size(0)
        # The layers run on token rows (B·S, d): their products then dispatch no reshapes
        ctx = SourceContext(mask=key_padding_mask(pad), batch=b)
        if o.position_slot("encoder") != "none":
            ctx.pe = self._pe(s, x.dtype).repeat(b, 1)
        if o.relative_on("encoder"):
            ctx.buckets = (  # (S, S) by piece, (B, S, S) by word
                sequence_buckets(s, o.relative_k, src.device)
                if words is None
                else relative_buckets(words, words, o.relative_k)
            )
        if o.preorder_encoding == "relative":
            order = feats["order"]
            ctx.order_buckets = relative_buckets(order, order, o.preorder_k)
        x = x.reshape(b * s, o.d_model)
        for layer in self.encoder:
            x = layer(x, ctx)
        if o.disagreement != "none" and self.training:
            self.auxiliary_loss = -o.disagreement_weight * self._disagreement(~pad)
        return EncoderOut(memory=self.encoder_norm(x).view(b, s, o.d_model), src_pad=pad)

    def _disagreement(self, valid: Tensor) -> Tensor:
        """Li et al. 2018's D, averaged over the encoder layers (a scalar ≤ 0)."""
        from wordorder.models.disagreement import (
            output_disagreement,
            position_disagreement,
            subspace_disagreement,
        )

        kind = self.options.disagreement
        total: Tensor | float = 0.0
        for layer in self._encoder_layers():
            rec = layer.self_attn.recorded
            if kind == "output":
                total = total + output_disagreement(rec["heads"], valid)
            elif kind == "subspace":
                total = total + subspace_disagreement(rec["values"], valid)
            else:
                total = total + position_disagreement(rec["weights"], valid)
            rec.clear()
        # no encoder layer: D = 0, as a tensor (the trainer calls .float())
        if isinstance(total, float):
            return valid.new_zeros((), dtype=torch.float32)
        return total / len(self.encoder)

    # nn.ModuleList types its items as plain Modules; these give the layers their own types.
    def _encoder_layers(self) -> Sequence[EncoderLayer]:
        return cast("Sequence[EncoderLayer]", self.encoder)

    def _decoder_layers(self) -> Sequence[DecoderLayer]:
        return cast("Sequence[DecoderLayer]", self.decoder)

    def _cross_kv(self, memory: Tensor) -> list[KV]:
        """(B, S, d) memory → every decoder layer's keys and values, from token rows."""
        rows, b = memory.reshape(-1, memory.size(-1)), memory.size(0)
        return [layer.cross_attn.project_kv(rows, b) for layer in self._decoder_layers()]

    def _decoder_extras(
        self, length: int, dtype: torch.dtype, device: torch.device, offset: int = 0
    ) -> tuple[Tensor | None, Tensor | None]:
        """Position-slot encodings (T, d) and Shaw buckets (T, offset+T) of new target positions."""
        o = self.options
        pe = self._pe(length, dtype, offset) if o.position_slot("decoder") != "none" else None
        buckets = (
            sequence_buckets(offset + length, o.relative_k, device, offset=offset, queries=length)
            if o.relative_on("decoder")
            else None
        )
        return pe, buckets

    @property
    def output_weight(self) -> Tensor:
        """(V_tgt, d): the target embedding matrix, or the output matrix of its own."""
        return self.tgt_embed.weight if self.output_proj is None else self.output_proj.weight

    def decode_hidden(self, enc: EncoderOut, tgt_in: Tensor) -> Tensor:
        """tgt_in: (B, T) ids → (B, T, d) final decoder states, every position at once (causal)."""
        mask = key_padding_mask(enc.src_pad)
        x = self._embed_target(tgt_in)
        b, t = tgt_in.shape
        pe, buckets = self._decoder_extras(t, x.dtype, x.device)
        if pe is not None:
            pe = pe.repeat(b, 1)  # token rows, as x
        x = x.reshape(b * t, self.options.d_model)
        for layer, kv in zip(self.decoder, self._cross_kv(enc.memory)):
            x, _ = layer(x, mask, kv, pe=pe, buckets=buckets, batch=b)
        return self.decoder_norm(x).view(b, t, self.options.d_model)

    def attention_weights(
        self, src: Tensor, tgt_in: Tensor, feats: Feats | None = None, layer: int = -2
    ) -> Tensor:
        """Forced decoding: (B, T, S) cross-attention of decoder layer ``layer`` averaged over
        its heads. The default is the penultimate layer, whose attention aligns best in
        Garg et al. (2019) and is fairseq's ``alignment_layer`` default (the last layer when
        there is only one)."""
        attn = self._decoder_layers()[layer if len(self.decoder) > 1 else -1].cross_attn
        attn.record = True
        try:
            self.decode_hidden(self.encode(src, feats), tgt_in)
            return attn.recorded["weights"].mean(dim=1)
        finally:
            attn.record = False
            attn.recorded.clear()

    def init_state(self, enc: EncoderOut) -> TransformerState:
        return TransformerState(
            src_mask=key_padding_mask(enc.src_pad),
            cross_kv=self._cross_kv(enc.memory),
            self_kv=[None] * len(self.decoder),
            src_id=torch.arange(enc.memory.size(0), device=enc.memory.device),
        )

    def step(self, prev: Tensor, state: TransformerState) -> tuple[Tensor, TransformerState]:
        """prev: (N,) ids → (N, V) float32 log-probs of the next token, updated state."""
        x = self._embed_target(prev[:, None], offset=state.offset)[:, 0]  # (N, d) token rows
        pe, buckets = self._decoder_extras(1, x.dtype, x.device, offset=state.offset)
        new_kv = []
        n = x.size(0)
        for layer, cross, past in zip(self.decoder, state.cross_kv, state.self_kv):
            x, kv = layer(x, state.src_mask, cross, past_kv=past, pe=pe, buckets=buckets, batch=n)
            new_kv.append(kv)
        log_probs = F.log_softmax(self._logits(x).float(), dim=-1)
        return log_probs, dataclasses.replace(state, self_kv=new_kv, offset=state.offset + 1)

    def reorder_state(self, state: TransformerState, index: Tensor) -> TransformerState:
        """Select rows ``index`` ((N',) LongTensor) of every cached tensor."""

        def sel(kv: KV) -> KV:
            return kv[0].index_select(0, index), kv[1].index_select(0, index)

        src_id = state.src_id.index_select(0, index)
        # Beam search reorders rows among the beams of each sentence at every step; the
        # memory's keys/values are the same for all those rows, so they are copied only when
        # the row → sentence mapping changes (beam expansion, finished sentences dropped).
        same_sources = src_id.shape == state.src_id.shape and bool(
            torch.equal(src_id, state.src_id)
        )
        return TransformerState(
            src_mask=state.src_mask if same_sources else state.src_mask.index_select(0, index),
            cross_kv=state.cross_kv if same_sources else [sel(kv) for kv in state.cross_kv],
            self_kv=[None if kv is None else sel(kv) for kv in state.self_kv],
            src_id=src_id,
            offset=state.offset,
        )


def build_transformer(
    options: TransformerOptions, vocab_size: int, tgt_vocab_size: int | None = None
) -> TransformerModel:
    """Family constructor registered as ``transformer`` in :data:`registry.FAMILIES`."""
    return TransformerModel(options, vocab_size, tgt_vocab_size)
