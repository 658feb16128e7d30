"""The RNN encoder-decoder family (``family: rnn``): RNNsearch / RNNsearch* and the attention
variants of Chen et al. 2018, Chen et al. 2017's source dependency representation, and Zhang
et al. 2018's relation networks — one model, composed from :class:`RNNOptions`.

Source: embeddings (optionally [E x; VU] with the dependency-unit encoding, SDRNMT-1) → a
bidirectional GRU, or the RNMT encoder with relation-network layers → annotations (B, S, 2h).
Target: the decoder of :mod:`wordorder.models.rnn_decoder`, one step per position; teacher
forcing runs the same step over the target in a loop (the recurrence needs it) with every
input projection computed for all positions at once. With ``tie_embeddings`` the source and
target embeddings are one (V, e) matrix (otherwise one per side, of its vocabulary's size); with
``tie_output`` the output matrix is the target embedding, otherwise a (V_tgt, e) matrix of its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from wordorder.models.base import Seq2SeqModel
from wordorder.models.dropout import Dropout
from wordorder.models.fixed_state import FixedStateDecoding
from wordorder.models.rnn_decoder import RNNDecoder, RNNState
from wordorder.models.rnn_encoder import BiGRUEncoder, DependencyUnitEncoder, RNNEncoderOut
from wordorder.models.source_tree import dependency_units, subword_distances, subword_parents
from wordorder.specials import PAD_ID

if TYPE_CHECKING:
    from wordorder.models.options import RNNOptions

Feats = Mapping[str, Tensor]


class RNNModel(FixedStateDecoding, Seq2SeqModel[RNNEncoderOut, RNNState]):
    """Attentional RNN encoder-decoder; see the module docstring."""

    def __init__(
        self, options: RNNOptions, vocab_size: int, tgt_vocab_size: int | None = None
    ) -> None:
        super().__init__()
        o = self.options = options
        self.vocab_size = vocab_size
        self.tgt_vocab_size = vocab_size if tgt_vocab_size is None else tgt_vocab_size
        e, h = o.embed_dim or o.d_model, o.d_model
        self.src_embed = nn.Embedding(vocab_size, e, padding_idx=PAD_ID)
        nn.init.normal_(self.src_embed.weight, std=e**-0.5)
        self.tgt_embed = (
            self.src_embed
            if o.tie_embeddings
            else nn.Embedding(self.tgt_vocab_size, e, padding_idx=PAD_ID)
        )
        if not o.tie_embeddings:
            nn.init.normal_(self.tgt_embed.weight, std=e**-0.5)
        with torch.no_grad():
            self.src_embed.weight[PAD_ID].zero_()
            self.tgt_embed.weight[PAD_ID].zero_()
        self.dropout = Dropout(o.dropout)
        # Flexible attention counts its vision span per decoded row on the host (the translate
        # summary reports it): the search of static shapes would read the device every step and
        # count finished sentences' rows too, so those models decode with the default search.
        self.static_decoding = "flexible" not in (o.attention, o.second_context)
        unit_width = e if o.source_dependency or o.second_context == "sdr" else 0
        self.units = DependencyUnitEncoder(e, unit_width) if unit_width else None
        d_in = e + (unit_width if o.source_dependency else 0)
        if o.relation_layers:
            from wordorder.models.relation import RNMTEncoder

            self.encoder: nn.Module = RNMTEncoder(
                d_in,
                2 * h,
                channels=o.relation_channels(),
                gp_hidden=o.relation_width,
                chunk=o.relation_chunk,
                pad_quirk=o.relation_pad_quirk,
            )
        else:
            self.encoder = BiGRUEncoder(d_in, h)
        self.unit_encoder = BiGRUEncoder(unit_width, h) if o.second_context == "sdr" else None
        self.decoder = RNNDecoder(o, e)
        # created last: tied models draw the same weights as before
        self.output_proj: nn.Linear | None = None
        if not o.tie_output:
            self.output_proj = nn.Linear(e, self.tgt_vocab_size, bias=False)
            nn.init.normal_(self.output_proj.weight, std=e**-0.5)
        self.record_attention = False  # keep the first context's weights of decode_hidden
        self.attention: Tensor | None = None  # (B, T, S) when recorded
        if o.init_uniform > 0:
            self._init_uniform(o.init_uniform)

    def _init_uniform(self, a: float) -> None:
        """Every parameter from U(−a, a), as Zhang et al. 2018 (§5.2) initialise all of theirs
        (BatchNorm scales included, as the authors' code does); PAD rows stay zero."""
        with torch.no_grad():
            for p in self.parameters():
                p.uniform_(-a, a)
            self.src_embed.weight[PAD_ID].zero_()
            self.tgt_embed.weight[PAD_ID].zero_()

    @property
    def output_weight(self) -> Tensor:
        return self.tgt_embed.weight if self.output_proj is None else self.output_proj.weight

    def encode(self, src: Tensor, feats: Feats | None = None) -> RNNEncoderOut:
        """(B, S) ids (+ ``word``/``head`` for the syntax variants) → annotations (B, S, 2h)."""
        o = self.options
        feats = feats or {}
        missing = o.required_features() - set(feats)
        if missing:
            raise ValueError(f"this model needs the source features {sorted(missing)}")
        pad = src.eq(PAD_ID)
        valid = ~pad
        x = self.src_embed(src)
        distance = unit_vectors = None
        if o.syntax_tree():
            word, head = feats["word"], feats["head"]
            if o.attention == "syntax" or o.second_context == "syntax":
                distance = subword_distances(word, head, valid)
            if self.units is not None:
                units = dependency_units(subword_parents(word, head, valid), valid, o.unit_size)
                unit_vectors = self.units(x, units)
        if o.source_dependency:
            # source_dependency builds self.units and needs the tree
            assert unit_vectors is not None
            x = torch.cat([x, unit_vectors], dim=-1)
        memory = self.dropout(self.encoder(self.dropout(x), pad))
        units_memory = None
        if self.unit_encoder is not None:
            units_memory = self.dropout(self.unit_encoder(self.dropout(unit_vectors), pad))
        return RNNEncoderOut(
            memory=memory,
            src_pad=pad,
            length=valid.sum(dim=1),
            distance=distance,
            units=units_memory,
        )

    def init_state(self, enc: RNNEncoderOut) -> RNNState:
        dec, valid = self.decoder, ~enc.src_pad
        s = enc.memory.size(1)
        start = None
        if "flexible" in (dec.attention, dec.second_kind):
            # The first centre of a flexible context: the start of the sentence.
            # (not F.one_hot, which reads its input's range back from the device)
            start = enc.memory.new_zeros(enc.memory.size(0), s)
            start[:, 0] = 1.0
        unit_keys = None
        if dec.unit_scorer is not None:
            # encode gives units exactly when there is a unit scorer (sdr)
            assert enc.units is not None
            unit_keys = dec.unit_scorer.keys(enc.units)
        return RNNState(
            s=dec.initial(enc.memory, valid),
            memory=enc.memory,
            keys=dec.scorer.keys(enc.memory),
            valid=valid,
            length=enc.length,
            distance=enc.distance,
            previous=start if dec.attention == "flexible" else None,
            previous2=start if dec.second_kind == "flexible" else None,
            units=enc.units,
            unit_keys=unit_keys,
        )

    def decode_hidden(self, enc: RNNEncoderOut, tgt_in: Tensor) -> Tensor:
        """(B, T) decoder inputs → (B, T, e) readouts (teacher forcing)."""
        y = self.dropout(self.tgt_embed(tgt_in))  # (B, T, e)
        gates = self.decoder.project_input(y)  # (B, T, 3h): one product for all positions
        st = self.init_state(enc)
        out, weights = [], []
        for t in range(tgt_in.size(1)):
            r, st, w = self.decoder.step(y[:, t], gates[:, t], st)
            out.append(r)
            if self.record_attention:
                weights.append(w)
        self.attention = torch.stack(weights, dim=1) if self.record_attention else None
        return torch.stack(out, dim=1)

    def step(self, prev: Tensor, state: RNNState) -> tuple[Tensor, RNNState]:
        """prev: (N,) ids → (N, V) float32 log-probs, new state."""
        y = self.dropout(self.tgt_embed(prev))
        r, state, _ = self.decoder.step(y, self.decoder.project_input(y), state)
        return F.log_softmax(self._logits(r).float(), dim=-1), state

    def _logits(self, r: Tensor) -> Tensor:
        """(N, e) readouts → (N, V_tgt) logits."""
        return F.linear(r, self.output_weight)

    def attention_weights(self, src: Tensor, tgt_in: Tensor, feats: Feats | None = None) -> Tensor:
        """Forced decoding: (B, T, S) weights of the first context at each target position."""
        self.record_attention = True
        try:
            self.decode_hidden(self.encode(src, feats), tgt_in)
            # decode_hidden keeps it while record_attention is set
            assert self.attention is not None
            return self.attention
        finally:
            self.record_attention = False
            self.attention = None


def build_rnn(options: RNNOptions, vocab_size: int, tgt_vocab_size: int | None = None) -> RNNModel:
    """Family constructor registered as ``rnn`` in :data:`registry.FAMILIES`."""
    return RNNModel(options, vocab_size, tgt_vocab_size)
