"""The ``wordorder`` command line: one subcommand per pipeline step, called by the rules.

Each stage package defines its subcommands in ``<stage>/commands.py`` (``cmd_*`` functions and a
``register(add, _json)``; evaluate's in ``commands_<group>.py`` modules that its ``commands.py``
registers); this module only assembles them, adds ``check-config`` (the config sits
above every stage), and runs the chosen one with the shared error handling and the closing log
line. Subcommands import heavy modules (torch) inside their function, so small steps start fast.
Input problems are reported as one ``error:`` line with a hint, exit status 2, and no partial
outputs.
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import sys
import time
from collections.abc import Sequence

from wordorder.align.commands import register as register_align
from wordorder.corpus.commands import register as register_corpus
from wordorder.decode.commands import register as register_decode
from wordorder.errors import WordorderError
from wordorder.evaluate.commands import register as register_evaluate
from wordorder.ledger.commands import register as register_ledger
from wordorder.preorder.commands import register as register_preorder
from wordorder.resources import cpu_seconds, peak_memory_mb
from wordorder.syntax.commands import register as register_syntax
from wordorder.text.commands import register as register_text
from wordorder.train.commands import register as register_train


def _json(text: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"not valid JSON: {e}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("expected a JSON object")
    return value


def cmd_check_config(a: argparse.Namespace) -> None:
    from wordorder.config import load_config

    config = load_config(a.config)
    print(
        f"{a.config}: valid; experiment {config['experiment']}, pairs "
        f"{', '.join(config['pairs'])}, {len(config['variants'])} "
        f"variants, seeds {config['seeds']}"
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="wordorder", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    def add(name, func, help):
        s = sub.add_parser(name, help=help)
        s.set_defaults(func=func)
        return s

    s = add(
        "check-config",
        cmd_check_config,
        "validate a config (schema, pairs, variants, parsers) as the DAG does",
    )
    s.add_argument("--config", required=True)

    # Stages in pipeline order, each with its own subcommands (``<stage>/commands.py``).
    for register in (
        register_corpus,
        register_text,
        register_syntax,
        register_align,
        register_preorder,
        register_train,
        register_decode,
        register_evaluate,
        register_ledger,
    ):
        register(add, _json)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    args = build_parser().parse_args(argv)
    start = time.perf_counter()
    try:
        args.func(args)
        # Every job's log ends with its time and peak memory (what to ask a cluster for).
        # The CPU time (this process and the children it waited for: eflomal) sums to the CPU-hours
        # of an experiment (wordorder.evaluate.cost). A resumed training adds its earlier attempts'
        # (their logs are overwritten by the retry's), which it sets as ``earlier_cpu_s``.
        logging.getLogger("wordorder").info(
            "%s finished in %.1f s; peak memory %.0f MB; cpu %.1f s",
            args.command,
            time.perf_counter() - start,
            peak_memory_mb(),
            cpu_seconds() + getattr(args, "earlier_cpu_s", 0.0),
        )
    except WordorderError as e:
        print(f"error: {e}", file=sys.stderr)
        from wordorder.train.resume import TrainingInterrupted

        return 143 if isinstance(e, TrainingInterrupted) else 2  # 128 + SIGTERM, as a killed job
    except OSError as e:
        if e.errno == errno.ELOOP and e.filename:  # a path through a loop of symbolic links
            print(
                f"error: {e.filename}: a loop of symbolic links ({e.strerror})\n  hint: point "
                "the config at the file itself (ls -l each folder on the path shows the links)",
                file=sys.stderr,
            )
            return 2
        if e.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        # Outputs are written to temporary names and renamed: nothing partial is left behind.
        where = f" writing {e.filename}" if e.filename else ""
        print(
            f"error: the disk is full{where} ({e.strerror})\n  hint: free space, or point "
            "results:/logs: in the config at a larger disk, then rerun: finished steps are kept",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
