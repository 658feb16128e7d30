"""The options every model family accepts, and the conversion between a flat options dict
(configs/variants.yaml, checkpoints) and the family's options class; the families' own options
are in :mod:`wordorder.models.options`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from wordorder.errors import WordorderError

SIDES = ("none", "encoder", "decoder", "both")


@dataclass
class ModelOptions:
    """Options of both families (a model's options are of its family's subclass, see
    :meth:`from_dict`); the defaults are Transformer-base (Vaswani et al. 2017).

    Sizes and training regularisation:
        family: key of ``registry.FAMILIES`` and of ``options.FAMILY_OPTIONS``.
        d_model, d_ff, heads: model width, FFN inner width, attention heads.
        encoder_layers, decoder_layers: stack depths.
        dropout: on embeddings and every residual branch.
        attention_dropout: on attention weights.
        decoder_self_attention_dropout: on the decoder self-attention's weights (None: as
            attention_dropout); OpenNMT-py 0.9.2 and 1.0.0 drop them at ``dropout``
            (``onmt/decoders/transformer.py``), 1.0.1 on at ``attention_dropout``.
        activation_dropout: after the FFN's ReLU.
        tie_embeddings: one matrix for the source and target embeddings (needs one joint
            vocabulary: ``subword.joint``); False = a matrix per side, each of its side's size.
        tie_output: the output projection is the target embedding matrix (Press & Wolf 2017);
            False = an output matrix of its own (OpenNMT-py's default, as the Chen papers used).
        norm: "post" (the paper) or "pre" layer normalisation.
        max_positions: initial size of the position table (it grows when needed).
        positions: "absolute" (sinusoidal encodings added to the embeddings) or "none".
        feature_sizes: vocabulary sizes of categorical source features (set by the trainer
            from the data, stored in checkpoints).

    Settings of one family's mechanisms that the other family accepts too (only the
    mechanisms themselves are family options): relative_sides, preorder_k, rec_cell,
    loc_kernel, disagreement_weight (Transformer, see
    :class:`~wordorder.models.options.TransformerOptions`); local_window, syntax_n,
    flexible_skip, unit_size, relation_chunk (RNN, see
    :class:`~wordorder.models.options.RNNOptions`).
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
    decoder_self_attention_dropout: float | None = None
    tie_embeddings: bool = True
    tie_output: bool = True
    norm: str = "post"
    max_positions: int = 1024
    positions: str = "absolute"
    relative_sides: str = "both"
    preorder_k: int = 4
    rec_cell: str = "gru"
    loc_kernel: int = 5
    disagreement_weight: float = 1.0
    feature_sizes: dict[str, int] = field(default_factory=dict)
    local_window: int = 10
    syntax_n: int = 4
    flexible_skip: float = 10.0
    unit_size: int = 8
    relation_chunk: int = 16

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ModelOptions:
        """Validated options of the class that ``d["family"]`` names (default: transformer)
        from a flat dict. An unknown key, and another family's option away from its default,
        are a :class:`WordorderError`; the other families' options at their defaults (as in
        every checkpoint's flat dict, :meth:`to_dict`) are dropped."""
        defaults = option_defaults()
        for key in d:
            if key not in defaults:
                raise WordorderError(
                    f"unknown model option '{key}'",
                    hint=f"valid model options: preset, {', '.join(defaults)}",
                )
        family = d.get("family", "transformer")
        if not isinstance(family, str) or family not in FAMILY_OPTIONS:
            raise WordorderError(
                f"unknown model family '{family}'",
                hint=f"known families: {', '.join(sorted(FAMILY_OPTIONS))}",
            )
        own = {f.name for f in dataclasses.fields(FAMILY_OPTIONS[family])}
        for key, value in d.items():
            if key not in own and value != defaults[key]:
                raise WordorderError(
                    f"model option {key} does not apply to the {family} family",
                    hint=f"remove it, or pick a family that has it (family: {family_of(key)})",
                )
        opts = FAMILY_OPTIONS[family](**{k: v for k, v in d.items() if k in own})
        opts.validate()
        return opts

    def to_dict(self) -> dict[str, Any]:
        """Every option of every family, the other families' at their defaults: the flat form
        that checkpoints and resumable states have always stored (their fingerprints hash it).
        Options added since (:data:`LATER_OPTIONS`) appear only away from their defaults, so the
        flat form, and every fingerprint, of a model without them stays what it was."""
        flat = {**option_defaults(), **dataclasses.asdict(self)}
        return {k: v for k, v in flat.items() if not (k in LATER_OPTIONS and v == LATER_OPTIONS[k])}

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads

    def required_features(self) -> set[str]:
        """Source-side inputs besides the subword ids (pos/bieo/dep tags, preordered positions,
        the dependency tree); the families' classes name theirs."""
        return set()

    def syntax_tree(self) -> bool:
        """Whether the model reads the source dependency tree (the ``word``/``head`` inputs)."""
        return False

    def _choice(self, name: str, allowed: tuple[str, ...]) -> None:
        if getattr(self, name) not in allowed:
            raise WordorderError(
                f"model option {name} must be one of {', '.join(allowed)}, "
                f"got {getattr(self, name)!r}"
            )

    def _integers(self, positive: tuple[str, ...], non_negative: tuple[str, ...] = ()) -> None:
        for name in positive + non_negative:
            value = getattr(self, name)
            lowest = 0 if name in non_negative else 1
            if not isinstance(value, int) or isinstance(value, bool) or value < lowest:
                raise WordorderError(
                    f"model option {name} must be a {'non-negative' if lowest == 0 else 'positive'}"
                    f" integer, got {value!r}"
                )

    @staticmethod
    def _fraction(name: str, value: Any) -> None:
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0.0 <= value < 1.0:
            raise WordorderError(f"model option {name} must be in [0, 1), got {value!r}")

    def validate(self) -> None:
        """Check values and conflicts that would otherwise fail deep inside torch (the families'
        classes add theirs)."""
        if not isinstance(self.family, str) or self.family not in FAMILY_OPTIONS:
            raise WordorderError(
                f"unknown model family '{self.family}'",
                hint=f"known families: {', '.join(sorted(FAMILY_OPTIONS))}",
            )
        if type(self) is not FAMILY_OPTIONS[self.family]:
            raise WordorderError(
                f"the options of a {self.family} model are {FAMILY_OPTIONS[self.family].__name__}, "
                f"not {type(self).__name__}",
                hint="build them with ModelOptions.from_dict",
            )
        self._integers(
            (
                "d_model",
                "d_ff",
                "heads",
                "max_positions",
                "preorder_k",
                "loc_kernel",
                "local_window",
                "syntax_n",
                "unit_size",
                "relation_chunk",
            ),
            ("encoder_layers", "decoder_layers"),
        )
        if self.d_model % self.heads or self.d_model % 2:
            raise WordorderError(
                f"d_model={self.d_model} must be even and divisible by heads={self.heads}"
            )
        for name in ("tie_embeddings", "tie_output"):
            if not isinstance(getattr(self, name), bool):
                raise WordorderError(
                    f"model option {name} must be true or false, got {getattr(self, name)!r}"
                )
        for name in ("dropout", "attention_dropout", "activation_dropout"):
            self._fraction(name, getattr(self, name))
        if self.decoder_self_attention_dropout is not None:
            self._fraction("decoder_self_attention_dropout", self.decoder_self_attention_dropout)
        self._choice("norm", ("post", "pre"))
        self._choice("positions", ("absolute", "none"))
        self._choice("relative_sides", SIDES[1:])
        self._choice("rec_cell", ("gru", "lstm"))
        if not isinstance(self.flexible_skip, (int, float)) or self.flexible_skip <= 0:
            raise WordorderError(
                f"model option flexible_skip must be positive, got {self.flexible_skip!r}"
            )
        if self.loc_kernel % 2 == 0:
            raise WordorderError(
                f"model option loc_kernel must be odd (centred window), got {self.loc_kernel}"
            )


