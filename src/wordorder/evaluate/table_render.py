"""Writing a :func:`~wordorder.evaluate.tables.results_table`: a tidy CSV, a Markdown table with
the sacreBLEU signatures listed under it, and optionally a LaTeX (booktabs) table of the same
cells, with significance markers on the BLEU cells."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from wordorder.evaluate.tables import METRIC_NAMES, ordered_unique
from wordorder.io import atomic_open

__all__ = ["write_table"]


def _fmt(value: float, digits: int = 1) -> str:
    return (
        "–"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else f"{value:.{digits}f}"
    )


def _display(
    table: pd.DataFrame, markers: Mapping[tuple[str, str, str], str] | None = None
) -> tuple[list[str], list[list[str]], str]:
    """(header, rows of cell texts, the note on seeds) shared by the Markdown and LaTeX forms."""
    stats = set(table.columns.get_level_values("stat"))
    multi_seed = "sd" in stats
    cells = ordered_unique([c[:3] for c in table.columns])
    ns: set[int] = set()
    if multi_seed:
        ns = {int(v) for c in cells for v in table[(*c, "n")] if v > 0}
    show_n = len(ns) > 1

    header = ["variant"] + [
        f"{pair} {testset} {METRIC_NAMES.get(m, m)}" for pair, testset, m in cells
    ]
    rows = []
    for variant in table.index:
        row = [str(variant)]
        for cell in cells:
            mean = table.loc[variant, (*cell, "mean")]
            text = _fmt(mean)
            mark = (
                markers.get((variant, cell[0], cell[1]), "")
                if markers and cell[2] == "bleu"
                else ""
            )
            if multi_seed and text != "–":
                n = int(table.loc[variant, (*cell, "n")])
                if n > 1:
                    text += f" ± {_fmt(table.loc[variant, (*cell, 'sd')])}"
                text += mark + (f" (n={n})" if show_n else "")
            elif text != "–":
                text += mark
            row.append(text)
        rows.append(row)
    if multi_seed:
        seeds = f"{ns.pop()} seeds" if len(ns) == 1 else "n seeds per cell"
        note = f"Mean ± sample standard deviation over {seeds}."
    else:
        note = "One seed per cell."
    return header, rows, note


def _markdown(
    table: pd.DataFrame,
    title: str,
    markers: Mapping[tuple[str, str, str], str] | None = None,
    marker_note: str = "",
) -> str:
    header, rows, note = _display(table, markers)
    lines = [
        f"# {title}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" + "---:|" * (len(header) - 1),
    ]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", note]
    if markers:
        lines.append(marker_note)
    signatures: Mapping[str, list[str]] = table.attrs.get("signatures", {})
    if signatures:
        lines += ["", "sacreBLEU signatures:", ""]
        for metric, sigs in signatures.items():
            for sig in sigs:
                lines.append(f"- {METRIC_NAMES.get(metric, metric)}: `{sig}`")
    return "\n".join(lines) + "\n"


_LATEX_ESCAPES = str.maketrans(
    {"_": r"\_", "%": r"\%", "&": r"\&", "#": r"\#", "±": r"$\pm$", "–": "--"}
)


def _latex(
    table: pd.DataFrame,
    title: str,
    markers: Mapping[tuple[str, str, str], str] | None = None,
    marker_note: str = "",
) -> str:
    """A booktabs ``table`` environment with the same cells as the Markdown
    (markers as superscripts)."""
    header, rows, note = _display(table, markers)

    def cell(text: str) -> str:  # "+" and "−" only ever appear as significance markers
        return re.sub(r"(\+{1,2}|−{1,2})", r"$^{\1}$", text.translate(_LATEX_ESCAPES)).replace(
            "−", "-"
        )

    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}",
        r"\toprule",
        " & ".join(h.translate(_LATEX_ESCAPES) for h in header) + r" \\",
        r"\midrule",
    ]
    lines += [" & ".join(cell(c) for c in row) + r" \\" for row in rows]
    caption = " ".join(x for x in (title, note, marker_note if markers else "") if x)
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{caption.translate(_LATEX_ESCAPES)}}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


def _tidy(table: pd.DataFrame) -> pd.DataFrame:
    """Wide results table -> one row per (variant, pair, testset, metric)."""
    stacked = table.stack(level=["pair", "testset", "metric"], future_stack=True)
    stacked = stacked[stacked["mean"].notna()].reset_index()  # cells without results
    stacked.columns.name = None
    cols = ["variant", "pair", "testset", "metric"] + [
        s for s in ("mean", "sd", "n") if s in stacked.columns
    ]
    out = stacked[cols]
    if "n" in out.columns:
        out = out.astype({"n": int})
    return out


def write_table(
    df: pd.DataFrame,
    csv_path: Path,
    md_path: Path,
    title: str,
    markers: Mapping[tuple[str, str, str], str] | None = None,
    marker_note: str = "",
    tex_path: Path | None = None,
) -> None:
    """Write a :func:`results_table` as CSV and Markdown (both atomic).

    The CSV is tidy and numeric: columns ``variant, pair, testset, metric, mean`` (+ ``sd``,
    ``n`` with several seeds), full precision. The Markdown has one row per variant, one
    column per (pair, testset, metric), values ``mean ± sd`` to one decimal, and the
    sacreBLEU signatures under the table. ``markers`` (from :func:`run_level_markers`) are
    appended to the BLEU cells, with ``marker_note`` saying what they mean. With ``tex_path`` also
    a LaTeX (booktabs) table of the same cells.
    """
    if not isinstance(df.columns, pd.MultiIndex) or "stat" not in (df.columns.names or []):
        raise TypeError("write_table expects the output of results_table")
    tidy = _tidy(df)
    with atomic_open(csv_path) as f:
        tidy.to_csv(f, index=False, lineterminator="\n")
    with atomic_open(md_path) as f:
        f.write(_markdown(df, title, markers, marker_note))
    if tex_path is not None:
        with atomic_open(tex_path) as f:
            f.write(_latex(df, title, markers, marker_note))
