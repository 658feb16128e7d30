"""The evaluation and analysis subcommands of ``wordorder`` (scores, the results report,
significance, AER, head similarity, length bins, swap noise, the systems table); registered
by :mod:`wordorder.cli`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from wordorder.errors import WordorderError


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
        [Path(p) for p in a.significance],
        a.test,
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
    result = {
        "bootstrap": bleu_paired_bootstrap(hyps, base, refs, tok, a.samples, extra, a.lowercase),
        "sign": bleu_sign_test(hyps, base, refs, tok, extra, a.lowercase),
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


def _named_paths(items: Sequence[str], form: str) -> list[tuple[str, str]]:
    """``NAME=PATH`` command-line items → (name, path) pairs; ``form`` names the shape in errors."""
    pairs = []
    for item in items:
        name, sep, path = item.partition("=")
        if not (sep and name and path):
            raise WordorderError(f"--hyps takes {form} items, got {item!r}")
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

        perms = dict(_named_paths(a.perms or [], "METHOD=PATH"))
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
    from wordorder.io import read_lines
    from wordorder.preorder.permutation import write_permutations

    lengths = [len(line.split()) for line in read_lines(a.tok)]
    perms = swap_permutations(lengths, a.percent, a.seed)
    write_permutations(a.output, perms)
    moved = sum(int((p != range(len(p))).sum()) for p in perms)
    print(f"{a.output}: {a.percent} % swapped, {moved} of {sum(lengths)} words moved")


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


def cmd_findings(a: argparse.Namespace) -> None:
    from wordorder.evaluate.cost import cost_summary
    from wordorder.evaluate.findings import Claim, seed_paired_bootstrap, verdict, write_findings
    from wordorder.evaluate.scores import bleu_tokenizer
    from wordorder.io import read_lines

    cost = cost_summary(Path(a.logs)) if a.logs else None
    rows = []
    for c in a.spec["claims"]:
        claim = Claim.from_dict(c)
        refs = [read_lines(p) for p in c["refs"]]
        test = seed_paired_bootstrap(
            [read_lines(p) for p in c["system_hyps"]],
            [read_lines(p) for p in c["baseline_hyps"]],
            refs,
            bleu_tokenizer(c["lang"]),
            bool(c.get("lowercase")),
            a.samples,
        )
        rows.append(
            {
                **vars(claim),
                **test,
                "seeds": len(c["system_hyps"]),
                "verdict": verdict(claim.paper_delta, test["delta"], test["p"]),
            }
        )
        print(
            f"{claim.paper}: {claim.system} vs {claim.baseline} on "
            f"{claim.pair}/{claim.testset}: {test['delta']:+.2f} ± {test['sd']:.2f} BLEU (paper "
            f"{claim.paper_delta:+.2f}), p = {test['p']:.3f}"
        )
    write_findings(rows, Path(a.md), Path(a.json), a.spec.get("title", "Findings"), cost)


def cmd_cross_paper(a: argparse.Namespace) -> None:
    import pandas as pd

    from wordorder.evaluate.cross_paper import (
        cross_paper_markdown,
        cross_paper_table,
        write_cross_paper,
    )
    from wordorder.evaluate.tables import collect_scores, collect_significance, significance_markers

    table = cross_paper_table(collect_scores([Path(p) for p in a.scores]), pd.read_csv(a.systems))
    markers = (
        significance_markers(collect_significance([Path(p) for p in a.significance]), a.test)
        if a.significance
        else {}
    )
    md = cross_paper_markdown(table, markers, a.baseline, a.title)
    write_cross_paper(table, md, Path(a.csv), Path(a.md))
    print(md)


def cmd_convergence(a: argparse.Namespace) -> None:
    from wordorder.evaluate.convergence import (
        convergence_table,
        plot_convergence,
        write_convergence,
    )

    logs = {(r["pair"], r["variant"], int(r["seed"])): Path(r["metrics"]) for r in a.runs["runs"]}
    rows = convergence_table(logs, a.patience)
    print(write_convergence(rows, Path(a.md), a.title))
    plot_convergence(logs, Path(a.png))


def cmd_readme_section(a: argparse.Namespace) -> None:
    from wordorder.evaluate.readme import update_readme

    update_readme(Path(a.readme), a.name, [Path(p) for p in a.source], Path(a.block), a.note)
    print(f"{a.readme}: the '{a.name}' section now holds {', '.join(a.source)}")


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the stage's subcommands; ``add(name, func, help)`` makes one subparser."""
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
    s.add_argument("--seed", type=int, required=True)

    s = add("report", cmd_report, "gather score JSONs into tables and figures")
    s.add_argument("--scores", nargs="+", required=True)
    s.add_argument("--metrics", nargs="+", required=True)
    s.add_argument("--variants", nargs="+", required=True)
    s.add_argument("--title", required=True)
    for name in ("--csv", "--md", "--curves"):
        s.add_argument(name, required=True)
    s.add_argument("--significance", nargs="*", default=[])
    s.add_argument("--test", choices=["bootstrap", "sign"], default="bootstrap")
    s.add_argument("--baseline", default="the baseline")
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

    s = add(
        "findings",
        cmd_findings,
        "the papers' claimed BLEU differences against ours (seed-paired bootstrap)",
    )
    s.add_argument(
        "--spec",
        type=_json,
        required=True,
        help="{title, claims: [{paper, pair, testset, system, "
        "baseline, paper_delta, system_hyps, baseline_hyps, refs, lang, lowercase}]}",
    )
    s.add_argument("--md", required=True)
    s.add_argument("--json", required=True)
    s.add_argument("--samples", type=int, default=1000)
    s.add_argument("--logs", help="the experiment's logs folder: its CPU-hours go below the table")

    s = add(
        "cross-paper-table", cmd_cross_paper, "every system of a run in one table, sorted by BLEU"
    )
    s.add_argument("--scores", nargs="+", required=True)
    s.add_argument("--significance", nargs="*", default=[])
    for name in ("--systems", "--baseline", "--title", "--csv", "--md"):
        s.add_argument(name, required=True)
    s.add_argument("--test", choices=["bootstrap", "sign"], default="bootstrap")

    s = add(
        "convergence",
        cmd_convergence,
        "where and why each training stopped, and its dev curve per system",
    )
    s.add_argument(
        "--runs",
        type=_json,
        required=True,
        help="{runs: [{pair, variant, seed, metrics}]} (metrics.jsonl paths)",
    )
    s.add_argument("--patience", type=int, help="train.patience: judges logs without a stop record")
    for name in ("--title", "--md", "--png"):
        s.add_argument(name, required=True)

    s = add(
        "readme-section",
        cmd_readme_section,
        "replace a README's generated section by tables of the run",
    )
    for name in ("--readme", "--name", "--block"):
        s.add_argument(name, required=True)
    s.add_argument("--source", nargs="+", required=True, help="Markdown files, in order")
    s.add_argument("--note", default="", help="a line put above the tables")

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
    for name in ("--tok", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--percent", type=int, required=True)
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
