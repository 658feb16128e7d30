"""Did every training converge? From each run's metric log: where it stopped and why, its best
evaluation, and how much dev BLEU still moved over its last evaluations; plus a figure with one
panel per system (its seeds overlaid), so a reader sees each curve flat at its end.

A run that stopped on patience (``train.patience`` evaluations without a gain in
``train.best_by``) met the stopping rule; that is not convergence, so the table says how much dev
BLEU still moved over each run's last evaluations.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.evaluate.plots import read_metric_log
from wordorder.io import atomic_open, atomic_paths

TAIL = 4  # evaluations over which the end of a curve is judged


def run_summary(
    records: Sequence[Mapping[str, Any]], patience: int | None = None
) -> dict[str, Any]:
    """One run's convergence numbers from its metric log records.

    The stop reason is the training's own (its last ``summary`` record); a log without one (written
    before training logged it) counts as stopped on patience when its last ``patience`` evaluations
    brought no new best.

    Returns:
        ``evals, steps, best_step, stop_reason, best_ppl, last_ppl, best_bleu, max_bleu,
        tail_bleu_change``: ``tail_bleu_change`` = dev BLEU of the last evaluation minus that
        ``TAIL`` evaluations earlier.
    """
    evals = [r for r in records if "dev_bleu" in r and "step" in r]
    if not evals:
        raise WordorderError(
            "the metric log has no dev evaluation", hint="train.eval_every must be below max_steps"
        )
    stop = [
        r["summary"]
        for r in records
        if isinstance(r.get("summary"), dict) and "stop_reason" in r["summary"]
    ]
    best = [r for r in evals if r.get("best")]
    best_rec = best[-1] if best else evals[-1]
    bleus = [float(r["dev_bleu"]) for r in evals]
    tail = bleus[-1] - bleus[-1 - TAIL] if len(bleus) > TAIL else math.nan
    reason = stop[-1]["stop_reason"] if stop else "unknown"
    if not stop and patience and len(evals) - 1 - evals.index(best_rec) >= patience:
        reason = "patience"
    return {
        "evals": len(evals),
        "steps": int(stop[-1].get("steps", evals[-1]["step"])) if stop else int(evals[-1]["step"]),
        "best_step": int(best_rec["step"]),
        "stop_reason": reason,
        "best_ppl": best_rec.get("dev_ppl"),
        "last_ppl": evals[-1].get("dev_ppl"),
        "best_bleu": float(best_rec["dev_bleu"]),
        "max_bleu": max(bleus),
        "tail_bleu_change": tail,
    }


def convergence_table(
    logs: Mapping[tuple[str, str, int], Path], patience: int | None = None
) -> list[dict[str, Any]]:
    """``(pair, variant, seed) -> metrics.jsonl`` to one summary row per run, in the given order."""
    return [
        {"pair": p, "variant": v, "seed": s, **run_summary(read_metric_log(path), patience)}
        for (p, v, s), path in logs.items()
    ]


def convergence_markdown(rows: Sequence[Mapping[str, Any]], title: str) -> str:
    def num(x, fmt):
        return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)

    patient = sum(r["stop_reason"] == "patience" for r in rows)
    tails = [r["tail_bleu_change"] for r in rows if r["tail_bleu_change"] is not None]
    tails = [t for t in tails if not math.isnan(t)]
    # Stopping on patience is a rule, not convergence: say how much dev BLEU still moved.
    moved = (
        f"; dev BLEU still moved by {min(tails):+.2f} to {max(tails):+.2f} over their last "
        f"{TAIL} evaluations (last column)"
        if tails
        else ""
    )
    lines = [
        f"# {title}",
        "",
        (
            f"{patient} of {len(rows)} runs stopped on patience (no gain in the stopping metric "
            f"for the set number of evaluations), the others where their stop says{moved}."
        ),
        "",
        "| pair | system | seed | updates | kept at | stop | dev ppl kept / last "
        f"| dev BLEU kept / max | Δ dev BLEU, last {TAIL} evals |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['pair']} | {r['variant']} | {r['seed']} | {r['steps']} | {r['best_step']} | "
            f"{r['stop_reason']} | {num(r['best_ppl'], '.2f')} / {num(r['last_ppl'], '.2f')} | "
            f"{r['best_bleu']:.2f} / {r['max_bleu']:.2f} | {num(r['tail_bleu_change'], '+.2f')} |"
        )
    return "\n".join(lines) + "\n"


def plot_convergence(
    logs: Mapping[tuple[str, str, int], Path], out_png: Path, key: str = "dev_bleu"
) -> None:
    """One panel per (pair, system): ``key`` against the update, one line per seed, the best
    evaluation of each seed marked (atomic PNG)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    panels: dict[tuple[str, str], list[tuple[int, list[dict[str, Any]]]]] = {}
    for (pair, variant, seed), path in logs.items():
        panels.setdefault((pair, variant), []).append((seed, read_metric_log(path)))
    if not panels:
        raise WordorderError("no metric logs to plot")
    cols = min(4, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(3.4 * cols, 2.5 * rows), squeeze=False, constrained_layout=True
    )
    for ax, ((pair, variant), runs) in zip(axes.flat, panels.items()):
        for seed, records in runs:
            evals = [r for r in records if key in r and "step" in r]
            (line,) = ax.plot(
                [r["step"] for r in evals],
                [r[key] for r in evals],
                linewidth=1.2,
                label=f"seed {seed}",
            )
            best = [r for r in evals if r.get("best")]
            if best:
                ax.plot(
                    [best[-1]["step"]], [best[-1][key]], "o", color=line.get_color(), markersize=4
                )
        ax.set_title(f"{variant} ({pair})", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=6)
    fig.supxlabel("update", fontsize=8)
    fig.supylabel(key.replace("_", " ") + " (dot: the kept checkpoint)", fontsize=8)
    try:
        with atomic_paths(Path(out_png)) as (tmp,):
            fig.savefig(tmp, format="png", dpi=110)
    finally:
        plt.close(fig)


def write_convergence(rows: Sequence[Mapping[str, Any]], md_path: Path, title: str) -> str:
    md = convergence_markdown(rows, title)
    with atomic_open(md_path) as f:
        f.write(md)
    return md
