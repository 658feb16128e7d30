"""The ``report`` step: an experiment's score JSONs into its results tables and training curves.

The results table (BLEU, RIBES and chrF when every score has RIBES, else BLEU and chrF) with
run-level significance markers against the baseline (:func:`run_level_markers`); with RIBES,
optionally the under-/over-generation table; optionally BLEU's n-gram precisions (Kawara 2021
Table VI, Chen 2020 Fig 5).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from wordorder.evaluate.plots import plot_training_curves
from wordorder.evaluate.table_render import write_table
from wordorder.evaluate.tables import collect_scores, results_table, run_level_markers


def write_report(
    scores: Sequence[Path],
    metrics_logs: Sequence[Path],
    variants: Sequence[str],
    title: str,
    csv: Path,
    md: Path,
    curves: Path,
    baseline: str = "the baseline",
    tex: Path | None = None,
    generation: tuple[Path, Path] | None = None,
    ngram: tuple[Path, Path] | None = None,
) -> None:
    """Write the results table (CSV, Markdown, optionally LaTeX) and the training curves of
    ``metrics_logs`` (``.../<pair>/<variant>/<seed>/metrics.jsonl``); ``generation`` and ``ngram``
    are (CSV, Markdown) paths of the optional tables. The BLEU cells carry each system's marker
    against ``baseline`` (when it is one of the scored variants): the run-level Welch t (Hsu df)
    over the per-run BLEU, Holm over the table's rows."""
    df = collect_scores(scores)
    word_order = "ribes" in df.columns and df["ribes"].notna().all()
    metrics = ("bleu", "ribes", "chrf") if word_order else ("bleu", "chrf")
    if "bleu_closest" in df.columns and df["bleu_closest"].notna().all():
        metrics = ("bleu", "bleu_closest", *metrics[1:])  # bleu_brevity: shortest, both readings
    marked = run_level_markers(df, baseline, variants)
    write_table(
        results_table(df, metrics=metrics, variants=variants),
        csv,
        md,
        title=title,
        markers=marked.markers,
        marker_note=marked.note(),
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
