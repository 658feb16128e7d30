"""Model size presets and the resolution of a variant's options, free of torch.

``resolve_options`` merges a preset under the explicit keys and validates: the workflow calls
it for every (pair, variant) while the DAG is built, and importing the models (torch) there
would cost seconds on every command a user types (issue 47).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wordorder.errors import WordorderError
from wordorder.models.options import ModelOptions

# The model families (wordorder.models.registry.FAMILIES builds them; a test keeps the two equal).
FAMILY_NAMES = ("rnn", "transformer")

PRESETS: dict[str, dict[str, Any]] = {
    # For tests and smoke runs: trains in seconds on a CPU.
    "tiny": {"d_model": 64, "d_ff": 128, "heads": 4, "encoder_layers": 2, "decoder_layers": 2},
    # The CPU demo.
    "small": {"d_model": 256, "d_ff": 1024, "heads": 4, "encoder_layers": 3, "decoder_layers": 3},
    # The effects experiment (configs/effects.yaml): a size that reaches its dev plateau on 20k
    # Tanaka pairs within a few CPU-minutes per system, so 17 systems x 3 seeds fit 2 cores.
    "mini": {"d_model": 128, "d_ff": 512, "heads": 4, "encoder_layers": 2, "decoder_layers": 2},
    "base": {"d_model": 512, "d_ff": 2048, "heads": 8, "encoder_layers": 6, "decoder_layers": 6},
    "big": {
        "d_model": 1024,
        "d_ff": 4096,
        "heads": 16,
        "encoder_layers": 6,
        "decoder_layers": 6,
        "dropout": 0.3,
    },
    # RNN family: d_model is the GRU state, embed_dim the word embedding and readout size.
    "rnn_tiny": {"family": "rnn", "d_model": 64, "embed_dim": 64, "heads": 1, "relation_width": 64},
    "rnn_small": {"family": "rnn", "d_model": 256, "embed_dim": 256, "heads": 1, "dropout": 0.2},
    # The effects experiment's RNN size (the Transformer's "mini" width).
    "rnn_mini": {"family": "rnn", "d_model": 128, "embed_dim": 128, "heads": 1, "dropout": 0.2},
    # Chen et al. 2018 (Nematus): embeddings 620, hidden 1000, attention 2000 (the annotation
    # width, Nematus' W_c), dropout 0.2.
    "rnnsearch": {
        "family": "rnn",
        "d_model": 1000,
        "embed_dim": 620,
        "attention_dim": 2000,
        "heads": 1,
        "dropout": 0.2,
    },
    # Zhang et al. 2018 §5.2: embeddings 512, hidden 512, dropout 0.5 on the output layer only,
    # every parameter from U(-0.1, 0.1).
    "rnmt": {
        "family": "rnn",
        "d_model": 512,
        "embed_dim": 512,
        "heads": 1,
        "dropout": 0.0,
        "output_dropout": 0.5,
        "init_uniform": 0.1,
    },
}


def check_family(family: Any) -> None:
    """The family must be one of :data:`FAMILY_NAMES` (checked here, not in the options, which
    the families' modules import)."""
    if family not in FAMILY_NAMES:
        raise WordorderError(
            f"unknown model family '{family}'",
            hint=f"known families: {', '.join(FAMILY_NAMES)}",
        )


def resolve_options(options: Mapping[str, Any] | ModelOptions) -> ModelOptions:
    """Merge ``preset`` under the explicit keys and validate."""
    if isinstance(options, ModelOptions):
        check_family(options.family)
        options.validate()
        return options
    d = dict(options)
    preset = d.pop("preset", None)
    if preset is not None:
        if preset not in PRESETS:
            raise WordorderError(
                f"unknown model preset '{preset}'", hint=f"presets: {', '.join(PRESETS)}"
            )
        d = {**PRESETS[preset], **d}
    # Before the other checks: they read an unknown family as the Transformer's.
    check_family(d.get("family", ModelOptions.family))
    return ModelOptions.from_dict(d)
