"""argparse types shared by the stages' subcommands: a bad value is argparse's one usage
line (exit 2) naming the option, not a traceback from deep inside torch or a thread pool."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An integer ≥ 1 (``--threads``: ``-4`` used to end in a torch traceback)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value
