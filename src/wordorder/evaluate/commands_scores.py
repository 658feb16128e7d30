"""The scoring subcommands of ``wordorder``: a system's scores (BLEU, chrF), its significance
against the baseline (paired bootstrap, sign test), and the results report that gathers them;
registered by :mod:`wordorder.evaluate.commands`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def cmd_score(a: argparse.Namespace) -> None:
    from wordorder.corpus.references import read_references
    from wordorder.evaluate.scores import score_translations, write_scores
    from wordorder.io import read_parallel
    from wordorder.text.tokenize import get_tokenizer

    hyps, refs = read_parallel(a.hyp, a.ref)
    hyps_tok, refs_tok = read_parallel(a.hyp_tok, a.ref_tok) if a.hyp_tok else (None, None)
    extra = read_references(a.extra_ref, len(refs))
    extra_tok = []
    if extra and hyps_tok is not None:  # the extra references in the pipeline's own tokenization
        tokenizer = get_tokenizer(a.lang)
        extra_tok = [[" ".join(tokenizer.tokenize(line)) for line in r] for r in extra]
    scores = score_translations(
        hyps,
        refs,
        a.lang,
        hyps_tok=hyps_tok,
        refs_tok=refs_tok,
        extra_refs=extra,
        extra_refs_tok=extra_tok,
        lowercase=a.lowercase,
        brevity=a.bleu_brevity,
    )
    meta = {
        "pair": a.pair,
        "variant": a.variant,
        "seed": a.seed,
        "testset": a.testset,
        "hyp": a.hyp,
        "ref": a.ref,
        "extra_refs": a.extra_ref,
        "lowercase": a.lowercase,
        "bleu_brevity": a.bleu_brevity,
    }
    write_scores(Path(a.output), scores, meta)
    print(f"{a.output}: BLEU {scores['bleu']:.2f} chrF {scores['chrf']:.2f}")


def cmd_report(a: argparse.Namespace) -> None:
    from wordorder.evaluate.report import write_report

    write_report(
        [Path(p) for p in a.scores],
        [Path(m) for m in a.metrics],
        a.variants,
        a.title,
        Path(a.csv),
        Path(a.md),
        Path(a.curves),
        a.baseline,
        tex=Path(a.tex) if a.tex else None,
        generation=(Path(a.generation_csv), Path(a.generation_md)) if a.generation_md else None,
        ngram=(Path(a.ngram_csv), Path(a.ngram_md)) if a.ngram_md else None,
    )
    print(Path(a.md).read_text(encoding="utf-8"))


def cmd_significance(a: argparse.Namespace) -> None:
    from wordorder.corpus.references import read_references
    from wordorder.evaluate.scores import bleu_tokenizer, write_scores
    from wordorder.evaluate.significance import bleu_paired_bootstrap, bleu_sign_test
    from wordorder.io import read_lines, read_parallel

    hyps, refs = read_parallel(a.hyp, a.ref)
    base = read_lines(a.baseline_hyp)
    tok = bleu_tokenizer(a.lang)
    extra = read_references(a.extra_ref, len(refs))
    bp = a.bleu_brevity
    result = {
        "bootstrap": bleu_paired_bootstrap(
            hyps, base, refs, tok, a.samples, extra, a.lowercase, bp
        ),
        "sign": bleu_sign_test(hyps, base, refs, tok, extra, a.lowercase, bp),
    }
    meta = {
        "pair": a.pair,
        "variant": a.variant,
        "baseline": a.baseline,
        "seed": a.seed,
        "testset": a.testset,
    }
    write_scores(Path(a.output), result, meta)
    print(
        f"{a.output}: {a.variant} vs {a.baseline}: bootstrap p = {result['bootstrap']['p']:.4f}, "
        f"sign test p = {result['sign']['p']:.4f} "
        f"({result['sign']['n_plus']}+/{result['sign']['n_minus']}-)"
    )


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the scoring subcommands; ``add(name, func, help)`` makes one subparser."""
    s = add("score", cmd_score, "score translations (BLEU, chrF) into a JSON")
    for name in ("--hyp", "--ref", "--lang", "--output", "--pair", "--variant", "--testset"):
        s.add_argument(name, required=True)
    s.add_argument("--hyp-tok")
    s.add_argument("--ref-tok")
    s.add_argument(
        "--extra-ref",
        action="append",
        default=[],
        metavar="PATH",
        help="a further reference, line-aligned with --ref (repeat for each; NIST sets have four)",
    )
    s.add_argument(
        "--lowercase", action="store_true", help="case-insensitive BLEU and chrF (sacreBLEU -lc)"
    )
    _brevity_argument(s)
    s.add_argument("--seed", type=int, required=True)

    s = add("report", cmd_report, "gather score JSONs into tables and figures")
    s.add_argument("--scores", nargs="+", required=True)
    s.add_argument("--metrics", nargs="+", required=True)
    s.add_argument("--variants", nargs="+", required=True)
    s.add_argument("--title", required=True)
    for name in ("--csv", "--md", "--curves"):
        s.add_argument(name, required=True)
    s.add_argument(
        "--baseline",
        default="the baseline",
        help="the variant the BLEU markers test each system against (run-level Welch t, Hsu df)",
    )
    s.add_argument("--generation-csv")
    s.add_argument("--generation-md")
    s.add_argument("--tex", help="also the results table as LaTeX")
    s.add_argument("--ngram-csv")
    s.add_argument("--ngram-md")

    s = add(
        "significance",
        cmd_significance,
        "paired bootstrap and sign test of BLEU against a baseline",
    )
    for name in (
        "--hyp",
        "--baseline-hyp",
        "--ref",
        "--lang",
        "--output",
        "--pair",
        "--variant",
        "--baseline",
        "--testset",
    ):
        s.add_argument(name, required=True)
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--samples", type=int, default=1000)
    s.add_argument(
        "--extra-ref",
        action="append",
        default=[],
        metavar="PATH",
        help="a further reference, line-aligned with --ref (repeat for each)",
    )
    s.add_argument("--lowercase", action="store_true", help="case-insensitive BLEU (sacreBLEU -lc)")
    _brevity_argument(s)


def _brevity_argument(s: argparse.ArgumentParser) -> None:
    from wordorder.evaluate.bleu import BREVITY

    s.add_argument(
        "--bleu-brevity",
        choices=BREVITY,
        default="closest",
        help="reference length of BLEU's brevity penalty with several references: the closest "
        "(sacreBLEU, multi-bleu.perl) or the shortest (NIST mteval-v11b)",
    )
