"""The attention analyses of ``wordorder``, each on a trained checkpoint and then tabled: the
AER of a model's attention on a gold alignment set, and the similarity of its encoder's heads;
registered by :mod:`wordorder.evaluate.commands`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from wordorder.errors import WordorderError


def cmd_attention_aer(a: argparse.Namespace) -> None:
    from wordorder.align.pharaoh import flatten, write_pharaoh
    from wordorder.decode.runner import check_vocabularies
    from wordorder.evaluate.attention_aer import evaluate_attention_aer
    from wordorder.evaluate.scores import write_scores
    from wordorder.model_io.checkpoint import load_model
    from wordorder.model_io.subwords import subword_models

    model, _ = load_model(a.checkpoint)
    sp_src, sp_tgt = subword_models(Path(a.spm), Path(a.spm_tgt) if a.spm_tgt else None)
    check_vocabularies(model, sp_src, sp_tgt, Path(a.checkpoint))
    scores, links = evaluate_attention_aer(
        model, sp_src, a.gold_pairs, a.gold_links, a.gold_swap, progress=True, sp_tgt=sp_tgt
    )
    if a.alignments:
        write_pharaoh(a.alignments, *flatten(links))
    meta = {
        "pair": a.pair,
        "variant": a.variant,
        "seed": a.seed,
        "method": "mean target rows, summed source columns",
    }
    write_scores(Path(a.output), scores, meta)
    print(
        f"{a.output}: attention AER {100 * scores['aer']:.1f} (precision "
        f"{100 * scores['precision']:.1f}, recall {100 * scores['recall']:.1f}, "
        f"{scores['sentences']} sentences)"
    )


def cmd_aer_table(a: argparse.Namespace) -> None:
    import csv

    from wordorder.evaluate.attention_aer import aer_table
    from wordorder.io import atomic_open

    rows, md = aer_table([Path(p) for p in a.results], [Path(p) for p in a.aligners])
    with atomic_open(a.csv) as f:
        writer = csv.DictWriter(
            f,
            fieldnames=["pair", "system", "seed", "precision", "recall", "aer"],
            lineterminator="\n",
        )
        writer.writeheader()
        writer.writerows(rows)
    with atomic_open(a.md) as f:
        f.write(md)
    print(md)


def cmd_head_similarity(a: argparse.Namespace) -> None:
    from wordorder.decode.runner import read_decode_features
    from wordorder.evaluate.head_similarity import encoder_head_similarity
    from wordorder.evaluate.scores import write_scores
    from wordorder.io import read_lines
    from wordorder.model_io.checkpoint import load_model
    from wordorder.model_io.subwords import read_ids
    from wordorder.text.subword import SubwordModel

    model, meta = load_model(a.checkpoint)
    sp = SubwordModel(a.spm)  # the source side's (or the joint) model
    if sp.vocab_size != model.vocab_size:
        raise WordorderError(
            (
                f"the checkpoint's source vocabulary has {model.vocab_size} entries, the "
                f"subword model {sp.vocab_size}"
            ),
            path=a.spm,
            hint="give the source side's subword model the model was trained with",
        )
    sources = read_ids(read_lines(a.input), sp, Path(a.input))
    if not sources:
        raise WordorderError(
            "no sentences to measure the encoder's heads on",
            path=a.input,
            hint="give the test set's subword-encoded source (one sentence per line)",
        )
    feats = read_decode_features(model.options, meta, a.features or {}, sources, Path(a.checkpoint))
    result = encoder_head_similarity(model, sources, feats)
    write_scores(
        Path(a.output),
        result,
        {"pair": a.pair, "variant": a.variant, "seed": a.seed, "testset": a.testset},
    )
    print(
        f"{a.output}: {a.variant} average head similarity {result['average']:.3f} over "
        f"{result['tokens']} tokens"
    )


def cmd_head_similarity_table(a: argparse.Namespace) -> None:
    from wordorder.evaluate.head_similarity import load_results, similarity_markdown
    from wordorder.io import atomic_open

    md = similarity_markdown(load_results([Path(p) for p in a.results]), a.title)
    with atomic_open(a.md) as f:
        f.write(md)
    print(md)


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the attention analyses; ``add(name, func, help)`` makes one subparser."""
    s = add(
        "attention-aer",
        cmd_attention_aer,
        "AER of a model's attention on a gold alignment set (forced decoding)",
    )
    for name in (
        "--checkpoint",
        "--spm",
        "--gold-pairs",
        "--gold-links",
        "--output",
        "--pair",
        "--variant",
    ):
        s.add_argument(name, required=True)
    s.add_argument("--seed", type=int, required=True)
    s.add_argument(
        "--gold-swap", action="store_true", help="the gold files are target ||| source of the model"
    )
    s.add_argument(
        "--spm-tgt",
        default=None,
        help=(
            "the target side's subword model when each side has its own (--spm "
            "is then the source side's)"
        ),
    )
    s.add_argument("--alignments", default=None, help="also write the word links (0-based pharaoh)")

    s = add(
        "aer-table", cmd_aer_table, "the AER table: attention of each system and the word aligner"
    )
    s.add_argument("--results", nargs="*", default=[], help="attention-aer JSON files")
    s.add_argument("--aligners", nargs="*", default=[], help="data/<pair>/align/stats.json files")
    for name in ("--csv", "--md"):
        s.add_argument(name, required=True)

    s = add(
        "head-similarity",
        cmd_head_similarity,
        "similarity of encoder heads between feature groups (Chen 2020 Eq. 14)",
    )
    for name in (
        "--checkpoint",
        "--spm",
        "--input",
        "--output",
        "--pair",
        "--variant",
        "--testset",
    ):
        s.add_argument(name, required=True)
    s.add_argument("--seed", type=int, required=True)
    s.add_argument(
        "--features", type=_json, default={}, help='source features the model reads: {"pos": PATH}'
    )

    s = add(
        "head-similarity-table",
        cmd_head_similarity_table,
        "the head-similarity tables of one test set",
    )
    s.add_argument("--results", nargs="+", required=True)
    for name in ("--md", "--title"):
        s.add_argument(name, required=True)
