"""The source side of the Transformer: what its encoder reads (:class:`SourceSide`, a mixin of
:class:`~wordorder.models.transformer.TransformerModel`, and :func:`build_source_input`).

The source is one of: the plain embedding + PE; Chen 2020's grouped input
(:class:`~wordorder.models.inputs.GroupedInput`); Sennrich & Haddow's factors
(:class:`~wordorder.models.inputs.FactoredInput`); plus, optionally, Kawara 2021's absolute
preordering encoding (PE of the preordered position) and a DiSAN layer (residual). With
``position_unit: word`` the absolute positions count words, numbered from the word-start flags
of the source vocabulary. The mixin holds methods only: the model's ``__init__`` creates the
modules they use, in the order that fixes the initial weights, and the parameters keep their
names in the model's state dict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from wordorder.errors import WordorderError
from wordorder.models.options import CATEGORICAL_FEATURES
from wordorder.models.positions import SinusoidalPositions
from wordorder.specials import PAD_ID

if TYPE_CHECKING:  # registry imports the Transformer to fill its family table
    from wordorder.models.options import TransformerOptions

Feats = Mapping[str, Tensor]


class SourceSide:
    """The source embedding, word positions and source inputs of a Transformer model; the
    attributes below are set by the model's ``__init__``."""

    options: TransformerOptions
    src_embed: nn.Embedding
    positions: SinusoidalPositions
    word_start: Tensor | None  # the buffer registered in __init__ (position_unit: word)
    embed_scale: float
    embed_dropout: nn.Module
    source_input: nn.Module | None
    directional: nn.Module | None

    @staticmethod
    def _embedding(vocab_size: int, width: int, d_model: int) -> nn.Embedding:
        """A (vocab_size, width) table, PAD row zero."""
        emb = nn.Embedding(vocab_size, width, padding_idx=PAD_ID)
        # std d^-0.5 so that after scaling by sqrt(d) the embeddings have unit variance,
        # comparable to the position encodings.
        nn.init.normal_(emb.weight, mean=0.0, std=d_model**-0.5)
        with torch.no_grad():
            emb.weight[PAD_ID].zero_()
        return emb

    def _pe(self, length: int, dtype: torch.dtype, offset: int = 0) -> Tensor:
        return self.positions(length, offset).to(dtype)

    def set_word_starts(self, starts: Sequence[bool]) -> None:
        """Which source ids begin a word (``position_unit: word``), one flag per id of the
        source vocabulary (:func:`wordorder.model_io.subwords.word_starts`)."""
        if self.word_start is None:
            raise WordorderError("set_word_starts is for models with position_unit: word")
        if len(starts) != self.word_start.numel():
            raise WordorderError(
                f"{len(starts)} word-start flags for a source vocabulary of "
                f"{self.word_start.numel()}",
                hint="give one flag per id of the model's source subword vocabulary",
            )
        flags = torch.tensor([bool(f) for f in starts], dtype=torch.int8)
        self.word_start.copy_(flags.to(self.word_start.device))

    def source_words(self, src: Tensor) -> Tensor:
        """(B, S) ids (+ EOS) → (B, S) index of each piece's word: 0 for the first, +1 at every
        word-start piece. The EOS is a word of its own (one more than the last), as the
        ``order`` feature's word positions number it (``preorder.positions: word``)."""
        assert self.word_start is not None  # position_unit: word
        if not self._word_starts_checked:
            if bool((self.word_start < 0).any()):
                raise WordorderError(
                    "this model counts its source positions in words but was not told which "
                    "subwords begin one",
                    hint="call set_word_starts with the source vocabulary's word-start flags",
                )
            self._word_starts_checked = True
        starts = self.word_start[src] > 0
        starts[:, 0] = True
        return starts.long().cumsum(1) - 1

    _word_starts_checked = False

    def _source_pe(self, src: Tensor, words: Tensor | None, dtype: torch.dtype) -> Tensor:
        """Absolute encodings of the source positions: (S, d) by piece, (B, S, d) by word."""
        if words is None:
            return self._pe(src.size(1), dtype)
        return self.positions.lookup(words, bound=words.size(-1)).to(dtype)

    def _embed_source(
        self, src: Tensor, pad: Tensor, feats: Feats, words: Tensor | None = None
    ) -> Tensor:
        """(B, S) ids (+ feats) → (B, S, d) encoder input; ``words``: the word index of every
        piece (``position_unit: word``), None = positions count pieces."""
        o = self.options
        missing = o.required_features() - set(feats)
        if missing:
            raise ValueError(f"this model needs the source features {sorted(missing)}")
        if o.factors:
            assert self.source_input is not None  # the FactoredInput of build_source_input
            x = self.source_input(self.src_embed(src), feats)  # adds the PEs itself
        else:
            x = self.src_embed(src) * self.embed_scale
            if self.source_input is not None:
                x = self.source_input(x, pad, feats)  # groups add their own PEs
            elif o.positions == "absolute":
                x = x + self._source_pe(src, words, x.dtype)
        if o.preorder_encoding == "absolute":
            # preordered positions: a permutation of each row's positions, below the width
            x = x + self.positions.lookup(feats["order"], bound=src.size(1)).to(x.dtype)
        x = self.embed_dropout(x)
        if self.directional is not None:
            # Residual, so the word and position information reaches the first layer as in the
            # baseline; DiSAN adds direction-aware context on top of it.
            x = x + self.directional(x, pad)
        return x


def build_source_input(o: TransformerOptions) -> nn.Module | None:
    """Chen 2020's grouped input or Sennrich & Haddow's factors; None = plain embedding + PE."""
    if not o.input_groups and not o.factors:
        return None
    from wordorder.models.inputs import FactoredInput, GroupedInput

    sizes = o.feature_sizes
    for name in o.required_features() & set(CATEGORICAL_FEATURES):
        if int(sizes.get(name, 0)) < 4:
            raise WordorderError(
                (
                    "model option feature_sizes has no vocabulary size for "
                    f"the source feature '{name}'"
                ),
                hint=(
                    "the trainer sets it from the data; set feature_sizes "
                    "when building a model by hand"
                ),
            )
    if o.input_groups:
        groups = [(name, heads * o.head_dim) for name, heads in o.group_heads()]
        return GroupedInput(
            o.d_model,
            groups,
            pos_vocab=int(sizes.get("pos", 0)),
            rec_cell=o.rec_cell,
            loc_kernel=o.loc_kernel,
        )
    if o.factors:
        return FactoredInput(
            o.d_model, dict(o.factors), {name: int(sizes.get(name, 0)) for name in o.factors}
        )
    return None
