"""Model options: a dataclass per model family, picked by ``family``, whose fields select and
compose the word-order mechanisms of the papers; the options both families accept are their
common base, :class:`~wordorder.models.options_base.ModelOptions`. This module holds the
Transformer's options and the family table; the RNN family's class is in
:mod:`wordorder.models.options_rnn` (re-exported here, where the code imports it from).

Every option defaults to the baseline (Vaswani et al. 2017; Bahdanau et al. 2015 for the RNN
family), so a paper's system is a short list of non-default options in configs/variants.yaml,
one flat dict that :meth:`ModelOptions.from_dict` turns into the family's class. Options
compose unless ``validate`` names a conflict; another family's option is an error. A new
family adds its class to :data:`FAMILY_OPTIONS` (and its constructor to ``registry.FAMILIES``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wordorder.errors import WordorderError
from wordorder.models.options_base import (
    FAMILY_OPTIONS,
    SIDES,
    ModelOptions,
    family_of,
    option_defaults,
)
from wordorder.models.options_rnn import RNNOptions

__all__ = [
    "CATEGORICAL_FEATURES",
    "FAMILY_OPTIONS",
    "INTEGER_FEATURES",
    "ModelOptions",
    "RNNOptions",
    "SIDES",
    "TransformerOptions",
    "family_of",
    "option_defaults",
]

GROUP_FEATURES = ("global", "rec", "loc", "syn")
FACTORS = ("bieo", "pos", "dep")
DISAGREEMENT = ("none", "output", "subspace", "position")
# tag files of the syntax stage, ids from a vocabulary
CATEGORICAL_FEATURES = ("pos", "bieo", "dep")
# Integer source inputs: preordered positions, and the dependency tree as the word index of
# each subword and the (word-level, 1-based, 0 = root) head of its word.
INTEGER_FEATURES = ("order", "word", "head")
POSITION_UNITS = ("subword", "word")


@dataclass
class TransformerOptions(ModelOptions):
    """Options of the Transformer family (``family: transformer``, the default).

    Positions (Chen et al. 2019; Shaw et al. 2018; Kawara et al. 2021):
        additional_pe: Chen 2019's "+Additional PEs" control in "none", "encoder", "decoder"
            or "both": the reordering-embedding slot of every layer re-adds the plain absolute
            encodings (Cⁿ = LN(H̄ⁿ + PE), no learned penalty).
        relative_k: clipping distance of Shaw's relative positions in self-attention; 0 = off.
        relative_sides (common option): "encoder", "decoder" or "both" self-attentions get them.
        reordering_embeddings: Chen 2019's reordering embeddings (Eq. 6-9) in "none",
            "encoder", "decoder" or "both".
        preorder_encoding: Kawara 2021's encoding of preordered positions in the encoder:
            "none", "absolute" (sinusoidal encoding of the preordered position added to the
            embeddings) or "relative" (tables r^K, r^V over clip(p_j − p_i, preorder_k)).
        preorder_k (common option): clipping distance of the relative preordering encoding.
        position_unit: what the encoder's own positions count, "subword" (every piece) or
            "word" (the pieces of a word share its index, read from the vocabulary's word-start
            marks, see :meth:`TransformerModel.set_word_starts`): the absolute encoding and
            Shaw's distances then count words, as in a paper without subwords (Kawara et al.
            2021, footnote 12), in the unit of ``preorder.positions: word``. The decoder's
            positions count subwords either way.

    Source input representation (Chen et al. 2020):
        input_groups: [[feature, share], ...] with feature in global/rec/loc/syn; None = the
            plain embedding. Shares are positive integers, resolved to whole heads of this
            model by :meth:`group_heads` (e.g. Table I's [[global, 5], [syn, 3]] is 5+3 of 8
            heads, 10+6 of 16, 3+1 of 4); a group's size is its heads · d_model/heads.
        rec_cell, loc_kernel (common options): "gru" or "lstm" for the recurrence group; width
            of the local group's convolution.
        factors: Sennrich & Haddow's linguistic input features {bieo|pos|dep: dimension},
            concatenated to the word embedding (total size d_model); None = off.
        directional: a DiSAN layer (Shen et al. 2018) between the input and the encoder.
        disagreement: Li et al. 2018's disagreement regularisation of the encoder
            self-attention heads: "none", "output", "subspace" or "position".
        disagreement_weight (common option): λ of the regulariser (objective = log-likelihood
            + λ·D).
    """

    additional_pe: str = "none"
    relative_k: int = 0
    reordering_embeddings: str = "none"
    preorder_encoding: str = "none"
    position_unit: str = "subword"
    input_groups: list[list[Any]] | None = None
    factors: dict[str, int] | None = None
    directional: bool = False
    disagreement: str = "none"

    def group_heads(self) -> list[tuple[str, int]]:
        """``input_groups`` as (feature, heads) of this model; [] without groups.

        Each group gets ``share / Σ shares · heads`` heads, rounded by the largest remainder
        (Hamilton's method): every group first gets the floor of its quota, then the heads left
        over go one each to the groups with the largest fractional parts, ties to the group
        listed first. Shares that add up to ``heads`` are taken as they are. A group left with
        0 heads is an error (:meth:`validate`).

        >>> TransformerOptions(heads=4, input_groups=[["global", 5], ["syn", 3]]).group_heads()
        [('global', 3), ('syn', 1)]
        """
        if not self.input_groups:
            return []
        shares = [int(share) for _, share in self.input_groups]
        total = sum(shares)
        # Exact integer arithmetic: quota_g = share_g · heads / total.
        heads = [share * self.heads // total for share in shares]
        remainders = [share * self.heads % total for share in shares]
        left = self.heads - sum(heads)
        for g in sorted(range(len(shares)), key=lambda g: (-remainders[g], g))[:left]:
            heads[g] += 1
        return [(str(feature), n) for (feature, _), n in zip(self.input_groups, heads)]

    def position_slot(self, side: str) -> str:
        """What fills the slot after self-attention on ``side`` (encoder|decoder): "none",
        "reordering" (learned REs) or "additional" (plain PEs)."""
        if self.reordering_embeddings in (side, "both"):
            return "reordering"
        if self.additional_pe in (side, "both"):
            return "additional"
        return "none"

    def relative_on(self, side: str) -> bool:
        return self.relative_k > 0 and self.relative_sides in (side, "both")

    def required_features(self) -> set[str]:
        """Source-side inputs besides the subword ids: pos/bieo/dep tags, order (preordered
        positions)."""
        need: set[str] = set()
        if self.input_groups and any(g[0] == "syn" for g in self.input_groups):
            need.add("pos")
        if self.factors:
            need.update(self.factors)
        if self.preorder_encoding != "none":
            need.add("order")
        return need

    def validate(self) -> None:
        super().validate()
        self._integers((), ("relative_k",))
        self._choice("reordering_embeddings", SIDES)
        self._choice("additional_pe", SIDES)
        self._choice("preorder_encoding", ("none", "absolute", "relative"))
        self._choice("position_unit", POSITION_UNITS)
        self._choice("disagreement", DISAGREEMENT)
        self._validate_groups()
        self._validate_conflicts()

    def _validate_groups(self) -> None:
        if self.input_groups is not None:
            if not isinstance(self.input_groups, (list, tuple)) or not self.input_groups:
                raise WordorderError(
                    "model option input_groups must be a non-empty list of [feature, share], "
                    f"got {self.input_groups!r}"
                )
            for group in self.input_groups:
                if (
                    not isinstance(group, (list, tuple))
                    or len(group) != 2
                    or group[0] not in GROUP_FEATURES
                    or not isinstance(group[1], int)
                    or isinstance(group[1], bool)
                    or group[1] < 1
                ):
                    raise WordorderError(
                        f"model option input_groups: {group!r} is not [feature, share] with "
                        f"feature in {', '.join(GROUP_FEATURES)} and a whole share ≥ 1"
                    )
            empty = [feature for feature, n in self.group_heads() if n == 0]
            if empty:
                raise WordorderError(
                    f"model option input_groups: {self.input_groups} leaves the group(s) "
                    f"{', '.join(empty)} without a head of the model's {self.heads}",
                    hint="each group needs at least one whole head (Chen et al. 2020, Table I): "
                    "raise its share or use a model with more heads",
                )
        if self.factors is not None:
            if (
                not isinstance(self.factors, Mapping)
                or not self.factors
                or any(
                    f not in FACTORS or not isinstance(n, int) or n < 1
                    for f, n in self.factors.items()
                )
            ):
                raise WordorderError(
                    f"model option factors must map some of {', '.join(FACTORS)} to positive "
                    f"dimensions, got {self.factors!r}"
                )
            if sum(self.factors.values()) >= self.d_model:
                raise WordorderError(
                    f"model option factors: the factor dimensions ({sum(self.factors.values())}) "
                    f"leave nothing of d_model={self.d_model} for the word"
                )

    def _validate_conflicts(self) -> None:
        """Combinations that are not defined by the papers."""
        if self.input_groups and self.factors:
            raise WordorderError(
                (
                    "model options input_groups and factors conflict: both replace the "
                    "source input representation"
                ),
                hint="choose one of them",
            )
        if "none" not in (self.reordering_embeddings, self.additional_pe):
            raise WordorderError(
                "reordering_embeddings and additional_pe both fill the same slot of a layer",
                hint="additional_pe is the control experiment of reordering embeddings: pick one",
            )
        if (self.reordering_embeddings, self.additional_pe) != (
            "none",
            "none",
        ) and self.norm != "post":
            raise WordorderError(
                "reordering embeddings are defined for post-norm layers (Chen et al. 2019, Eq. 9)",
                hint="set norm: post",
            )
        if self.positions == "none" and (self.reordering_embeddings, self.additional_pe) != (
            "none",
            "none",
        ):
            raise WordorderError(
                "additional PEs and reordering embeddings re-use the absolute position encodings",
                hint="set positions: absolute",
            )
        if self.position_unit == "word" and (
            self.input_groups or self.factors or self.position_slot("encoder") != "none"
        ):
            raise WordorderError(
                "position_unit: word numbers the encoder's plain embedding and Shaw distances by "
                "words; grouped inputs, factors and the encoder's position slot add subword "
                "positions of their own",
                hint="use position_unit: subword with input_groups, factors, reordering_embeddings "
                "or additional_pe",
            )
        if self.input_groups and (self.positions == "none" or self.preorder_encoding == "absolute"):
            raise WordorderError(
                "input_groups add the absolute encodings inside their groups (Chen et al. 2020, "
                "Eq. 1-3, 12); they cannot be combined with positions: none or an absolute "
                "preordering encoding"
            )


FAMILY_OPTIONS.update(transformer=TransformerOptions, rnn=RNNOptions)
