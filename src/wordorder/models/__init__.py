"""Model families behind one interface (:class:`Seq2SeqModel`), built by :func:`build_model`."""

from wordorder.models.base import DecoderState, EncoderOut, Seq2SeqModel
from wordorder.models.registry import FAMILIES, PRESETS, ModelOptions, build_model

__all__ = [
    "DecoderState",
    "EncoderOut",
    "FAMILIES",
    "ModelOptions",
    "PRESETS",
    "Seq2SeqModel",
    "build_model",
]
