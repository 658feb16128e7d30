"""The ``wordorder`` subcommands of the syntax stage: parsing, subword projection, the parse report
(registered by :mod:`wordorder.cli`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from wordorder.errors import WordorderError


def cmd_parse(a: argparse.Namespace) -> None:
    from wordorder.syntax.parse import parse_file, parse_scatter_item

    stats = parse_file(
        a.input, a.output, a.lang, a.parsers, parse_scatter_item(a.shard), a.batch_size
    )
    print(json.dumps(stats.to_json()))


def cmd_parse_gather(a: argparse.Namespace) -> None:
    from wordorder.syntax.parse import gather

    print(json.dumps(gather(a.shards, a.tokenized, a.output, a.summary)))


def cmd_syntax_project(a: argparse.Namespace) -> None:
    from wordorder.syntax.project import project_file

    print(
        json.dumps(
            project_file(
                a.conllu,
                a.bpe,
                a.out_pos,
                a.out_bieo,
                a.out_heads,
                a.out_tree,
                a.out_dep,
                a.out_word,
                a.out_head,
            )
        )
    )


def cmd_syntax_report(a: argparse.Namespace) -> None:
    from wordorder.syntax.report import syntax_report

    if len(a.splits) != len(a.conllu) or len(a.splits) != len(a.summaries):
        raise WordorderError("--splits, --conllu and --summaries need one value per split each")
    report = syntax_report(
        a.pair,
        a.lang,
        dict(zip(a.splits, a.conllu)),
        dict(zip(a.splits, a.summaries)),
        Path(a.json),
        Path(a.figure),
    )
    print(
        json.dumps(
            {
                k: {x: v[x] for x in ("sentences", "fallback_share", "nonprojective_share")}
                for k, v in report["splits"].items()
            }
        )
    )


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the stage's subcommands; ``add(name, func, help)`` makes one subparser."""
    s = add("parse", cmd_parse, "parse one shard of a tokenized file into CoNLL-U")
    for name in ("--lang", "--input", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--shard", default="1-of-1", help="K-of-N (Snakemake's scatter item)")
    s.add_argument("--parsers", type=_json, default={}, help="syntax.parsers of the config as JSON")
    s.add_argument("--batch-size", type=int, default=256)

    s = add("parse-gather", cmd_parse_gather, "concatenate parse shards, checked against the input")
    s.add_argument("--shards", nargs="+", required=True)
    for name in ("--tokenized", "--output", "--summary"):
        s.add_argument(name, required=True)

    s = add(
        "syntax-project",
        cmd_syntax_project,
        "POS/BIEO/dependency labels per subword, heads and binary trees",
    )
    for name in ("--conllu", "--bpe", "--out-pos", "--out-bieo", "--out-heads", "--out-tree"):
        s.add_argument(name, required=True)
    s.add_argument("--out-dep", default=None, help="dependency label of each subword's word")
    s.add_argument(
        "--out-word", default=None, help="word index of each subword (model input 'word')"
    )
    s.add_argument(
        "--out-head", default=None, help="head of each subword's word (model input 'head')"
    )

    s = add("syntax-report", cmd_syntax_report, "parse statistics, masks and a figure for one pair")
    for name in ("--pair", "--lang", "--json", "--figure"):
        s.add_argument(name, required=True)
    for name in ("--splits", "--conllu", "--summaries"):
        s.add_argument(name, nargs="+", required=True)
