"""The training runs of each variant: ``seeds``, or the variant's own ``seeds_by_variant`` entry.

A powered experiment gives each system the runs its comparisons need (issue 34): a costly
system fewer, a baseline shared by several claims more. Every rule that lists runs asks
:func:`seeds_of` (through ``Experiment.seeds_of``, src/wordorder/flow), so a
variant's trainings, translations, scores and findings all follow one list. Free of heavy
imports: the DAG is built with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wordorder.configfiles import at
from wordorder.errors import WordorderError
from wordorder.yamlfile import Locator


def seeds_of(config: Mapping[str, Any], variant: str) -> list[int]:
    """The training seeds of ``variant``: its ``seeds_by_variant`` entry, else ``seeds``."""
    own = (config.get("seeds_by_variant") or {}).get(variant)
    return list(own if own else config.get("seeds", [1]))


def check_seeds_by_variant(config: Mapping[str, Any], locate: Locator | None = None) -> None:
    """Every key of ``seeds_by_variant`` is a variant of this config: a typo would otherwise
    leave that system on the global seeds without a word (the schema checks the lists)."""
    variants = list(config.get("variants", []))
    for name, seeds in (config.get("seeds_by_variant") or {}).items():
        if name not in variants:
            raise WordorderError(
                f"seeds_by_variant: '{name}' is not one of the variants of this config",
                **at(locate, ("seeds_by_variant", name), seeds),
                hint=f"name one of: {', '.join(variants)} (or drop the entry)",
            )
