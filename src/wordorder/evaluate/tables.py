"""Results tables: scores JSON files -> mean (± sd) over seeds per variant.

:func:`collect_scores` reads the JSON files written by
:func:`wordorder.evaluate.scores.write_scores` into one row each; :func:`results_table`
averages over seeds with variants as rows and ``(pair, testset, metric, stat)`` columns;
:func:`~wordorder.evaluate.table_render.write_table` writes it out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from wordorder.errors import WordorderError
from wordorder.evaluate.scores import read_scores

__all__ = [
    "collect_scores",
    "collect_significance",
    "significance_markers",
    "results_table",
    "ordered_unique",
    "KEY_COLUMNS",
    "METRIC_NAMES",
]

#: Meta fields that identify one result; (variant, pair, testset, seed) must be unique.
KEY_COLUMNS = ("variant", "pair", "testset", "seed")

#: Display names for metrics in Markdown tables.
METRIC_NAMES = {
    "bleu": "BLEU",
    "chrf": "chrF",
    "bleu_tok": "BLEU (tok)",
    "ribes": "RIBES",
    "nkt": "NKT",
    "under_generation": "under-gen./sent.",
    "over_generation": "over-gen./sent.",
    "ter_tok": "TER (tok)",
    "p1": "1-gram prec.",
    "p2": "2-gram prec.",
    "p3": "3-gram prec.",
    "p4": "4-gram prec.",
}


def collect_scores(paths: Sequence[Path]) -> pd.DataFrame:
    """One row per scores JSON file: the ``meta`` fields, then the scores, then ``path``.

    Nested score dicts are flattened one level (``bleu_detail`` -> ``bleu_detail.bp``, ...).

    Raises:
        WordorderError: a file is missing or invalid, or a meta field clashes with a score.
    """
    rows: list[dict[str, Any]] = []
    for p in paths:
        p = Path(p)
        doc = read_scores(p)
        meta = doc.pop("meta", {})
        row: dict[str, Any] = dict(meta)
        for key, value in doc.items():
            if key in row:
                raise WordorderError(
                    f"meta field {key!r} clashes with a score of the same name", path=p
                )
            if isinstance(value, Mapping):
                for sub, v in value.items():
                    row[f"{key}.{sub}"] = v
            else:
                row[key] = value
        row["path"] = str(p)
        rows.append(row)
    return pd.DataFrame(rows)


def collect_significance(paths: Sequence[Path]) -> pd.DataFrame:
    """One row per significance JSON (``wordorder significance``): meta fields, ``p_bootstrap``,
    ``p_sign``, ``n_plus``, ``n_minus``, ``baseline``."""
    rows = []
    for p in paths:
        doc = read_scores(Path(p))
        meta = doc.get("meta", {})
        rows.append(
            {
                **meta,
                "p_bootstrap": doc["bootstrap"]["p"],
                "p_sign": doc["sign"]["p"],
                "delta": doc["sign"]["delta"],
                "n_plus": doc["sign"]["n_plus"],
                "n_minus": doc["sign"]["n_minus"],
            }
        )
    return pd.DataFrame(rows)


def significance_markers(
    sig: pd.DataFrame, test: str = "bootstrap"
) -> dict[tuple[str, str, str], str]:
    """``{(variant, pair, testset): "+" | "++" | ""}`` from the p of ``test`` (bootstrap or sign).

    "+"/"++" mark a system better than the baseline, "−"/"−−" a worse one. With several seeds a
    cell is marked only as strongly as its weakest seed (the largest p), and not at all when the
    seeds disagree on the direction, so a marker never rests on the luckiest run.
    """
    from wordorder.evaluate.significance import marker

    if sig.empty:
        return {}
    groups = sig.groupby(["variant", "pair", "testset"], sort=False)
    worst, deltas = groups[f"p_{test}"].max(), groups["delta"].agg(list)
    out = {}
    for key, p in worst.items():
        # seeds disagreeing on the direction: no marker
        signs = {d > 0 for d in deltas[key] if d != 0}
        out[key] = marker(float(p), 1.0 if signs == {True} else -1.0 if signs == {False} else 0.0)
    return out


def ordered_unique(values: Sequence[Any]) -> list[Any]:
    seen: dict[Any, None] = {}
    for v in values:
        seen.setdefault(v, None)
    return list(seen)


def results_table(
    df: pd.DataFrame,
    metrics: Sequence[str] = ("bleu", "chrf"),
    variants: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Mean over seeds per variant, for every (pair, testset, metric).

    Args:
        df: from :func:`collect_scores`; needs columns variant, pair, testset, seed and the
            metrics.
        metrics: score columns to show, in this order.
        variants: row order (and selection); default: order of first appearance.

    Returns:
        Rows indexed by variant; columns a MultiIndex ``(pair, testset, metric, stat)`` where
        stat is ``mean``, plus ``sd`` (sample standard deviation, ddof=1) and ``n`` (number
        of seeds) when some cell has more than one seed. Pairs and test sets keep their order
        of first appearance. ``table.attrs["signatures"]`` maps each metric to the distinct
        sacreBLEU signatures behind it, for :func:`~wordorder.evaluate.table_render.write_table`.

    Raises:
        WordorderError: missing columns, an unknown variant, or two results for the same
            (variant, pair, testset, seed).
    """
    metrics = list(metrics)
    if not metrics:
        raise WordorderError("no metrics to tabulate")
    if df.empty:
        raise WordorderError("no scores to tabulate", hint="check the list of scores files")
    missing = [c for c in (*KEY_COLUMNS, *metrics) if c not in df.columns]
    if missing:
        raise WordorderError(
            f"scores lack the field(s) {', '.join(missing)}",
            hint="meta must hold variant, pair, testset and seed; metrics must be score names",
        )
    dup = df.duplicated(subset=list(KEY_COLUMNS), keep=False)
    if dup.any():
        first = df[dup].iloc[0]
        where = ", ".join(f"{k}={first[k]!r}" for k in KEY_COLUMNS)
        paths = list(df[dup]["path"]) if "path" in df.columns else []
        raise WordorderError(
            f"more than one result for {where}"
            + (f" ({', '.join(map(str, paths[:3]))})" if paths else ""),
            hint="give exactly one scores file per variant, pair, test set and seed",
        )

    present = ordered_unique(list(df["variant"]))
    if variants is None:
        variants = present
    else:
        variants = list(variants)
        unknown = [v for v in variants if v not in present]
        if unknown:
            raise WordorderError(
                f"no scores for variant(s) {', '.join(map(str, unknown))}",
                hint=f"variants with scores: {', '.join(map(str, present))}",
            )
    df = df[df["variant"].isin(variants)]
    pairs = ordered_unique(list(df["pair"]))
    testsets = ordered_unique(list(df["testset"]))

    long = df.melt(
        id_vars=list(KEY_COLUMNS), value_vars=metrics, var_name="metric", value_name="value"
    )
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    grouped = long.groupby(["variant", "pair", "testset", "metric"], sort=False)["value"]
    stats = grouped.agg(mean="mean", sd=lambda s: s.std(ddof=1), n="count")
    multi_seed = bool((stats["n"] > 1).any())
    stat_names = ["mean", "sd", "n"] if multi_seed else ["mean"]

    columns = [
        (pair, testset, metric, stat)
        for pair in pairs
        for testset in testsets
        if ((df["pair"] == pair) & (df["testset"] == testset)).any()
        for metric in metrics
        for stat in stat_names
    ]
    table = pd.DataFrame(
        index=pd.Index(variants, name="variant"),
        columns=pd.MultiIndex.from_tuples(columns, names=["pair", "testset", "metric", "stat"]),
        dtype=float,
    )
    for (variant, pair, testset, metric), row in stats.iterrows():
        for stat in stat_names:
            table.loc[variant, (pair, testset, metric, stat)] = row[stat]
    if multi_seed:
        for col in table.columns:
            if col[3] == "n":
                table[col] = table[col].fillna(0).astype(int)

    signatures: dict[str, list[str]] = {}
    for metric in metrics:
        col = f"{metric}_signature"
        if col in df.columns:
            sigs = [s for s in ordered_unique(list(df[col])) if isinstance(s, str) and s]
            if sigs:
                signatures[metric] = sigs
    table.attrs["signatures"] = signatures
    table.attrs["metrics"] = metrics
    return table
