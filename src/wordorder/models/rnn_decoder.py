"""Decoders of the RNN family: RNNsearch (Bahdanau et al. 2015) and RNNsearch*, the conditional
GRU of Nematus (Sennrich et al. 2017), with the contexts of Chen et al. 2018.

One step (``RNNDecoder.step``), for the previous target word y and state s:

- RNNsearch: the attention is queried with s; s ← GRU([E y; c], s).
- cGRU: s' = GRU₁(E y, s); the attention is queried with s'; s ← GRU₂(c, s') (Zhang et al.
  2018 Eq. 13, whose RNNsearch* and RNMT use it).
- readout t = tanh(L_w E y + L_d s + L_c c [+ L_c2 c₂]), dropped out with ``output_dropout``;
  logits = t · Eᵀ (Eq. 4 and 14 of Chen et al. 2018; Nematus' readout).

``attention`` picks how the context c is weighted (global, local-p, flexible, syntax-directed);
``second_context`` adds Chen 2018's second context c₂ to the readout only (Eq. 14), weighted
from the same global scores, or from the dependency-unit annotations (SDRNMT-2).

The GRU cells take their input projection precomputed, so teacher forcing projects all target
embeddings in one matrix product; the GRU follows Nematus (and ``torch.nn.GRU``): the reset gate
multiplies (U s + b), and z gates the old state: s_new = z ⊙ s + (1 − z) ⊙ s̃.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from wordorder.models.base import DecoderState
from wordorder.models.dropout import Dropout
from wordorder.models.rnn_attention import (
    AdditiveScorer,
    FlexibleWeights,
    LocalWeights,
    SyntaxWeights,
    context,
    masked_softmax,
)

if TYPE_CHECKING:
    from wordorder.models.options import RNNOptions


class GRUCell(nn.Module):
    """A GRU step whose input projection W x + b (N, 3h) is computed by the caller."""

    def __init__(self, d_in: int, d_hidden: int) -> None:
        super().__init__()
        self.input = nn.Linear(d_in, 3 * d_hidden)
        self.hidden = nn.Linear(d_hidden, 3 * d_hidden)

    def forward(self, gx: Tensor, h: Tensor) -> Tensor:
        """(N, 3h) projected input, (N, h) state → (N, h)."""
        gh = self.hidden(h)
        xr, xz, xn = gx.chunk(3, dim=-1)
        hr, hz, hn = gh.chunk(3, dim=-1)
        r = torch.sigmoid(xr + hr)
        z = torch.sigmoid(xz + hz)
        n = torch.tanh(xn + r * hn)
        return z * h + (1.0 - z) * n


@dataclass
class RNNState(DecoderState):
    """Decoder state (N rows).

    Attributes:
        s: (N, h) GRU state; memory: (N, S, 2h) annotations; keys: (N, S, a) their projection;
        valid: (N, S) bool real source positions; length: (N,) long real positions;
        distance: (N, S, S) syntax distances (SDAtt) or None;
        previous, previous2: (N, S) last weights of a flexible first/second context, or None;
        units, unit_keys: dependency-unit annotations and their projection (SDRNMT-2) or None.
    """

    s: Tensor
    memory: Tensor
    keys: Tensor
    valid: Tensor
    length: Tensor
    distance: Tensor | None = None
    previous: Tensor | None = None
    previous2: Tensor | None = None
    units: Tensor | None = None
    unit_keys: Tensor | None = None


def _weights_module(kind: str, o: RNNOptions, d_query: int) -> nn.Module | None:
    if kind == "local":
        return LocalWeights(d_query, o.d_model, o.local_window)
    if kind == "flexible":
        return FlexibleWeights(d_query, o.flexible_skip)
    if kind == "syntax":
        return SyntaxWeights(d_query, o.d_model, o.syntax_n)
    return None


class RNNDecoder(nn.Module):
    """The decoder step and its readout; see the module docstring."""

    def __init__(self, o: RNNOptions, d_embed: int) -> None:
        super().__init__()
        h, mem = o.d_model, 2 * o.d_model
        self.cgru = o.decoder == "cgru"
        self.init = nn.Linear(mem, h)
        self.gru1 = GRUCell(d_embed, h) if self.cgru else None
        # RNNsearch's GRU reads [E y; c]: the E y part of its input projection is precomputed.
        self.gru2 = GRUCell(mem if self.cgru else d_embed, h)
        self.context_in = None if self.cgru else nn.Linear(mem, 3 * h, bias=False)
        a = o.attention_dim or h
        self.scorer = AdditiveScorer(mem, h, a)
        self.attention = o.attention
        self.first = _weights_module(o.attention, o, h)
        self.second_kind = o.second_context
        self.second = _weights_module(o.second_context, o, h)
        self.unit_scorer = AdditiveScorer(mem, h, a) if o.second_context == "sdr" else None
        self.read_y = nn.Linear(d_embed, d_embed)
        self.read_s = nn.Linear(h, d_embed, bias=False)
        self.read_c = nn.Linear(mem, d_embed, bias=False)
        self.read_c2 = nn.Linear(mem, d_embed, bias=False) if o.second_context != "none" else None
        # on the readout, the output layer's input (Zhang et al. 2018 §5.2 drop only there)
        self.dropout = Dropout(o.dropout if o.output_dropout is None else o.output_dropout)

    def project_input(self, embedded: Tensor) -> Tensor:
        """(..., e) target embeddings → (..., 3h) input projection of the first GRU."""
        # the cGRU reads y in GRU₁ (RNNsearch in its only GRU, gru2)
        return (self.gru2 if self.gru1 is None else self.gru1).input(embedded)

    def initial(self, memory: Tensor, valid: Tensor) -> Tensor:
        """s₀ = tanh(W_init · mean of the real annotations + b): (N, h)."""
        mask = valid[..., None].to(memory.dtype)
        mean = (memory * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return torch.tanh(self.init(mean))

    def _weigh(
        self,
        module: nn.Module | None,
        kind: str,
        scores: Tensor,
        query: Tensor,
        st: RNNState,
        previous: Tensor | None,
    ) -> Tensor:
        if kind == "global":
            return masked_softmax(scores, st.valid)
        assert module is not None  # _weights_module builds one for every other kind
        if kind == "local":
            return module(scores, st.valid, query, st.length)
        if kind == "flexible":
            return module(scores, st.valid, query, previous)
        return module(scores, st.valid, query, st.length, st.distance)

    def step(self, y: Tensor, y_gates: Tensor, st: RNNState) -> tuple[Tensor, RNNState, Tensor]:
        """One target position.

        Args:
            y: (N, e) embedding of the previous word; y_gates: (N, 3h) its input projection.
        Returns:
            the readout t (N, e), the new state and the first context's weights (N, S).
        """
        if self.gru1 is not None:  # cGRU
            query = self.gru1(y_gates, st.s)
        else:
            query = st.s
        scores = self.scorer(st.keys, query)
        weights = self._weigh(self.first, self.attention, scores, query, st, st.previous)
        c = context(weights, st.memory)
        if self.context_in is None:  # cGRU
            s = self.gru2(self.gru2.input(c), query)
        else:
            s = self.gru2(y_gates + self.context_in(c), st.s)
        readout = self.read_y(y) + self.read_s(s) + self.read_c(c)
        changes: dict[str, Tensor] = {"s": s}
        if self.attention == "flexible":
            changes["previous"] = weights
        if self.second_kind == "sdr":
            # __init__ builds the unit scorer and read_c2 for it, and encode the units
            assert (
                self.unit_scorer is not None and self.read_c2 is not None and st.units is not None
            )
            w2 = masked_softmax(self.unit_scorer(st.unit_keys, query), st.valid)
            readout = readout + self.read_c2(context(w2, st.units))
        elif self.second_kind != "none":
            assert self.read_c2 is not None  # built for every second context
            w2 = self._weigh(self.second, self.second_kind, scores, query, st, st.previous2)
            readout = readout + self.read_c2(context(w2, st.memory))
            if self.second_kind == "flexible":
                changes["previous2"] = w2
        return self.dropout(torch.tanh(readout)), dataclasses.replace(st, **changes), weights
