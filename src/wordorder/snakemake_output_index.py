"""Snakemake finds the rules that make a file once per file, not once per job that reads it.

Building the DAG, Snakemake asks its output index which rules produce each input file of each
job (``OutputIndex.match_producers``: a prefix look-up, then each candidate rule's output regex),
and asks again for a file that many jobs read: 13,798 look-ups for the five papers' 3,050 jobs,
many of them for the same subword models, references and checkpoints. The answer depends only on
the file's name and the workflow's rules, which do not change while an index lives (Snakemake
builds a new index with a new DAG), so here each index keeps its answers.

Applied by :mod:`wordorder.snakemake_hooks` when Snakemake imports ``snakemake.output_index``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import ModuleType
from typing import Any

_ANSWERS = "_wordorder_producers"  # the attribute of an index holding its answers


def wrap(module: ModuleType) -> None:
    """Memoise ``OutputIndex.match_producers`` of ``snakemake.output_index`` per index (once)."""
    cls = module.OutputIndex
    if getattr(cls.match_producers, "_wordorder", False):
        return
    match_producers: Callable[[Any, str], set] = cls.match_producers

    @functools.wraps(match_producers)
    def remembered(self: Any, targetfile: str) -> set:
        answers = self.__dict__.setdefault(_ANSWERS, {})
        rules = answers.get(targetfile)
        if rules is None:
            rules = answers[targetfile] = frozenset(match_producers(self, targetfile))
        return set(rules)  # a set of its own, as before: a caller may change it

    remembered._wordorder = True  # type: ignore[attr-defined]
    cls.match_producers = remembered
