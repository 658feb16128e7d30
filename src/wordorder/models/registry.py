"""Model options, size presets, and ``build_model`` (the one way models are constructed).

A variant's model options (configs/variants.yaml) are a dict such as
``{"family": "transformer", "preset": "small", "dropout": 0.3}``: the preset fills the sizes,
explicit keys override it. Later variants add fields to :class:`ModelOptions` (with
defaults that reproduce the baseline) and, for new architectures, entries to
:data:`FAMILIES`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from wordorder.errors import WordorderError
from wordorder.models.base import Seq2SeqModel
from wordorder.models.transformer import build_transformer


@dataclass
class ModelOptions:
    """Architecture options; the defaults are Transformer-base (Vaswani et al. 2017).

    Attributes:
        family: key of :data:`FAMILIES`.
        d_model, d_ff, heads: model width, FFN inner width, attention heads.
        encoder_layers, decoder_layers: stack depths.
        dropout: on embeddings and every residual branch.
        attention_dropout: on attention weights.
        activation_dropout: after the FFN's ReLU.
        tie_embeddings: one matrix for source, target and output embeddings (joint vocabulary).
        norm: "post" (the paper) or "pre" layer normalisation.
        max_positions: initial size of the position table (it grows when needed).
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
    norm: str = "post"
    max_positions: int = 1024

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

    def validate(self) -> None:
        """Check values that would otherwise fail deep inside torch."""
        for name in ("d_model", "d_ff", "heads", "encoder_layers", "decoder_layers", "max_positions"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < (0 if "layers" in name else 1):
                raise WordorderError(f"model option {name} must be a positive integer, got {value!r}")
        if self.d_model % self.heads or self.d_model % 2:
            raise WordorderError(f"d_model={self.d_model} must be even and divisible by heads={self.heads}")
        for name in ("dropout", "attention_dropout", "activation_dropout"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise WordorderError(f"model option {name} must be in [0, 1), got {value!r}")
        if self.norm not in ("post", "pre"):
            raise WordorderError(f"model option norm must be 'post' or 'pre', got {self.norm!r}")
        if self.family not in FAMILIES:
            raise WordorderError(f"unknown model family '{self.family}'",
                                 hint=f"known families: {', '.join(sorted(FAMILIES))}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


PRESETS: dict[str, dict[str, Any]] = {
    # For tests and smoke runs: trains in seconds on a CPU.
    "tiny": {"d_model": 64, "d_ff": 128, "heads": 4, "encoder_layers": 2, "decoder_layers": 2},
    # The CPU demo.
    "small": {"d_model": 256, "d_ff": 1024, "heads": 4, "encoder_layers": 3, "decoder_layers": 3},
    "base": {"d_model": 512, "d_ff": 2048, "heads": 8, "encoder_layers": 6, "decoder_layers": 6},
    "big": {"d_model": 1024, "d_ff": 4096, "heads": 16, "encoder_layers": 6, "decoder_layers": 6,
            "dropout": 0.3},
}

FAMILIES: dict[str, Callable[[Any, int], Seq2SeqModel]] = {"transformer": build_transformer}


def resolve_options(options: Mapping[str, Any] | ModelOptions) -> ModelOptions:
    """Merge ``preset`` under the explicit keys and validate."""
    if isinstance(options, ModelOptions):
        options.validate()
        return options
    d = dict(options)
    preset = d.pop("preset", None)
    if preset is not None:
        if preset not in PRESETS:
            raise WordorderError(f"unknown model preset '{preset}'",
                                 hint=f"presets: {', '.join(PRESETS)}")
        d = {**PRESETS[preset], **d}
    return ModelOptions.from_dict(d)


def build_model(options: Mapping[str, Any] | ModelOptions, vocab_size: int) -> Seq2SeqModel:
    """Build a freshly initialised model of the options' family.

    Args:
        options: a :class:`ModelOptions` or a dict of its fields plus an optional ``preset``.
        vocab_size: size of the joint vocabulary (ids 0..vocab_size-1).
    """
    opts = resolve_options(options)
    if vocab_size <= 3:
        raise WordorderError(f"vocabulary size {vocab_size} is too small (the 4 special ids alone need 4)")
    return FAMILIES[opts.family](opts, vocab_size)
