"""Model options: one dataclass whose fields select and compose the word-order mechanisms
of the papers on one Transformer (and, for ``family``, other architectures).

Every option defaults to the baseline (Vaswani et al. 2017), so a paper's system is a short
list of non-default options in configs/variants.yaml. Options compose unless
:meth:`ModelOptions.validate` names a conflict.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wordorder.errors import WordorderError

SIDES = ("none", "encoder", "decoder", "both")
GROUP_FEATURES = ("global", "rec", "loc", "syn")
FACTORS = ("bieo", "pos", "dep")
DISAGREEMENT = ("none", "output", "subspace", "position")
CATEGORICAL_FEATURES = ("pos", "bieo", "dep")  # tag files of the syntax stage, ids from a vocabulary
# Integer source inputs: preordered positions, and the dependency tree as the word index of
# each subword and the (word-level, 1-based, 0 = root) head of its word.
INTEGER_FEATURES = ("order", "word", "head")
RNN_DECODERS = ("rnnsearch", "cgru")
RNN_ATTENTIONS = ("global", "local", "flexible", "syntax")
SECOND_CONTEXTS = ("none", "local", "flexible", "syntax", "sdr")
# Options of one family that the other family does not read: setting them there is an error.
TRANSFORMER_ONLY = {"additional_pe": "none", "relative_k": 0, "reordering_embeddings": "none",
                    "preorder_encoding": "none", "input_groups": None, "factors": None, "directional": False,
                    "disagreement": "none"}
RNN_ONLY = {"embed_dim": 0, "decoder": "cgru", "attention": "global", "second_context": "none",
            "source_dependency": False, "relation_layers": False, "relation_pad_quirk": False, "relation_width": 256,
            "relation_convs": None, "attention_dim": 0, "output_dropout": None, "init_uniform": 0.0}


@dataclass
class ModelOptions:
    """Architecture options; the defaults are Transformer-base (Vaswani et al. 2017).

    Sizes and training regularisation:
        family: key of ``registry.FAMILIES``.
        d_model, d_ff, heads: model width, FFN inner width, attention heads.
        encoder_layers, decoder_layers: stack depths.
        dropout: on embeddings and every residual branch.
        attention_dropout: on attention weights.
        activation_dropout: after the FFN's ReLU.
        tie_embeddings: one matrix for the source and target embeddings (needs one joint
            vocabulary: ``subword.joint``); False = a matrix per side, each of its side's size.
        tie_output: the output projection is the target embedding matrix (Press & Wolf 2017);
            False = an output matrix of its own (OpenNMT-py's default, as the Chen papers used).
        norm: "post" (the paper) or "pre" layer normalisation.
        max_positions: initial size of the position table (it grows when needed).

    Positions (Chen et al. 2019; Shaw et al. 2018; Kawara et al. 2021):
        positions: "absolute" (sinusoidal encodings added to the embeddings) or "none".
        additional_pe: Chen 2019's "+Additional PEs" control in "none", "encoder", "decoder"
            or "both": the reordering-embedding slot of every layer re-adds the plain absolute
            encodings (Cⁿ = LN(H̄ⁿ + PE), no learned penalty).
        relative_k: clipping distance of Shaw's relative positions in self-attention; 0 = off.
        relative_sides: "encoder", "decoder" or "both" self-attentions get them.
        reordering_embeddings: Chen 2019's reordering embeddings (Eq. 6-9) in "none",
            "encoder", "decoder" or "both".
        preorder_encoding: Kawara 2021's encoding of preordered positions in the encoder:
            "none", "absolute" (sinusoidal encoding of the preordered position added to the
            embeddings) or "relative" (tables r^K, r^V over clip(p_j − p_i, preorder_k)).
        preorder_k: clipping distance of the relative preordering encoding.

    Source input representation (Chen et al. 2020):
        input_groups: [[feature, share], ...] with feature in global/rec/loc/syn; None = the
            plain embedding. Shares are positive integers, resolved to whole heads of this
            model by :meth:`group_heads` (e.g. Table I's [[global, 5], [syn, 3]] is 5+3 of 8
            heads, 10+6 of 16, 3+1 of 4); a group's size is its heads · d_model/heads.
        rec_cell: "gru" or "lstm" for the recurrence group; loc_kernel: width of the local group's
            convolution.
        factors: Sennrich & Haddow's linguistic input features {bieo|pos|dep: dimension},
            concatenated to the word embedding (total size d_model); None = off.
        directional: a DiSAN layer (Shen et al. 2018) between the input and the encoder.
        disagreement: Li et al. 2018's disagreement regularisation of the encoder
            self-attention heads: "none", "output", "subspace" or "position".
        disagreement_weight: λ of the regulariser (objective = log-likelihood + λ·D).
        feature_sizes: vocabulary sizes of categorical source features (set by the trainer
            from the data, stored in checkpoints).

    RNN family (``family: rnn``; Bahdanau et al. 2015, Chen et al. 2018, Zhang et al. 2018):
        d_model is the GRU state size (the encoder's annotations are 2·d_model wide).
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
        local_window: D of local attention (σ = D/2); syntax_n: n of SDAtt (σ = n/2);
        flexible_skip: flexible attention's test-time threshold on the penalty;
        unit_size: M, slots of a dependency unit.
        relation_layers: Zhang 2018's RNMT encoder (GRUs and relation-network layers, dense
            concatenation); relation_width: the paper's "MLP units", width of the pair function
            g and of the output MLP f (Zh-En 256, En-De 128); relation_convs: the CNN layer as
            [[kernel width, channels], ...], parallel convolutions whose outputs are
            concatenated (None = [[1, w/2], [3, w]] with w = relation_width: the Zh-En
            [[1, 128], [3, 256]]; En-De [[3, 96]]); relation_chunk: query rows per block of
            the graph propagation;
        relation_pad_quirk: average the pair function over the padded length, as the
            reference code does (default: over the real words).
    """

    family: str = "transformer"
    d_model: int = 512
    d_ff: int = 2048
    heads: int = 8
    encoder_layers: int = 6
    decoder_layers: int = 6
    dropout: float = 0.1
    attention_dropout: float = 0.0
    activation_dropout: float = 0.0
    tie_embeddings: bool = True
    tie_output: bool = True
    norm: str = "post"
    max_positions: int = 1024
    positions: str = "absolute"
    additional_pe: str = "none"
    relative_k: int = 0
    relative_sides: str = "both"
    reordering_embeddings: str = "none"
    preorder_encoding: str = "none"
    preorder_k: int = 4
    input_groups: list[list[Any]] | None = None
    rec_cell: str = "gru"
    loc_kernel: int = 5
    factors: dict[str, int] | None = None
    directional: bool = False
    disagreement: str = "none"
    disagreement_weight: float = 1.0
    feature_sizes: dict[str, int] = field(default_factory=dict)
    embed_dim: int = 0
    decoder: str = "cgru"
    attention: str = "global"
    second_context: str = "none"
    source_dependency: bool = False
    local_window: int = 10
    syntax_n: int = 4
    flexible_skip: float = 10.0
    unit_size: int = 8
    relation_layers: bool = False
    relation_width: int = 256
    relation_convs: list[list[int]] | None = None
    relation_chunk: int = 16
    relation_pad_quirk: bool = False
    attention_dim: int = 0
    output_dropout: float | None = None
    init_uniform: float = 0.0

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ModelOptions:
        """Options from a plain dict; an unknown key is a :class:`WordorderError`."""
        valid = [f.name for f in dataclasses.fields(cls)]
        for key in d:
            if key not in valid:
                raise WordorderError(
                    f"unknown model option '{key}'",
                    hint=f"valid model options: preset, {', '.join(valid)}",
                )
        opts = cls(**dict(d))
        opts.validate()
        return opts

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    def group_heads(self) -> list[tuple[str, int]]:
        """``input_groups`` as (feature, heads) of this model; [] without groups.

        Each group gets ``share / Σ shares · heads`` heads, rounded by the largest remainder
        (Hamilton's method): every group first gets the floor of its quota, then the heads left
        over go one each to the groups with the largest fractional parts, ties to the group
        listed first. Shares that add up to ``heads`` are taken as they are. A group left with
        0 heads is an error (:meth:`validate`).

        >>> ModelOptions(heads=4, input_groups=[["global", 5], ["syn", 3]]).group_heads()
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
        if self.syntax_tree():
            need.update(("word", "head"))
        return need

    def relation_channels(self) -> list[tuple[int, int]]:
        """(kernel width, channels) of each convolution of a relation layer (Zhang 2018 §5.2)."""
        if self.relation_convs is None:
            w = self.relation_width
            return [(1, w // 2), (3, w)]
        return [(int(k), int(c)) for k, c in self.relation_convs]

    def syntax_tree(self) -> bool:
        """Whether the model reads the source dependency tree (the ``word``/``head`` inputs)."""
        return (self.attention == "syntax" or self.second_context in ("syntax", "sdr")
                or bool(self.source_dependency))

    def _choice(self, name: str, allowed: tuple[str, ...]) -> None:
        if getattr(self, name) not in allowed:
            raise WordorderError(f"model option {name} must be one of {', '.join(allowed)}, got {getattr(self, name)!r}")

    def validate(self) -> None:
        """Check values and conflicts that would otherwise fail deep inside torch."""
        for name in ("d_model", "d_ff", "heads", "encoder_layers", "decoder_layers", "max_positions",
                     "relative_k", "preorder_k", "loc_kernel", "embed_dim", "local_window", "syntax_n",
                     "unit_size", "relation_chunk", "relation_width", "attention_dim"):
            value = getattr(self, name)
            lowest = 0 if "layers" in name or name in ("relative_k", "embed_dim", "attention_dim") else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < lowest:
                raise WordorderError(f"model option {name} must be a {'non-negative' if lowest == 0 else 'positive'}"
                                     f" integer, got {value!r}")
        if self.d_model % self.heads or self.d_model % 2:
            raise WordorderError(f"d_model={self.d_model} must be even and divisible by heads={self.heads}")
        for name in ("tie_embeddings", "tie_output"):
            if not isinstance(getattr(self, name), bool):
                raise WordorderError(f"model option {name} must be true or false, got {getattr(self, name)!r}")
        for name in ("dropout", "attention_dropout", "activation_dropout", "output_dropout"):
            value = getattr(self, name)
            if name == "output_dropout" and value is None:
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value < 1.0:
                raise WordorderError(f"model option {name} must be in [0, 1), got {value!r}")
        if not isinstance(self.init_uniform, (int, float)) or isinstance(self.init_uniform, bool) \
                or self.init_uniform < 0:
            raise WordorderError(f"model option init_uniform must be a non-negative number, got {self.init_uniform!r}")
        self._validate_relation()
        self._choice("norm", ("post", "pre"))
        self._choice("positions", ("absolute", "none"))
        self._choice("relative_sides", SIDES[1:])
        self._choice("reordering_embeddings", SIDES)
        self._choice("additional_pe", SIDES)
        self._choice("preorder_encoding", ("none", "absolute", "relative"))
        self._choice("rec_cell", ("gru", "lstm"))
        self._choice("disagreement", DISAGREEMENT)
        self._choice("decoder", RNN_DECODERS)
        self._choice("attention", RNN_ATTENTIONS)
        self._choice("second_context", SECOND_CONTEXTS)
        if not isinstance(self.flexible_skip, (int, float)) or self.flexible_skip <= 0:
            raise WordorderError(f"model option flexible_skip must be positive, got {self.flexible_skip!r}")
        if self.loc_kernel % 2 == 0:
            raise WordorderError(f"model option loc_kernel must be odd (centred window), got {self.loc_kernel}")
        self._validate_groups()
        self._validate_conflicts()

    def _validate_relation(self) -> None:
        convs = self.relation_convs
        if convs is None:
            if self.relation_width < 2:
                raise WordorderError(f"model option relation_width must be at least 2 (the convolution of width 1 "
                                     f"has relation_width/2 channels), got {self.relation_width}")
            return
        if not isinstance(convs, (list, tuple)) or not convs or any(
                not isinstance(c, (list, tuple)) or len(c) != 2
                or any(not isinstance(v, int) or isinstance(v, bool) or v < 1 for v in c) for c in convs):
            raise WordorderError(f"model option relation_convs must be a non-empty list of [kernel width, channels] "
                                 f"with positive integers, got {convs!r}", hint="Zhang et al. 2018, En-De: [[3, 96]]")
        if any(k % 2 == 0 for k, _ in convs):
            raise WordorderError(f"model option relation_convs: kernel widths must be odd (a window centred on "
                                 f"the word, Zhang et al. 2018 Eq. 7), got {convs!r}")

    def _validate_groups(self) -> None:
        if self.input_groups is not None:
            if not isinstance(self.input_groups, (list, tuple)) or not self.input_groups:
                raise WordorderError(f"model option input_groups must be a non-empty list of [feature, share], "
                                     f"got {self.input_groups!r}")
            for group in self.input_groups:
                if (not isinstance(group, (list, tuple)) or len(group) != 2 or group[0] not in GROUP_FEATURES
                        or not isinstance(group[1], int) or isinstance(group[1], bool) or group[1] < 1):
                    raise WordorderError(f"model option input_groups: {group!r} is not [feature, share] with feature "
                                         f"in {', '.join(GROUP_FEATURES)} and a whole share ≥ 1")
            empty = [feature for feature, n in self.group_heads() if n == 0]
            if empty:
                raise WordorderError(f"model option input_groups: {self.input_groups} leaves the group(s) "
                                     f"{', '.join(empty)} without a head of the model's {self.heads}",
                                     hint="each group needs at least one whole head (Chen et al. 2020, Table I): "
                                     "raise its share or use a model with more heads")
        if self.factors is not None:
            if not isinstance(self.factors, Mapping) or not self.factors or any(
                    f not in FACTORS or not isinstance(n, int) or n < 1 for f, n in self.factors.items()):
                raise WordorderError(f"model option factors must map some of {', '.join(FACTORS)} to positive "
                                     f"dimensions, got {self.factors!r}")
            if sum(self.factors.values()) >= self.d_model:
                raise WordorderError(f"model option factors: the factor dimensions ({sum(self.factors.values())}) "
                                     f"leave nothing of d_model={self.d_model} for the word")

    def _validate_conflicts(self) -> None:
        """Combinations that are not defined by the papers."""
        foreign = TRANSFORMER_ONLY if self.family == "rnn" else RNN_ONLY
        for name, default in foreign.items():
            if getattr(self, name) != default:
                raise WordorderError(f"model option {name} does not apply to the {self.family} family",
                                     hint=f"remove it, or pick a family that has it (family: "
                                     f"{'transformer' if self.family == 'rnn' else 'rnn'})")
        if self.family == "rnn" and self.attention != "global" and self.second_context != "none":
            raise WordorderError("a double-context model (second_context) keeps the global attention as its first "
                                 "context (Chen et al. 2018, Eq. 14)", hint="set attention: global")
        if self.input_groups and self.factors:
            raise WordorderError("model options input_groups and factors conflict: both replace the source input "
                                 "representation", hint="choose one of them")
        if "none" not in (self.reordering_embeddings, self.additional_pe):
            raise WordorderError("reordering_embeddings and additional_pe both fill the same slot of a layer",
                                 hint="additional_pe is the control experiment of reordering embeddings: pick one")
        if (self.reordering_embeddings, self.additional_pe) != ("none", "none") and self.norm != "post":
            raise WordorderError("reordering embeddings are defined for post-norm layers (Chen et al. 2019, Eq. 9)",
                                 hint="set norm: post")
        if self.positions == "none" and (self.reordering_embeddings, self.additional_pe) != ("none", "none"):
            raise WordorderError("additional PEs and reordering embeddings re-use the absolute position encodings",
                                 hint="set positions: absolute")
        if self.input_groups and (self.positions == "none" or self.preorder_encoding == "absolute"):
            raise WordorderError("input_groups add the absolute encodings inside their groups (Chen et al. 2020, "
                                 "Eq. 1-3, 12); they cannot be combined with positions: none or an absolute "
                                 "preordering encoding")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
