"""The ``wordorder`` subcommand of the decoding stage (registered by :mod:`wordorder.cli`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from wordorder.argtypes import positive_int


def cmd_translate(a: argparse.Namespace) -> None:
    from wordorder.decode.options import DecodeOptions
    from wordorder.decode.runner import run_translation

    summaries = run_translation(
        checkpoint=Path(a.checkpoint),
        spm=Path(a.spm),
        sources=[Path(x) for x in a.input],
        lang=a.lang,
        options=DecodeOptions.from_dict(a.options),
        threads=a.threads,
        outputs=[Path(x) for x in a.output],
        outputs_tok=[Path(x) for x in a.output_tok],
        features=a.features,
        spm_tgt=Path(a.spm_tgt) if a.spm_tgt else None,
    )
    for summary in summaries:
        print(json.dumps(summary, indent=1))


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the stage's subcommands; ``add(name, func, help)`` makes one subparser."""
    s = add("translate", cmd_translate, "translate subword-encoded source files")
    for name in ("--checkpoint", "--spm", "--lang"):
        s.add_argument(name, required=True)
    s.add_argument(
        "--input", nargs="+", required=True, help="the source file(s), one model load for all"
    )
    s.add_argument("--output", nargs="+", required=True, help="detokenized, one per --input")
    s.add_argument(
        "--output-tok", nargs="+", required=True, help="in the pipeline's tokens, one per --input"
    )
    s.add_argument("--options", type=_json, default={})
    s.add_argument("--threads", type=positive_int, default=None)
    s.add_argument(
        "--features", type=_json, default={}, help='extra source inputs: {"pos": PATH, ...}'
    )
    s.add_argument(
        "--spm-tgt",
        default=None,
        help=(
            "the target side's subword model when each side has its own (--spm "
            "is then the source side's)"
        ),
    )
