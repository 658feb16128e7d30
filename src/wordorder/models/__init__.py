"""Model families behind one interface (:class:`Seq2SeqModel`), built by :func:`build_model`.

The names load on first use (PEP 562): the torch-free option modules of this package
(``options``, ``presets``) are read while the DAG is built, which must not import torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wordorder.models.base import DecoderState, EncoderOut, Seq2SeqModel
    from wordorder.models.registry import FAMILIES, PRESETS, ModelOptions, build_model

_WHERE = {
    "DecoderState": "wordorder.models.base",
    "EncoderOut": "wordorder.models.base",
    "Seq2SeqModel": "wordorder.models.base",
    "FAMILIES": "wordorder.models.registry",
    "PRESETS": "wordorder.models.registry",
    "ModelOptions": "wordorder.models.registry",
    "build_model": "wordorder.models.registry",
}

__all__ = [
    "DecoderState",
    "EncoderOut",
    "FAMILIES",
    "ModelOptions",
    "PRESETS",
    "Seq2SeqModel",
    "build_model",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
