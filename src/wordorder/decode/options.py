"""The decoding options and their defaults, held once.

The config's ``decode`` block (``workflow/schemas/config.schema.yaml``, whose defaults a unit
test keeps equal to these), the ``translate`` command's ``--options`` and the keyword defaults
of :mod:`wordorder.decode.beam` and :mod:`wordorder.decode.batches` all come from
:class:`DecodeOptions`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from wordorder.errors import WordorderError


@dataclass(frozen=True)
class DecodeOptions:
    """Beam search and batching of the ``translate`` step (see :mod:`wordorder.decode.beam`
    for how the length rule and the length penalty act)."""

    beam_size: int = 5  # 1 = greedy search
    # at most floor(max_len_a * n + max_len_b) target tokens for n source tokens
    max_len_a: float = 1.5
    max_len_b: int = 10
    length_penalty: float = 1.0  # score = sum(log p) / |y| ** length_penalty
    batch_tokens: int = 4000  # padded source tokens per batch, before beam expansion
    device: str = "auto"
    # a longer source line is refused (decoding it costs steps times its length)
    max_source_len: int = 1024
    # beam search of static shapes, each step replayed from a CUDA graph
    # (wordorder.decode.static_beam): true, false or auto (where a GPU and the family allow)
    cuda_graphs: bool | str = False

    @classmethod
    def from_dict(cls, options: Mapping[str, Any]) -> DecodeOptions:
        """The options of a ``decode`` block (missing keys take the defaults); an
        unknown key is an error."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = set(options) - set(fields)
        if unknown:
            raise WordorderError(
                f"unknown decode option(s): {', '.join(sorted(unknown))}",
                hint=f"valid: {', '.join(sorted(fields))}",
            )
        # The types as declared (strings, under postponed annotations): a JSON 5.0 beam is 5,
        # a YAML 1 penalty is 1.0.
        kinds: dict[str, Callable[[Any], Any]] = {
            "int": int,
            "float": float,
            "str": str,
            "bool | str": _true_false_auto,
        }
        return cls(
            **{name: kinds[cast(str, fields[name].type)](value) for name, value in options.items()}
        )


def _true_false_auto(value: Any) -> bool | str:
    if value is True or value is False or value == "auto":
        return value
    raise WordorderError(
        f"decode option cuda_graphs must be true, false or auto, got {value!r}",
        hint="auto: CUDA graphs where a GPU and the model family allow them",
    )
