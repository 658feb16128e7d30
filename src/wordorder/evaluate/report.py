"""The ``report`` step: an experiment's score JSONs into its results tables and training curves.

The results table (BLEU, RIBES and chrF when every score has RIBES, else BLEU and chrF) with
significance markers against the baseline; with RIBES, optionally the under-/over-generation
table; optionally BLEU's n-gram precisions (Kawara 2021 Table VI, Chen 2020 Fig 5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from wordorder.evaluate.plots import plot_training_curves
from wordorder.evaluate.table_render import write_table
from wordorder.evaluate.tables import (
    collect_scores,
    collect_significance,
    results_table,
    significance_markers,
)

TESTS = {"bootstrap": "paired bootstrap (sacreBLEU)", "sign": "sign test (Collins et al. 2005)"}


def write_report(
    scores: Sequence[Path],
    metrics_logs: Sequence[Path],
    variants: Sequence[str],
    title: str,
    csv: Path,
    md: Path,
    curves: Path,
    significance: Sequence[Path] = (),
    test: str = "bootstrap",
    baseline: str = "the baseline",
    tex: Path | None = None,
    generation: tuple[Path, Path] | None = None,
    ngram: tuple[Path, Path] | None = None,
) -> None:
    """Write the results table (CSV, Markdown, optionally LaTeX) and the training curves of
    ``metrics_logs`` (``.../<pair>/<variant>/<seed>/metrics.jsonl``); ``generation`` and ``ngram``
    are (CSV, Markdown) paths of the optional tables."""
    df = collect_scores(scores)
    word_order = "ribes" in df.columns and df["ribes"].notna().all()
    metrics = ("bleu", "ribes", "chrf") if word_order else ("bleu", "chrf")
    markers: Mapping[tuple[str, str, str], str] = {}
    note = ""
    if significance:
        markers = significance_markers(collect_significance(significance), test)
        note = (
            f"BLEU +/++: better than {baseline} at p < 0.05 / 0.01, −/−−: worse, {TESTS[test]}; "
            "with several seeds the largest p of the seeds."
        )
    write_table(
        results_table(df, metrics=metrics, variants=variants),
        csv,
        md,
        title=title,
        markers=markers,
        marker_note=note,
        tex_path=tex,
    )
    experiment = title.split(":")[0]
    if word_order and generation:
        gen = results_table(
            df, metrics=("under_generation", "over_generation", "ter_tok"), variants=variants
        )
        write_table(
            gen,
            *generation,
            title=(
                f"{experiment}: under- and over-generation (TER insertions "
                "/ deletions per sentence)"
            ),
        )
    if ngram:
        for n in range(4):
            df[f"p{n + 1}"] = [float(p[n]) for p in df["bleu_detail.precisions"]]
        write_table(
            results_table(df, metrics=("p1", "p2", "p3", "p4"), variants=variants),
            *ngram,
            title=f"{experiment}: n-gram precisions of BLEU (%)",
        )
    plot_training_curves({" ".join(m.parts[-4:-1]): m for m in metrics_logs}, curves)
