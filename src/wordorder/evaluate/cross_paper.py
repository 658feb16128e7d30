"""The cross-paper table: every system of a run on the same data, seeds, subwords and budget,
sorted by BLEU, with the word-order scores, the size and the speed beside it — the comparison
none of the five papers could give, since each measured only its own methods.

Per (pair, test set) one block of rows, one row per system: BLEU mean ± sd over seeds with the
run-level marker against the common baseline
(:func:`~wordorder.evaluate.tables.run_level_markers`), RIBES, chrF, NKT (Kendall τ of the output's
word order against the reference's, normalised), trainable parameters and training speed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from wordorder.errors import WordorderError
from wordorder.io import atomic_open

METRICS = ("bleu", "ribes", "chrf", "nkt")


def cross_paper_table(scores: pd.DataFrame, systems: pd.DataFrame) -> pd.DataFrame:
    """Rows (pair, testset, variant) sorted by mean BLEU within each test set.

    Args:
        scores: one row per scores JSON (:func:`wordorder.evaluate.tables.collect_scores`).
        systems: the systems CSV (``pair, variant, seed, params, train_tok_s, ...``).

    Returns:
        Columns ``bleu``, ``bleu_sd``, ``seeds``, ``ribes``, ``chrf``, ``nkt``,
        ``params``, ``train_tok_s``.
    """
    missing = [
        c for c in ("pair", "testset", "variant", "seed", *METRICS) if c not in scores.columns
    ]
    if missing:
        raise WordorderError(
            f"the scores lack {', '.join(missing)}",
            hint="the cross-paper table needs tokenized scores (RIBES, NKT) of every system",
        )
    keys = ["pair", "testset", "variant"]
    grouped = scores.groupby(keys, sort=False)
    table = grouped[list(METRICS)].mean()
    table["bleu_sd"] = grouped["bleu"].std(ddof=1).fillna(0.0)
    table["seeds"] = grouped["seed"].nunique()
    size = systems.groupby(["pair", "variant"])[["params", "train_tok_s"]].mean()
    table = table.join(size, on=["pair", "variant"])
    table = table.reset_index().sort_values(
        ["pair", "testset", "bleu"], ascending=[True, True, False], kind="stable"
    )
    return table.set_index(keys)


def cross_paper_markdown(
    table: pd.DataFrame,
    markers: Mapping[tuple[str, str, str], str],
    baseline: str,
    title: str,
    marker_note: str = "",
) -> str:
    """The table in Markdown; ``marker_note`` (:meth:`RunLevelMarkers.note`) says what the
    markers mean."""
    lines = [f"# {title}", ""]
    for (pair, testset), block in table.groupby(level=["pair", "testset"], sort=False):
        lines += [
            f"## {pair}, {testset}",
            "",
            "| rank | system | BLEU | RIBES | chrF | NKT | #params | train tok/s |",
            "|---:|---|---:|---:|---:|---:|---:|---:|",
        ]
        for rank, ((_, _, variant), r) in enumerate(block.iterrows(), start=1):
            mark = markers.get((variant, pair, testset), "")
            sd = f" ± {r['bleu_sd']:.2f}" if r["seeds"] > 1 else ""
            name = f"**{variant}**" if variant == baseline else variant
            params = f"{r['params'] / 1e6:.2f}M" if r["params"] == r["params"] else "–"
            speed = f"{r['train_tok_s']:,.0f}" if r["train_tok_s"] == r["train_tok_s"] else "–"
            lines.append(
                f"| {rank} | {name} | {r['bleu']:.2f}{sd}{mark} | {r['ribes']:.2f} | "
                f"{r['chrf']:.2f} | {r['nkt']:.2f} | {params} | {speed} |"
            )
        lines.append("")
    lines.append(
        "BLEU: sacreBLEU, mean ± sd over seeds"
        + (f". {marker_note}" if marker_note else ".")
        + " NKT: normalised Kendall τ of the output's word order against the reference's "
        "(×100). Speeds from jobs that may have shared the machine."
    )
    return "\n".join(lines) + "\n"


def write_cross_paper(table: pd.DataFrame, markdown: str, csv_path: Path, md_path: Path) -> None:
    with atomic_open(csv_path) as f:
        table.to_csv(f, float_format="%.4f")
    with atomic_open(md_path) as f:
        f.write(markdown)