# Options added after checkpoints began to store the flat dict, with their defaults: to_dict
# leaves them out at these values (from_dict fills them in).
LATER_OPTIONS: dict[str, Any] = {"position_unit": "subword", "decoder_self_attention_dropout": None}

# Each family's options class, by family name. models/options.py fills it when it defines the
# classes (the models package imports it first), so this module never imports that one.
FAMILY_OPTIONS: dict[str, type[ModelOptions]] = {}


def _own(cls: type[ModelOptions]) -> list[dataclasses.Field]:
    """The fields a family's class adds to the common ones."""
    common = {f.name for f in dataclasses.fields(ModelOptions)}
    return [f for f in dataclasses.fields(cls) if f.name not in common]


def option_defaults() -> dict[str, Any]:
    """Every model option of every family with its default: the common ones first, then each
    family's in :data:`FAMILY_OPTIONS` order (the flat form of :meth:`ModelOptions.to_dict`)."""
    fields = dataclasses.fields(ModelOptions) + tuple(
        f for c in FAMILY_OPTIONS.values() for f in _own(c)
    )
    return {f.name: _default(f) for f in fields}


def _default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    assert f.default_factory is not dataclasses.MISSING  # every option has a default
    return f.default_factory()


def family_of(name: str) -> str | None:
    """The family whose class has the option ``name``; None for a common (or unknown) one."""
    return next(
        (family for family, c in FAMILY_OPTIONS.items() if name in {f.name for f in _own(c)}), None
    )
