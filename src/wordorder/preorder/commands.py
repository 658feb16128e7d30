"""The ``wordorder`` subcommands of the preordering stage (registered by :mod:`wordorder.cli`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from wordorder.argtypes import positive_int
from wordorder.errors import WordorderError


def cmd_word_classes(a: argparse.Namespace) -> None:
    from wordorder.preorder.runner import read_tokens
    from wordorder.preorder.wordclass import train_word_classes, write_word_classes

    classes = train_word_classes(
        read_tokens(a.input), n_classes=a.classes, iterations=a.iterations, seed=a.seed
    )
    write_word_classes(a.output, classes)
    print(f"{a.output}: {len(classes)} words in {len(set(classes.values()))} classes")


def cmd_preorder_gold(a: argparse.Namespace) -> None:
    from wordorder.preorder.runner import gold_step

    print(json.dumps(gold_step(Path(a.align), Path(a.tok), Path(a.output), a.key, a.attach)))


def cmd_btg_train(a: argparse.Namespace) -> None:
    from wordorder.preorder.runner import btg_train_step

    inputs = Path(a.tok), Path(a.conllu), Path(a.classes), Path(a.align)
    outputs = Path(a.model), Path(a.stats)
    print(json.dumps(btg_train_step(*inputs, *outputs, a.options, fold=a.fold, folds=a.folds)))


def cmd_btg_apply(a: argparse.Namespace) -> None:
    from wordorder.preorder.runner import btg_apply_step

    models = [Path(m) for m in a.model]
    tok, conllu, classes, output = Path(a.tok), Path(a.conllu), Path(a.classes), Path(a.output)
    print(json.dumps(btg_apply_step(models, tok, conllu, classes, output, a.pos, a.threads)))


def cmd_rvnn_train(a: argparse.Namespace) -> None:
    import torch

    from wordorder.preorder.runner import rvnn_train_step

    if a.threads:
        torch.set_num_threads(a.threads)
    inputs = Path(a.tok), Path(a.conllu), Path(a.tree), Path(a.align)
    outputs = Path(a.model), Path(a.stats)
    print(json.dumps(rvnn_train_step(*inputs, *outputs, a.options, fold=a.fold, folds=a.folds)))


def cmd_rvnn_apply(a: argparse.Namespace) -> None:
    import torch

    from wordorder.preorder.runner import rvnn_apply_step

    if a.threads:
        torch.set_num_threads(a.threads)
    models = [Path(m) for m in a.model]
    inputs = Path(a.tok), Path(a.conllu), Path(a.tree)
    print(json.dumps(rvnn_apply_step(models, *inputs, Path(a.output))))


def cmd_preorder_project(a: argparse.Namespace) -> None:
    from wordorder.preorder.permutation import write_preordered_levels

    if not len(a.perm) == len(a.out_tok) == len(a.out_bpe) == len(a.out_positions):
        raise WordorderError(
            f"{len(a.perm)} --perm, {len(a.out_tok)} --out-tok, {len(a.out_bpe)} --out-bpe and "
            f"{len(a.out_positions)} --out-positions files",
            hint="give one of each --out-* per --perm, in the same order",
        )
    outputs = list(zip(a.out_tok, a.out_bpe, a.out_positions))
    for stats in write_preordered_levels(a.perm, a.tok, a.bpe, outputs, a.unit):
        print(json.dumps(stats))


def cmd_preorder_report(a: argparse.Namespace) -> None:
    from wordorder.preorder.report import preorder_report

    if not (len(a.splits) == len(a.tok) == len(a.align)):
        raise WordorderError("--splits, --tok and --align need one value per split each")
    if len(a.perms) != len(a.splits) * len(a.methods):
        raise WordorderError("--perms needs one file per (method, split), methods outer")
    perms = iter(a.perms)
    by_method = {m: {s: Path(next(perms)) for s in a.splits} for m in a.methods}
    splits = {
        s: (Path(t), Path(al), {m: by_method[m][s] for m in a.methods})
        for s, t, al in zip(a.splits, a.tok, a.align)
    }
    table = preorder_report(a.pair, splits, Path(a.json), Path(a.csv), Path(a.md), Path(a.figure))
    print(table.round(3).to_string())


_MODELS_HELP = "the model, or the K cross-fitting fold models in order (sentence i: model i %% K)"


def _add_fold_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--fold", type=int, help="train without fold k (the sentences i %% K == k)")
    s.add_argument("--folds", type=int, help="K, the number of cross-fitting folds")


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the stage's subcommands; ``add(name, func, help)`` makes one subparser."""
    s = add(
        "word-classes",
        cmd_word_classes,
        "cluster the words of a tokenized file (exchange algorithm)",
    )
    s.add_argument("--input", required=True)
    s.add_argument("--output", required=True)
    s.add_argument("--classes", type=int, default=256)
    s.add_argument("--iterations", type=int, default=10)
    s.add_argument("--seed", type=int, default=1)

    s = add("preorder-gold", cmd_preorder_gold, "gold preorders from alignments")
    for name in ("--align", "--tok", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--key", default="mean", choices=["mean", "min", "median", "max"])
    s.add_argument("--attach", default="left", choices=["left", "right"])

    s = add("btg-train", cmd_btg_train, "train the top-down BTG preorderer")
    for name in ("--tok", "--conllu", "--classes", "--align", "--model", "--stats"):
        s.add_argument(name, required=True)
    s.add_argument(
        "--options", type=_json, default={}, help="the config's preorder.btg block as JSON"
    )
    _add_fold_options(s)

    s = add("btg-apply", cmd_btg_apply, "preorder a split with a trained BTG model")
    s.add_argument("--model", nargs="+", required=True, help=_MODELS_HELP)
    for name in ("--tok", "--conllu", "--classes", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--pos", default="xpos", choices=["xpos", "upos"])
    s.add_argument(
        "--threads",
        type=positive_int,
        default=None,
        help="decoding threads (default: the usable cores)",
    )

    s = add("rvnn-train", cmd_rvnn_train, "train the recursive-NN preorderer")
    for name in ("--tok", "--conllu", "--tree", "--align", "--model", "--stats"):
        s.add_argument(name, required=True)
    s.add_argument(
        "--options", type=_json, default={}, help="the config's preorder.rvnn block as JSON"
    )
    s.add_argument("--threads", type=positive_int, default=None)
    _add_fold_options(s)

    s = add("rvnn-apply", cmd_rvnn_apply, "preorder a split with a trained RvNN model")
    s.add_argument("--model", nargs="+", required=True, help=_MODELS_HELP)
    for name in ("--tok", "--conllu", "--tree", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--threads", type=positive_int, default=None)

    s = add(
        "preorder-project",
        cmd_preorder_project,
        "preordered tokens, subwords and subword positions",
    )
    for name in ("--tok", "--bpe"):
        s.add_argument(name, required=True)
    for name in ("--perm", "--out-tok", "--out-bpe", "--out-positions"):
        s.add_argument(name, nargs="+", required=True, help="one per permutation (--perm)")
    s.add_argument(
        "--unit",
        choices=("subword", "word"),
        default="subword",
        help="positions of the pieces in the preordered subword sequence, or of their words "
        "(pieces of a word share it): the config's preorder.positions",
    )

    s = add(
        "preorder-report",
        cmd_preorder_report,
        "Kendall tau / FRS of every preorder: the preorder_quality table",
    )
    for name in ("--pair", "--json", "--csv", "--md", "--figure"):
        s.add_argument(name, required=True)
    for name in ("--splits", "--tok", "--align", "--methods"):
        s.add_argument(name, nargs="+", required=True)
    s.add_argument(
        "--perms", nargs="*", default=[], help="one .perm per (method, split), methods outer"
    )
