"""The interface every sequence-to-sequence model family implements.

Training uses :meth:`Seq2SeqModel.forward` (teacher forcing). Decoding (greedy and beam
search in :mod:`wordorder.decode.beam`) uses only ``encode`` / ``init_state`` / ``step`` /
``reorder_state``, so any family (Transformer, RNN, ...) that implements them shares the
same search code. A decoder state is opaque to the search: it is only ever passed back to
the model, and re-indexed along the batch dimension with ``reorder_state``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn


@dataclass
class EncoderOut:
    """What the encoder hands to the decoder.

    Attributes:
        memory: (B, S, d) encoder outputs.
        src_pad: (B, S) bool, True at padding positions of the source.
    """

    memory: Tensor
    src_pad: Tensor


class DecoderState:
    """Marker base class for a family's incremental decoder state (a dataclass)."""


EncT = TypeVar("EncT", bound=EncoderOut)
StateT = TypeVar("StateT", bound=DecoderState)


def select_rows(obj: Any, index: Tensor) -> Any:
    """Re-index every tensor inside ``obj`` along dim 0 (recursing into dataclasses,
    lists, tuples and dicts); non-tensor leaves are kept as they are.

    ``index``: (N',) LongTensor of rows to take; may repeat rows (beam expansion) or drop
    them (finished sentences).
    """
    if isinstance(obj, Tensor):
        return obj.index_select(0, index)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {
            f.name: select_rows(getattr(obj, f.name), index) for f in dataclasses.fields(obj)
        }
        return dataclasses.replace(obj, **changes)
    if isinstance(obj, (list, tuple)):
        return type(obj)(select_rows(x, index) for x in obj)
    if isinstance(obj, dict):
        return {k: select_rows(v, index) for k, v in obj.items()}
    return obj


def trainable_parameters(model: nn.Module) -> int:
    """Trainable parameters, each shared (tied) tensor once."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


class Seq2SeqModel(nn.Module, Generic[EncT, StateT]):
    """Base class of all model families, generic over the family's encoder output and decoder
    state (e.g. ``Seq2SeqModel[RNNEncoderOut, RNNState]``).

    Subclasses set ``self.options`` (their options dataclass), ``self.vocab_size`` (the source
    or joint vocabulary) and ``self.tgt_vocab_size`` (the target's; the same when joint), and
    implement the methods below. Token conventions (see :mod:`wordorder.specials`): source =
    ids + [EOS], decoder input = [BOS] + ids, decoder output = ids + [EOS], PAD = 0.
    """

    options: Any
    vocab_size: int
    tgt_vocab_size: int
    # A per-token regulariser of the last training forward, added to the loss by the trainer
    # (e.g. the Transformer's head disagreement); None in families without one.
    auxiliary_loss: Tensor | None = None
    # Why an update of this family reads values back from the device (which a CUDA graph cannot
    # capture: train.cuda_graphs), or None when it never does.
    capture_blocker: str | None = None
    # Whether the family decodes with static shapes too (static_state / static_step /
    # static_reorder, as the Transformer's wordorder.models.transformer_static), which
    # decode.cuda_graphs captures; the others decode with the search of variable shapes only.
    static_decoding: bool = False

    def forward(
        self, src: Tensor, tgt_in: Tensor, feats: Mapping[str, Tensor] | None = None
    ) -> Tensor:
        """Teacher-forced logits.

        Args:
            src: (B, S) LongTensor of source ids (padded with PAD).
            tgt_in: (B, T) LongTensor of decoder input ids ([BOS] + ids, padded).
            feats: extra source inputs (name → (B, S) LongTensor) for models that need them.
        Returns:
            (B, T, V) logits (not normalised).
        """
        return self.decode(self.encode(src, feats), tgt_in)

    def encode(self, src: Tensor, feats: Mapping[str, Tensor] | None = None) -> EncT:
        """Encode (B, S) source ids (and the model's source features, each (B, S))."""
        raise NotImplementedError

    def forward_hidden(
        self, src: Tensor, tgt_in: Tensor, feats: Mapping[str, Tensor] | None = None
    ) -> Tensor:
        """Teacher-forced (B, T, d) states before the output matrix (what the fused loss of
        :mod:`wordorder.train.loss` projects itself)."""
        return self.decode_hidden(self.encode(src, feats), tgt_in)

    def decode(self, enc: EncT, tgt_in: Tensor) -> Tensor:
        """(B, T) decoder input ids → (B, T, V) logits, all positions at once."""
        return F.linear(self.decode_hidden(enc, tgt_in), self.output_weight)

    def decode_hidden(self, enc: EncT, tgt_in: Tensor) -> Tensor:
        """(B, T) decoder input ids → (B, T, d) states; logits = states · ``output_weight``ᵀ."""
        raise NotImplementedError

    @property
    def output_weight(self) -> Tensor:
        """(V, d) output matrix (no bias)."""
        raise NotImplementedError

    def init_state(self, enc: EncT) -> StateT:
        """Decoder state before the first step (one row per encoded sentence)."""
        raise NotImplementedError

    def step(self, prev: Tensor, state: StateT) -> tuple[Tensor, StateT]:
        """One incremental decoder step.

        Args:
            prev: (N,) LongTensor, the previous output token of each row (BOS first).
            state: the state after the previous step (N rows).
        Returns:
            (N, V) float32 log-probabilities of the next token, and the new state.
        """
        raise NotImplementedError

    def attention_weights(
        self, src: Tensor, tgt_in: Tensor, feats: Mapping[str, Tensor] | None = None
    ) -> Tensor:
        """Forced decoding of (B, S) sources and (B, T) decoder inputs: (B, T, S) attention of
        each target position over the source (row t is the step that predicts output token
        t), the raw material of attention alignments (AER). Each family documents which
        attention it returns."""
        raise NotImplementedError

    def reorder_state(self, state: StateT, index: Tensor) -> StateT:
        """Select rows of ``state``: ``index`` is an (N',) LongTensor of row numbers."""
        return select_rows(state, index)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device
