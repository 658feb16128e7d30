"""Figures: training curves from the JSON-lines metric logs, and BLEU lines per system."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.io import atomic_paths, iter_lines

__all__ = ["read_metric_log", "plot_training_curves", "plot_bleu_lines"]


def read_metric_log(path: Path) -> list[dict[str, Any]]:
    """The records of a finished training's JSON-lines metric log (blank lines skipped).

    Raises:
        WordorderError: the file is missing, a line is not a JSON object (naming the line), or
        the log has no ``summary`` record (the last line the training writes): a log cut at a
        line boundary would otherwise build tables of part of a run without a word.
    """
    path = Path(path)
    records: list[dict[str, Any]] = []
    for number, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise WordorderError(f"not valid JSON ({e.msg})", path=path, line=number) from None
        if not isinstance(rec, dict):
            raise WordorderError("each line must be a JSON object", path=path, line=number)
        records.append(rec)
    if not any(isinstance(r.get("summary"), dict) for r in records):
        raise WordorderError(
            f"no summary line after {len(records)} records: the training did not finish, or the "
            "file was cut",
            path=path,
            hint="rerun the training (snakemake reruns it once the file is deleted; a resumable "
            "run continues from its saved state)",
        )
    return records


def _series(records: list[dict[str, Any]], key: str) -> tuple[list[float], list[float]]:
    points: dict[float, float] = {}
    for rec in records:
        step, value = rec.get("step"), rec.get(key)
        if isinstance(step, bool) or isinstance(value, bool):
            continue
        if (
            isinstance(step, (int, float))
            and isinstance(value, (int, float))
            and math.isfinite(value)
        ):
            points[float(step)] = float(value)  # a resumed run may repeat steps: keep the last
    xs = sorted(points)
    return xs, [points[x] for x in xs]


def plot_training_curves(metric_logs: Mapping[str, Path], out_png: Path) -> None:
    """Plot train loss and dev BLEU against step, one line per run label (atomic PNG).

    Args:
        metric_logs: label (e.g. ``"en-ja transformer_small seed1"``) -> JSON-lines log with
            ``step`` and, on some lines, ``train_loss`` / ``dev_bleu``.
        out_png: the PNG to write.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    if not metric_logs:
        raise WordorderError("no metric logs to plot")
    runs = {label: read_metric_log(Path(p)) for label, p in metric_logs.items()}

    fig, (ax_loss, ax_bleu) = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    panels = (
        (ax_loss, "train_loss", "Training loss", "loss (cross-entropy)"),
        (ax_bleu, "dev_bleu", "Dev BLEU", "BLEU"),
    )
    colors = plt.rcParams["axes.prop_cycle"].by_key().get("color", [None])
    for ax, key, title, ylabel in panels:
        drawn = 0
        for i, (label, records) in enumerate(runs.items()):
            xs, ys = _series(records, key)
            if not xs:
                continue
            style = dict(color=colors[i % len(colors)], label=label, linewidth=1.6)
            if len(xs) < 30:
                style.update(marker="o", markersize=3.5)
            ax.plot(xs, ys, **style)
            drawn += 1
        ax.set_title(title)
        ax.set_xlabel("training step")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        if drawn:
            ax.legend(fontsize="small", loc="best", frameon=True)
        else:
            ax.text(
                0.5,
                0.5,
                f"no {key} values",
                ha="center",
                va="center",
                transform=ax.transAxes,
                color="gray",
            )
    ax_loss.ticklabel_format(axis="x", style="sci", scilimits=(-3, 5))
    ax_bleu.ticklabel_format(axis="x", style="sci", scilimits=(-3, 5))

    out_png = Path(out_png)
    try:
        with atomic_paths(out_png) as (tmp,):
            fig.savefig(tmp, format="png", dpi=120)
    finally:
        plt.close(fig)


def plot_bleu_lines(
    x: Sequence[float],
    series: Mapping[str, Sequence[float]],
    out_png: Path,
    *,
    title: str,
    xlabel: str,
    xticks: Sequence[str] | None = None,
) -> None:
    """BLEU against ``x``, one marked line per system (atomic PNG);
    ``xticks`` labels the x values."""
    plot_line_panels(x, [("BLEU", series)], out_png, title=title, xlabel=xlabel, xticks=xticks)


def plot_line_panels(
    x: Sequence[float],
    panels: Sequence[tuple[str, Mapping[str, Sequence[float]]]],
    out_png: Path,
    *,
    title: str,
    xlabel: str,
    xticks: Sequence[str] | None = None,
) -> None:
    """Panels stacked over one shared x axis (e.g. BLEU and Kendall τ by source length), each
    a (y label, name → values) pair with one marked line per name (atomic PNG)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        len(panels), 1, figsize=(7, 1.2 + 2.8 * len(panels)), sharex=True, squeeze=False
    )
    for ax, (ylabel, series) in zip(axes[:, 0], panels):
        for name, values in series.items():
            ax.plot(list(x), list(values), marker="o", label=name)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    if xticks is not None:
        axes[-1, 0].set_xticks(list(x), list(xticks))
    axes[-1, 0].set_xlabel(xlabel)
    axes[0, 0].set_title(title)
    fig.tight_layout()
    with atomic_paths(out_png) as (tmp,):
        fig.savefig(tmp, format="png", dpi=120)
    plt.close(fig)
