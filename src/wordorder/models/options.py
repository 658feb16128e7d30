"""Model options: a dataclass per model family, picked by ``family``, whose fields select and
compose the word-order mechanisms of the papers; the options both families accept are their
common base, :class:`~wordorder.models.options_base.ModelOptions`.

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
RNN_DECODERS = ("rnnsearch", "cgru")
RNN_ATTENTIONS = ("global", "local", "flexible", "syntax")
SECOND_CONTEXTS = ("none", "local", "flexible", "syntax", "sdr")


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


@dataclass
class RNNOptions(ModelOptions):
    """Options of the RNN family (``family: rnn``; Bahdanau et al. 2015, Chen et al. 2018,
    Zhang et al. 2018). d_model is the GRU state size (the encoder's annotations are
    2·d_model wide).

    Attributes:
        embed_dim: word embedding size (0 = d_model); the readout layer has this size too.
        attention_dim: width of the additive attention's hidden layer (0 = d_model; Nematus
            and dl4mt use the annotation width 2·d_model).
        output_dropout: dropout on the readout t, the input of the output layer; None = ``dropout``
            (Zhang et al. 2018 §5.2: 0.5 there and no dropout elsewhere).
        init_uniform: a > 0 draws every parameter from U(−a, a) (Zhang et al. 2018 §5.2: 0.1);
            0 keeps the layers' own initialisation.
        decoder: "rnnsearch" (Bahdanau: attention queried with s_{i−1}, GRU on [E y; c]) or
            "cgru" (Nematus' conditional GRU, "RNNsearch*").
        attention: the context of the decoder: "global" (Bahdanau), "local" (Luong local-p),
            "flexible" (Shu & Nakayama 2017, reconstructed) or "syntax" (Chen 2018's SDAtt).
        second_context: Chen 2018's double context (Eq. 14): a second context vector in the
            readout, from the same global scores ("local", "flexible", "syntax") or from a
            separate source-dependency encoder ("sdr", Chen et al. 2017's SDRNMT-2).
        source_dependency: Chen et al. 2017's SDRNMT-1: the CNN encoding of each word's
            dependency unit ⟨parent, siblings, children⟩ concatenated to its embedding.
        local_window, syntax_n, flexible_skip, unit_size (common options): D of local attention
            (σ = D/2); n of SDAtt (σ = n/2); flexible attention's test-time threshold on the
            penalty; M, slots of a dependency unit.
        relation_layers: Zhang 2018's RNMT encoder (GRUs and relation-network layers, dense
            concatenation); relation_width: the paper's "MLP units", width of the pair function
            g and of the output MLP f (Zh-En 256, En-De 128); relation_convs: the CNN layer as
            [[kernel width, channels], ...], parallel convolutions whose outputs are
            concatenated (None = [[1, w/2], [3, w]] with w = relation_width: the Zh-En
            [[1, 128], [3, 256]]; En-De [[3, 96]]); relation_chunk (common option): query rows
            per block of the graph propagation;
        relation_pad_quirk: average the pair function over the padded length, as the
            reference code does (default: over the real words).
    """

    family: str = "rnn"
    embed_dim: int = 0
    decoder: str = "cgru"
    attention: str = "global"
    second_context: str = "none"
    source_dependency: bool = False
    relation_layers: bool = False
    relation_pad_quirk: bool = False
    relation_width: int = 256
    relation_convs: list[list[int]] | None = None
    attention_dim: int = 0
    output_dropout: float | None = None
    init_uniform: float = 0.0

    def required_features(self) -> set[str]:
        """Source-side inputs besides the subword ids: the dependency tree (word, head)."""
        return {"word", "head"} if self.syntax_tree() else set()

    def relation_channels(self) -> list[tuple[int, int]]:
        """(kernel width, channels) of each convolution of a relation layer (Zhang 2018 §5.2)."""
        if self.relation_convs is None:
            w = self.relation_width
            return [(1, w // 2), (3, w)]
        return [(int(k), int(c)) for k, c in self.relation_convs]

    def syntax_tree(self) -> bool:
        """Whether the model reads the source dependency tree (the ``word``/``head`` inputs)."""
        return (
            self.attention == "syntax"
            or self.second_context in ("syntax", "sdr")
            or bool(self.source_dependency)
        )

    def validate(self) -> None:
        super().validate()
        self._integers(("relation_width",), ("embed_dim", "attention_dim"))
        if self.output_dropout is not None:
            self._fraction("output_dropout", self.output_dropout)
        if (
            not isinstance(self.init_uniform, (int, float))
            or isinstance(self.init_uniform, bool)
            or self.init_uniform < 0
        ):
            raise WordorderError(
                "model option init_uniform must be a non-negative number, "
                f"got {self.init_uniform!r}"
            )
        self._validate_relation()
        self._choice("decoder", RNN_DECODERS)
        self._choice("attention", RNN_ATTENTIONS)
        self._choice("second_context", SECOND_CONTEXTS)
        if self.attention != "global" and self.second_context != "none":
            raise WordorderError(
                "a double-context model (second_context) keeps the global attention as its first "
                "context (Chen et al. 2018, Eq. 14)",
                hint="set attention: global",
            )

    def _validate_relation(self) -> None:
        convs = self.relation_convs
        if convs is None:
            if self.relation_width < 2:
                raise WordorderError(
                    f"model option relation_width must be at least 2 (the convolution of width 1 "
                    f"has relation_width/2 channels), got {self.relation_width}"
                )
            return
        if (
            not isinstance(convs, (list, tuple))
            or not convs
            or any(
                not isinstance(c, (list, tuple))
                or len(c) != 2
                or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in c)
                for c in convs
            )
        ):
            raise WordorderError(
                f"model option relation_convs must be a non-empty list of [kernel width, channels] "
                f"with positive integers, got {convs!r}",
                hint="Zhang et al. 2018, En-De: [[3, 96]]",
            )
        if any(k % 2 == 0 for k, _ in convs):
            raise WordorderError(
                f"model option relation_convs: kernel widths must be odd (a window centred on "
                f"the word, Zhang et al. 2018 Eq. 7), got {convs!r}"
            )


FAMILY_OPTIONS.update(transformer=TransformerOptions, rnn=RNNOptions)
