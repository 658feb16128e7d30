"""Results tables: scores JSON files -> mean (± sd) over seeds per variant.

:func:`collect_scores` reads the JSON files written by
:func:`wordorder.evaluate.scores.write_scores` into one row each; :func:`results_table`
averages over seeds with variants as rows and ``(pair, testset, metric, stat)`` columns;
:func:`~wordorder.evaluate.table_render.write_table` writes it out. :func:`run_level_markers`
marks each system against the baseline by a test over the training runs (docs/algorithms.md
§SIG-SEEDS).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from wordorder.errors import WordorderError
from wordorder.evaluate.scores import read_scores

__all__ = [
    "collect_scores",
    "RunLevelMarkers",
    "run_level_markers",
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
    "bleu_closest": "BLEU (closest ref.)",
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


Key = tuple[str, str, str]  # (variant, pair, testset)


@dataclass(frozen=True)
class RunLevelMarkers:
    """The markers of one table (:func:`run_level_markers`): ``markers[(variant, pair,
    testset)]`` is "+"/"++"/"−"/"−−" or "" for every non-baseline row; ``p`` and ``p_holm`` the
    raw and Holm-adjusted p of the rows with a test; ``untested`` the rows where the system or
    the baseline has fewer than 2 runs (no run-level test, no marker)."""

    baseline: str
    markers: dict[Key, str] = field(default_factory=dict)
    p: dict[Key, float] = field(default_factory=dict)
    p_holm: dict[Key, float] = field(default_factory=dict)
    untested: list[Key] = field(default_factory=list)

    def note(self) -> str:
        """What the markers mean, for the line under the table ("" when no row has a test)."""
        if not self.p and not self.untested:
            return ""
        rows, n = len(self.p), len(self.untested)
        if not rows:
            return (
                f"No BLEU markers: one run: no run-level test against {self.baseline} "
                f"({n} row{'' if n == 1 else 's'})."
            )
        text = (
            f"BLEU +/++ (−/−−): better (worse) than {self.baseline} at Holm-adjusted "
            f"p < 0.05 / 0.01; run-level Welch t (Hsu df) against {self.baseline}, Holm over "
            f"the {rows} row{'' if rows == 1 else 's'}"
        )
        if self.untested:
            text += (
                f"; one run: no run-level test ({n} row{'' if n == 1 else 's'} unmarked, "
                "not among Holm's rows)"
            )
        return text + "."


def run_level_markers(
    scores: pd.DataFrame,
    baseline: str,
    variants: Sequence[str] | None = None,
    metric: str = "bleu",
) -> RunLevelMarkers:
    """Each system's marker against ``baseline`` from a test with the training run as the unit.

    A row of the table is one non-baseline system on one (pair, test set). Its test is the
    claim's test of :func:`wordorder.evaluate.seed_stats.seed_level_p`: Welch's t over the two
    systems' per-run corpus scores (one per seed, ``metric``) with Hsu's df, min(n_A, n_B) − 1.
    The p of every row with a test are Holm-adjusted together (the table's family);
    "+"/"−" at an adjusted p < 0.05, "++"/"−−" at < 0.01, by the sign of the difference of the
    means. A row where either system has fewer than 2 runs has no run-level test and no marker.

    Args:
        scores: from :func:`collect_scores` (columns variant, pair, testset and ``metric``).
        baseline: the common baseline; absent from ``scores``: no markers at all.
        variants: the table's systems (default: every variant in ``scores``).
    """
    from wordorder.evaluate.seed_stats import holm, welch
    from wordorder.evaluate.significance import marker

    out = RunLevelMarkers(baseline)
    if scores.empty or baseline not in set(scores["variant"]):
        return out
    keep = ordered_unique(list(scores["variant"])) if variants is None else list(variants)
    values = pd.to_numeric(scores[metric], errors="coerce")
    runs = {
        key: [float(v) for v in group.dropna()]
        for key, group in values.groupby(
            [scores["variant"], scores["pair"], scores["testset"]], sort=False
        )
    }
    deltas: dict[Key, float] = {}
    for variant, pair, testset in runs:
        if variant == baseline or variant not in keep:
            continue
        key = (variant, pair, testset)
        a, b = runs[key], runs.get((baseline, pair, testset), [])
        if not b:  # no baseline on this test set: nothing to test against
            continue
        if min(len(a), len(b)) < 2:
            out.untested.append(key)
            out.markers[key] = ""
            continue
        out.p[key] = welch(a, b, "min").p
        deltas[key] = sum(a) / len(a) - sum(b) / len(b)
    out.p_holm.update(zip(out.p, holm(list(out.p.values())), strict=True))
    for key, p in out.p_holm.items():
        out.markers[key] = marker(p, deltas[key])
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
