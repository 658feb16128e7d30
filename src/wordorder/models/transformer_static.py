"""Transformer decoding with static shapes: the step that a CUDA graph can capture.

The incremental step of :class:`~wordorder.models.transformer.TransformerModel` grows its
self-attention cache by one position a step (``torch.cat``) and keeps the step number as a
Python int, so every step has new shapes and new constants: nothing to replay. Here the rows
(sentences × beams) are fixed for the whole search, the caches are allocated once at their
final width W, and the step number is a (1,) tensor on the device: position encodings, Shaw
buckets and the "keys written so far" mask are all read from it. One step is then the same
sequence of kernels on the same buffers at every t — what
:mod:`wordorder.decode.static_beam` captures once and replays.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from wordorder.models.base import EncoderOut
from wordorder.models.layers import KV, StepCache, key_padding_mask
from wordorder.models.positions import SinusoidalPositions
from wordorder.models.relative import relative_buckets

if TYPE_CHECKING:
    from wordorder.models.options import TransformerOptions


@dataclass
class StaticState:
    """Decoder state of fixed shape for N = B·K rows (K beams of each of B sentences).

    Attributes:
        src_mask: (N, 1, 1, S) bool, True = real source token.
        cross_kv: per decoder layer, the memory's keys and values, each (N, H, S, d/H).
        self_kv: per decoder layer, self-attention keys and values, each (N, H, W, d/H),
            written up to position ``t``.
        t: (1,) long, the position the next step decodes; advanced by :meth:`advance`.
    """

    src_mask: Tensor
    cross_kv: list[KV]
    self_kv: list[KV]
    t: Tensor

    def advance(self) -> None:
        self.t.add_(1)


class StaticDecoding:
    """The static-shape step of the Transformer (mixed into ``TransformerModel``; the
    attributes and methods below are the model's)."""

    static_decoding = True  # decode.cuda_graphs can graph this family's beam search
    options: TransformerOptions
    tgt_embed: nn.Embedding
    positions: SinusoidalPositions
    embed_scale: float
    embed_dropout: nn.Module
    decoder: nn.ModuleList

    def _cross_kv(self, memory: Tensor) -> list[KV]:
        raise NotImplementedError

    def _logits(self, h: Tensor) -> Tensor:
        raise NotImplementedError

    def static_state(self, enc: EncoderOut, beams: int, width: int) -> StaticState:
        """The state of ``beams`` rows per encoded sentence, for up to ``width`` steps."""
        memory = enc.memory
        b, dev = memory.size(0), memory.device
        rows = torch.arange(b, device=dev)[:, None].expand(b, beams).reshape(-1)
        cross = [
            (k.index_select(0, rows), v.index_select(0, rows)) for k, v in self._cross_kv(memory)
        ]
        n, heads, _, head_dim = cross[0][0].shape if cross else (rows.numel(), 1, 0, 1)

        def buffer() -> Tensor:
            return memory.new_zeros(n, heads, width, head_dim)

        self.positions(width)  # the table grows now, not in a step
        return StaticState(
            src_mask=key_padding_mask(enc.src_pad).index_select(0, rows),
            cross_kv=cross,
            self_kv=[(buffer(), buffer()) for _ in cross],
            t=torch.zeros(1, dtype=torch.long, device=dev),
        )

    def static_step(self, prev: Tensor, state: StaticState) -> Tensor:
        """prev: (N,) ids of position t-1 (BOS at t = 0) → (N, V) float32 log-probs of position
        t; the keys and values of position t are written into the caches."""
        o = self.options
        t = state.t
        width = state.self_kv[0][0].size(2) if state.self_kv else 1
        x = self.tgt_embed(prev) * self.embed_scale  # (N, d) token rows
        pe_t = self.positions.table.index_select(0, t).to(x.dtype)  # (1, d)
        if o.positions == "absolute":
            x = x + pe_t
        x = self.embed_dropout(x)
        keys = torch.arange(width, device=t.device)
        buckets = relative_buckets(t, keys, o.relative_k) if o.relative_on("decoder") else None
        pe = pe_t if o.position_slot("decoder") != "none" else None
        visible = keys.le(t).view(1, 1, 1, width)
        for layer, cross, (k, v) in zip(self.decoder, state.cross_kv, state.self_kv):
            cache = StepCache(k=k, v=v, t=t, visible=visible)
            x, _ = layer(
                x, state.src_mask, cross, pe=pe, buckets=buckets, cache=cache, batch=x.size(0)
            )
        return F.log_softmax(self._logits(x).float(), dim=-1)

    def static_reorder(self, state: StaticState, rows: Tensor) -> None:
        """Rows ``rows`` ((N,) long, each within its own sentence's beams) become rows 0..N-1 of
        the self-attention caches, in place (the source side is the same for all a sentence's
        rows, so it stays)."""
        for k, v in state.self_kv:
            k.copy_(k.index_select(0, rows))
            v.copy_(v.index_select(0, rows))
