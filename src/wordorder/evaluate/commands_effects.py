"""The effects subcommands of ``wordorder`` (the rules of workflow/rules/effects.smk): the
papers' claimed BLEU differences against ours, every system of a run in one table, where each
training stopped, and the README's generated section; and ``power``, the runs a design needs
(no rule: its numbers are written into the config before the runs); registered by
:mod:`wordorder.evaluate.commands`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from wordorder.argtypes import positive_int


def cmd_findings(a: argparse.Namespace) -> None:
    from wordorder.evaluate.cost import cost_summary
    from wordorder.evaluate.findings import (
        Claim,
        compare_runs,
        judge,
        keep_lines,
        long_sentences,
        matched_runs,
        write_findings,
    )
    from wordorder.evaluate.scores import bleu_tokenizer
    from wordorder.io import read_lines

    cost = cost_summary(Path(a.logs)) if a.logs else None
    rows = []
    for c in a.spec["claims"]:
        claim = Claim.from_dict(c)
        if claim.paired:  # blocks: the seeds both systems have, matched
            hyps_a, hyps_b, _ = matched_runs(c)
            c = {**c, "system_hyps": hyps_a, "baseline_hyps": hyps_b}
        system, baseline, refs = (
            [read_lines(p) for p in c[k]] for k in ("system_hyps", "baseline_hyps", "refs")
        )
        if claim.min_source_words:  # the claim's length subset, cut the same from every file
            n = claim.min_source_words
            keep = long_sentences(read_lines(c["source"]), n, len(refs[0]))
            system, baseline, refs = (keep_lines(x, keep) for x in (system, baseline, refs))
        test = compare_runs(
            system,
            baseline,
            refs,
            bleu_tokenizer(c["lang"]),
            bool(c.get("lowercase")),
            a.samples,
            brevity=str(c.get("brevity", "closest")),
            paired=claim.paired,
        )
        rows.append({**vars(claim), **test})
    rows = judge(rows)
    for r in rows:
        subset = f" (source ≥ {r['min_source_words']} words)" if r["min_source_words"] else ""
        print(
            f"{r['family']}: {r['paper']}: {r['system']} ({r['system_runs']} runs) vs "
            f"{r['baseline']} ({r['baseline_runs']}) on {r['pair']}/{r['testset']}{subset}, "
            f"{r['sentences']} sentences: {r['delta']:+.2f} BLEU "
            f"[{r['ci'][0]:+.2f}, {r['ci'][1]:+.2f}] (paper {r['paper_delta']:+.2f}), "
            f"p = {r['p']:.3f} ({r['test']}), Holm {r['p_holm']:.3f}: {r['verdict']}"
        )
    unjudged = a.spec.get("unjudged", [])
    for c in unjudged:
        print(f"not judged: {c['paper']}: {c['system']} vs {c['baseline']}: {c['reason']}")
    title = a.spec.get("title", "Findings")
    write_findings(rows, Path(a.md), Path(a.json), title, cost, unjudged)


def cmd_power(a: argparse.Namespace) -> None:
    from wordorder.evaluate.power import power_report

    print(power_report(a.delta, a.sd, a.claims, a.alpha, a.power, a.runs, a.baseline_runs))


def cmd_cross_paper(a: argparse.Namespace) -> None:
    import pandas as pd

    from wordorder.evaluate.cross_paper import (
        cross_paper_markdown,
        cross_paper_table,
        write_cross_paper,
    )
    from wordorder.evaluate.tables import collect_scores, run_level_markers

    scores = collect_scores([Path(p) for p in a.scores])
    table = cross_paper_table(scores, pd.read_csv(a.systems))
    marked = run_level_markers(scores, a.baseline)
    md = cross_paper_markdown(table, marked.markers, a.baseline, a.title, marked.note())
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
    from wordorder.errors import WordorderError
    from wordorder.evaluate.readme import update_readme

    # "" is how the rule passes an unset config key (evaluation.readme or readme_page)
    readme, page = (Path(x) if x else None for x in (a.readme, a.page))
    if readme is None and page is None:
        raise WordorderError("readme-section: give --readme, --page or both")
    sources = [Path(p) for p in a.source]
    update_readme(readme, a.name, sources, Path(a.block), a.note, page)
    where = (
        f"{page} (the tables) and {readme} (their summary)" if page and readme else readme or page
    )
    print(f"{where}: the '{a.name}' section now holds {', '.join(a.source)}")


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the effects subcommands; ``add(name, func, help)`` makes one subparser."""
    s = add(
        "findings",
        cmd_findings,
        "the papers' claimed BLEU differences against ours, with the training run as the unit",
    )
    s.add_argument(
        "--spec",
        type=_json,
        required=True,
        help="{title, claims: [{paper, pair, testset, system, baseline, paper_delta, family, "
        "min_source_words, system_hyps, baseline_hyps, refs, source, lang, lowercase, brevity}]}; "
        "system_hyps and baseline_hyps: one file per training run (their numbers may differ); "
        "family: primary (default) or secondary, Holm's adjustment spans one family; "
        "min_source_words N: the sentences whose tokenized source (the file source) has ≥ N words",
    )
    s.add_argument("--md", required=True)
    s.add_argument("--json", required=True)
    s.add_argument(
        "--samples", type=int, default=1000, help="draws of the bootstrap confidence interval"
    )
    s.add_argument("--logs", help="the experiment's logs folder: its CPU-hours go below the table")

    s = add(
        "power",
        cmd_power,
        "runs per system for a powered design: what each Δ needs after Holm, what n runs detect",
    )
    s.add_argument("--sd", type=float, required=True, help="the run-to-run sd (a pilot's, BLEU)")
    s.add_argument(
        "--delta", type=float, nargs="+", required=True, help="the differences to detect (BLEU)"
    )
    s.add_argument(
        "--claims", type=int, default=1, help="the claims of the family Holm corrects over"
    )
    s.add_argument("--alpha", type=float, default=0.05, help="the family's two-sided α")
    s.add_argument("--power", type=float, default=0.8)
    s.add_argument(
        "--runs", type=positive_int, help="runs per system: the MDE and powers at this n"
    )
    s.add_argument("--baseline-runs", type=positive_int, help="the baseline's runs, if not --runs")

    s = add(
        "cross-paper-table", cmd_cross_paper, "every system of a run in one table, sorted by BLEU"
    )
    s.add_argument("--scores", nargs="+", required=True)
    for name in ("--systems", "--baseline", "--title", "--csv", "--md"):
        s.add_argument(name, required=True)

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
        "replace a README's generated section by tables of the run (or a page's, and the README's"
        " by a summary linking there)",
    )
    for name in ("--name", "--block"):
        s.add_argument(name, required=True)
    s.add_argument("--readme", default="", help="gets the tables, or with --page their summary")
    s.add_argument("--page", default="", help="a docs page that gets the tables")
    s.add_argument("--source", nargs="+", required=True, help="Markdown files, in order")
    s.add_argument("--note", default="", help="a line put above the tables")
