"""The analyses of ``wordorder`` that compare a run's systems: BLEU (and preorder tau) by
source-length bin, BLEU under swap noise (the swapping permutations and the report), and the
systems' size and speed; registered by :mod:`wordorder.evaluate.commands`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from wordorder.errors import WordorderError


def _named_paths(items: Sequence[str], form: str, option: str = "--hyps") -> list[tuple[str, str]]:
    """``NAME=PATH`` command-line items → (name, path) pairs; ``option`` and ``form`` name the
    option and the shape in errors."""
    pairs = []
    for item in items:
        name, sep, path = item.partition("=")
        if not (sep and name and path):
            raise WordorderError(f"{option} takes {form} items, got {item!r}")
        pairs.append((name, path))
    return pairs


def cmd_length_analysis(a: argparse.Namespace) -> None:
    from wordorder.evaluate.length_bins import bleu_by_length, write_length_analysis
    from wordorder.evaluate.scores import bleu_tokenizer
    from wordorder.io import read_lines

    systems = {name: read_lines(path) for name, path in _named_paths(a.hyps, "NAME=PATH")}
    sources = read_lines(a.src_tok)
    table = bleu_by_length(sources, systems, read_lines(a.ref), bleu_tokenizer(a.lang), a.edges)
    if a.align:
        from wordorder.evaluate.length_bins import TAU7, add_tau_by_length
        from wordorder.preorder.report import evaluate_split

        perms = dict(_named_paths(a.perms or [], "METHOD=PATH", "--perms"))
        scores = evaluate_split(
            Path(a.src_tok), Path(a.align), {m: Path(p) for m, p in perms.items()}
        )
        table = add_tau_by_length(table, sources, {m: s.tau for m, s in scores.items()}, a.edges)
        table = add_tau_by_length(
            table, sources, {m: s.tau_eq7 for m, s in scores.items()}, a.edges, TAU7
        )
    write_length_analysis(table, Path(a.csv), Path(a.md), Path(a.png), a.title)
    print(Path(a.md).read_text(encoding="utf-8"))


def cmd_swap_perm(a: argparse.Namespace) -> None:
    from wordorder.evaluate.swap_noise import swap_permutations
    from wordorder.io import read_lines, write_parallel
    from wordorder.preorder.permutation import format_permutation

    if len(a.percent) != len(a.output):
        raise WordorderError(
            f"{len(a.percent)} --percent values but {len(a.output)} --output files",
            hint="give one --output per --percent, in the same order",
        )
    lengths = [len(line.split()) for line in read_lines(a.tok)]
    levels = [swap_permutations(lengths, percent, a.seed) for percent in a.percent]
    write_parallel(a.output, [[format_permutation(p) for p in perms] for perms in levels])
    for percent, output, perms in zip(a.percent, a.output, levels):
        moved = sum(int((p != range(len(p))).sum()) for p in perms)
        print(f"{output}: {percent} % swapped, {moved} of {sum(lengths)} words moved")


def cmd_swap_noise_report(a: argparse.Namespace) -> None:
    from sacrebleu.metrics import BLEU

    from wordorder.evaluate.scores import bleu_tokenizer
    from wordorder.evaluate.swap_noise import swap_noise_table, write_swap_noise
    from wordorder.io import read_lines

    refs = read_lines(a.ref)
    metric = BLEU(tokenize=bleu_tokenizer(a.lang))
    bleu = {}
    for key, path in _named_paths(a.hyps, "VARIANT:PERCENT=PATH"):
        variant, colon, percent = key.rpartition(":")
        if not (colon and percent.isdigit()):
            raise WordorderError(f"--hyps takes VARIANT:PERCENT=PATH items, got {key}={path}")
        hyps = read_lines(path)
        if len(hyps) != len(refs):
            raise WordorderError(f"{len(hyps)} hypotheses but {len(refs)} references", path=path)
        bleu[(variant, int(percent))] = metric.corpus_score(hyps, [refs]).score
    write_swap_noise(swap_noise_table(bleu), Path(a.csv), Path(a.md), Path(a.png), a.title)
    print(Path(a.md).read_text(encoding="utf-8"))


def cmd_systems_table(a: argparse.Namespace) -> None:
    from wordorder.evaluate.systems import systems_markdown, systems_table
    from wordorder.io import atomic_open

    table = systems_table(a.runs["runs"])
    with atomic_open(a.csv) as f:
        table.to_csv(f, index=False, lineterminator="\n")
    with atomic_open(a.md) as f:
        f.write(systems_markdown(table, a.baseline, a.title))
    print(Path(a.md).read_text(encoding="utf-8"))


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the analyses across systems; ``add(name, func, help)`` makes one subparser."""
    s = add(
        "length-analysis", cmd_length_analysis, "BLEU by source-length bin, as a table and a figure"
    )
    for name in ("--src-tok", "--ref", "--lang", "--csv", "--md", "--png", "--title"):
        s.add_argument(name, required=True)
    s.add_argument(
        "--hyps", nargs="+", required=True, help="NAME=PATH of each system's detokenized output"
    )
    s.add_argument("--edges", type=int, nargs="+", default=[10, 20, 30, 40, 50])
    s.add_argument(
        "--align", default=None, help="word alignment of the test set: adds Kendall τ per bin"
    )
    s.add_argument(
        "--perms", nargs="*", default=[], help="METHOD=PATH preorders (.perm) of the test set"
    )

    s = add(
        "swap-perm",
        cmd_swap_perm,
        "permutations swapping a share of each sentence's words (swap noise)",
    )
    s.add_argument("--tok", required=True)
    s.add_argument("--percent", type=int, nargs="+", required=True, help="shares of swapped words")
    s.add_argument("--output", nargs="+", required=True, help="one .perm per --percent")
    s.add_argument("--seed", type=int, default=1)

    s = add(
        "swap-noise-report", cmd_swap_noise_report, "BLEU against the share of swapped source words"
    )
    for name in ("--ref", "--lang", "--csv", "--md", "--png", "--title"):
        s.add_argument(name, required=True)
    s.add_argument(
        "--hyps", nargs="+", required=True, help="VARIANT:PERCENT=PATH of each noisy translation"
    )

    s = add(
        "systems-table", cmd_systems_table, "#params, training and decoding speed of every system"
    )
    s.add_argument(
        "--runs",
        type=_json,
        required=True,
        help=(
            '{"runs": [{"pair", "variant", "seed", "model", "metrics", "decodes": '
            "[[src, benchmark.tsv], ...]}]}"
        ),
    )
    for name in ("--csv", "--md", "--baseline", "--title"):
        s.add_argument(name, required=True)
