"""The evaluation and analysis subcommands of ``wordorder``; registered by :mod:`wordorder.cli`.

Their ``cmd_*`` functions and arguments are in one module per group, each with its own
``register(add, _json)``:

* :mod:`~wordorder.evaluate.commands_scores` - score, report, significance
* :mod:`~wordorder.evaluate.commands_effects` - findings, cross-paper-table, convergence,
  readme-section
* :mod:`~wordorder.evaluate.commands_attention` - attention-aer, aer-table, head-similarity,
  head-similarity-table
* :mod:`~wordorder.evaluate.commands_analyses` - length-analysis, swap-perm, swap-noise-report,
  systems-table
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from wordorder.evaluate import (
    commands_analyses,
    commands_attention,
    commands_effects,
    commands_scores,
)


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the stage's subcommands; ``add(name, func, help)`` makes one subparser."""
    # In this order, which is the order ``wordorder --help`` lists them in.
    for group in (commands_scores, commands_effects, commands_attention, commands_analyses):
        group.register(add, _json)
