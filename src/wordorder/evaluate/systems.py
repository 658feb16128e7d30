"""The size and speed columns of the papers' system tables (Chen 2019 Table 1, Chen 2020 Table V).

Per (pair, variant, seed): the number of trainable parameters (tied matrices once; from the
training's summary record), the training speed logged by the training loop (median
``tokens_per_s`` over the logged intervals: non-PAD target tokens per second, evaluation time
excluded), and the decoding speed of the test sets (sentences
over the wall time Snakemake's ``benchmark`` recorded for the translate job). Speeds measured on a
busy machine are not comparable across systems: the benchmark script is the place for that.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from wordorder.errors import WordorderError


def count_parameters(checkpoint: Path) -> int:
    """Trainable parameters of the model in ``checkpoint``, each shared tensor counted once."""
    from wordorder.model_io.checkpoint import load_model
    from wordorder.models.base import trainable_parameters

    model, _ = load_model(checkpoint)
    return trainable_parameters(model)


def _records(metrics_log: Path) -> list[dict]:
    """The JSON records of a training's metrics log, one a line."""
    text = Path(metrics_log).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def logged_parameters(metrics_log: Path) -> int:
    """Trainable parameters from the training's summary record; logs written before the summary
    carried them (2026-11-26) are counted from the ``best.pt`` beside the log."""
    for rec in _records(metrics_log):
        params = rec.get("summary", {}).get("params")
        if isinstance(params, int):
            return params
    checkpoint = Path(metrics_log).with_name("best.pt")
    if not checkpoint.is_file():
        raise WordorderError(
            "the training log has no parameter count and there is no best.pt beside it",
            path=metrics_log,
            hint="train the run again (its summary record then holds the count)",
        )
    return count_parameters(checkpoint)


def training_speed(metrics_log: Path) -> float:
    """Median of the ``tokens_per_s`` records of a training log (NaN without any)."""
    values = [
        float(rec["tokens_per_s"])
        for rec in _records(metrics_log)
        if isinstance(rec.get("tokens_per_s"), (int, float))
    ]
    return statistics.median(values) if values else float("nan")


def benchmark_seconds(tsv: Path) -> float:
    """Wall seconds of a Snakemake ``benchmark:`` file (the mean when it holds repeats)."""
    with open(tsv, encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if not rows or "s" not in rows[0]:
        raise WordorderError("not a Snakemake benchmark file (no 's' column)", path=tsv)
    return statistics.mean(float(r["s"]) for r in rows)


def systems_table(runs: Sequence[dict]) -> pd.DataFrame:
    """One row per run dict (``pair``, ``variant``, ``seed``, ``metrics`` (the training log),
    ``decodes``: [(translated source file, benchmark tsv), ...]) → params,
    train tok/s, decode sent/s."""
    from wordorder.io import read_lines

    rows = []
    for r in runs:
        sentences = sum(len(read_lines(src)) for src, _ in r["decodes"])
        seconds = sum(benchmark_seconds(Path(t)) for _, t in r["decodes"])
        rows.append(
            {
                "pair": r["pair"],
                "variant": r["variant"],
                "seed": r["seed"],
                "params": logged_parameters(Path(r["metrics"])),
                "train_tok_s": training_speed(Path(r["metrics"])),
                "decode_sent_s": sentences / seconds if seconds > 0 else float("nan"),
            }
        )
    return pd.DataFrame(rows)


def systems_markdown(table: pd.DataFrame, baseline: str, title: str) -> str:
    """Mean over seeds per (pair, variant), with the parameter change against ``baseline``."""
    lines = [
        f"# {title}",
        "",
        "| pair | variant | #params | Δ vs baseline | train target tok/s | decode sent/s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    means = table.groupby(["pair", "variant"], sort=False)[
        ["params", "train_tok_s", "decode_sent_s"]
    ].mean()
    for (pair, variant), row in means.iterrows():
        base = (
            means.loc[(pair, baseline), "params"]
            if (pair, baseline) in means.index
            else float("nan")
        )
        delta = f"{100 * (row['params'] / base - 1):+.2f} %" if base == base else "–"
        lines.append(
            f"| {pair} | {variant} | {int(row['params']):,} | {delta} | {row['train_tok_s']:,.0f} "
            f"| {row['decode_sent_s']:.1f} |"
        )
    lines += [
        "",
        "Training speed: median logged target tokens/s; decoding: test sentences per second of "
        "the translate jobs (beam as configured). Jobs that ran beside others are slower: compare "
        "speeds with benchmarks/bench_variants.py.",
    ]
    return "\n".join(lines) + "\n"
