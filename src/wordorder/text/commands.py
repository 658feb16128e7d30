"""The ``wordorder`` subcommands of the text stage: tokenizing and subword models (registered by
:mod:`wordorder.cli`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from wordorder.errors import WordorderError


def cmd_tokenize(a: argparse.Namespace) -> None:
    from wordorder.text.tokenize import tokenize_file

    n = tokenize_file(Path(a.input), Path(a.output), a.lang)
    print(f"{a.output}: {n} lines")


def cmd_subword_train(a: argparse.Namespace) -> None:
    from wordorder.text.subword_train import train_sentencepiece

    model = Path(a.model)
    if model.suffix != ".model":
        raise WordorderError("the subword model path must end in .model", path=model)
    opts = dict(a.options)
    train_sentencepiece([Path(p) for p in a.inputs], model.with_suffix(""), seed=a.seed, **opts)
    print(f"{model}: trained")


def cmd_subword_encode(a: argparse.Namespace) -> None:
    from wordorder.text.subword import SubwordModel, encode_file

    n = encode_file(Path(a.input), Path(a.output), SubwordModel(Path(a.model)))
    print(f"{a.output}: {n} lines")


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the stage's subcommands; ``add(name, func, help)`` makes one subparser."""
    s = add("tokenize", cmd_tokenize, "tokenize a file (line-preserving)")
    s.add_argument("--lang", required=True)
    s.add_argument("--input", required=True)
    s.add_argument("--output", required=True)

    s = add(
        "subword-train",
        cmd_subword_train,
        "train a sentencepiece model (joint: on both sides' inputs)",
    )
    s.add_argument("--inputs", nargs="+", required=True)
    s.add_argument("--options", type=_json, default={})
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--model", required=True, help="output path ending in .model")

    s = add("subword-encode", cmd_subword_encode, "split tokenized text into subwords")
    for name in ("--model", "--input", "--output"):
        s.add_argument(name, required=True)
