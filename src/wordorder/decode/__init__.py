"""Decoding: batched beam search and greedy search over the model state interface, and
the decoding options (:class:`DecodeOptions`, their defaults held once).

The names are loaded on first use (PEP 562): ``wordorder.decode.commands`` is imported by every
``wordorder`` command to build its parser, and must not pull in torch (``beam``) for small steps.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "Hypothesis": "beam",
    "beam_search": "beam",
    "beam_search_hypotheses": "beam",
    "greedy_decode": "beam",
    "translate_batches": "batches",
    "DecodeOptions": "options",
}

__all__ = [
    "DecodeOptions",
    "Hypothesis",
    "beam_search",
    "beam_search_hypotheses",
    "greedy_decode",
    "translate_batches",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"wordorder.decode.{_WHERE[name]}"), name)
