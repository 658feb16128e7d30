"""The ``preorder_quality`` table of a pair: Kendall tau and FRS of every preorder, per split.

Rows are the methods between the floor (``identity``, the source order itself) and the ceiling
(``gold``, the order read off the alignment); columns are, per split, the normalised Kendall
tau, the fuzzy reordering score and the share of complete matches, all against the
alignment-induced order (:mod:`wordorder.preorder.metrics`). A PNG shows the distribution of
per-sentence tau of each method on each split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from wordorder.io import atomic_open, atomic_paths, write_json
from wordorder.preorder.metrics import OrderScores, score_orders
from wordorder.preorder.permutation import read_permutations
from wordorder.preorder.runner import read_links, read_tokens

#: Display order: the floor first, the ceiling last.
METHOD_ORDER = ("identity", "btg", "rvnn", "gold")


def _sort_methods(methods: Sequence[str]) -> list[str]:
    rank = {m: i for i, m in enumerate(METHOD_ORDER)}
    return sorted(methods, key=lambda m: (rank.get(m, len(rank) - 0.5), m))


def evaluate_split(tok: Path, align: Path, perms: Mapping[str, Path]) -> dict[str, OrderScores]:
    """Scores of the identity order and of each method's ``.perm`` file on one split."""
    tokens = read_tokens(tok)
    lengths = [len(t) for t in tokens]
    links = read_links(align, tokens)
    found = {"identity": [np.arange(n) for n in lengths]}
    found.update({m: read_permutations(p, lengths) for m, p in perms.items()})
    return {m: score_orders(found[m], links, lengths) for m in _sort_methods(list(found))}


def quality_table(results: Mapping[str, Mapping[str, OrderScores]]) -> pd.DataFrame:
    """Methods × (split, metric): tau, tau_eq7, FRS, complete match (CM)."""
    rows: dict[str, dict] = {}
    for split, by_method in results.items():
        for method, scores in by_method.items():
            s = scores.summary()
            row = rows.setdefault(method, {})
            row[(split, "tau")], row[(split, "tau_eq7")] = s["tau"], s["tau_eq7"]
            row[(split, "FRS")], row[(split, "CM")] = s["frs"], s["complete_match"]
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns, names=["split", "metric"])
    return table.loc[_sort_methods(list(rows))]


def _markdown(table: pd.DataFrame, title: str, counts: Mapping[str, dict]) -> str:
    head = ["method"] + [f"{split} {metric}" for split, metric in table.columns]
    lines = [f"# {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method, row in table.iterrows():
        lines.append("| " + " | ".join([method] + [f"{v:.3f}" for v in row.to_numpy()]) + " |")
    lines += [
        "",
        "tau: normalised Kendall tau in [0, 1] (ties are not errors), tau_eq7: Kendall tau in "
        "[-1, 1] as Kawara et al. 2021 Eq. 7 (ties count against; the scale of their Tables "
        "II-III), FRS: fuzzy reordering score, CM: share of sentences in exactly the alignment's "
        "order; all against the order induced by the word alignment (min/max rank relation, "
        "unaligned words removed).",
        "",
    ]
    for split, c in counts.items():
        lines.append(
            f"- {split}: {c['scored']} of {c['sentences']} sentences scored "
            f"({c['skipped_incomparable']} skipped: incomparable alignment ranks)"
        )
    return "\n".join(lines) + "\n"


def plot_quality(
    results: Mapping[str, Mapping[str, OrderScores]], title: str, out_png: Path
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    splits = list(results)
    fig, axes = plt.subplots(
        1, len(splits), figsize=(4.2 * len(splits), 3.6), squeeze=False, sharey=True
    )
    for ax, split in zip(axes[0], splits):
        methods = list(results[split])
        data = [results[split][m].tau[results[split][m].scored] for m in methods]
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(range(1, len(methods) + 1), methods)
        ax.set_title(split)
        ax.set_ylim(-0.02, 1.02)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("Kendall τ per sentence (normalised)")
    fig.suptitle(title)
    fig.tight_layout()
    with atomic_paths(out_png) as (tmp,):
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)


def preorder_report(
    pair: str,
    splits: Mapping[str, tuple[Path, Path, Mapping[str, Path]]],
    out_json: Path,
    out_csv: Path,
    out_md: Path,
    out_png: Path,
) -> pd.DataFrame:
    """Evaluate every split (``{split: (tok, align, {method: perm})}``) and write the
    table, JSON and figure."""
    results = {
        split: evaluate_split(tok, align, perms) for split, (tok, align, perms) in splits.items()
    }
    table = quality_table(results)
    counts = {split: next(iter(r.values())).summary() for split, r in results.items()}
    title = f"Preorder quality, {pair}"
    with atomic_open(out_csv) as f:
        table.to_csv(f, float_format="%.4f")
    with atomic_open(out_md) as f:
        f.write(_markdown(table, title, counts))
    write_json(
        out_json,
        {
            "pair": pair,
            "splits": {s: {m: sc.summary() for m, sc in r.items()} for s, r in results.items()},
        },
    )
    plot_quality(results, title, out_png)
    return table
