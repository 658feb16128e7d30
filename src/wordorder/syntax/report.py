"""What the parse of a pair's source side looks like: counts, fallbacks, tree shape, masks.

The syntax-distance masks of every sentence are computed here in batches (the same batched
function a model's data loader uses) to report how syntax distance relates to linear
distance; the figure shows the mask of one example sentence and both distance histograms.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import torch

from wordorder.io import atomic_paths
from wordorder.syntax.binarize import nonprojective_arcs
from wordorder.syntax.conllu import Sentence, read_conllu
from wordorder.syntax.distance import batch_tree_distances

MAX_BIN = 12  # histogram bins 1..MAX_BIN, the last one open-ended


def distance_histograms(sentences: list[Sentence], batch: int = 512) -> dict:
    """Counts of syntax and linear distances over all word pairs i < j of sentences with trees."""
    trees = [s.heads for s in sentences if s.heads is not None and len(s)]
    syn = np.zeros(MAX_BIN + 1, dtype=np.int64)
    lin = np.zeros(MAX_BIN + 1, dtype=np.int64)
    adjacent_total = adjacent_sum = 0
    for k in range(0, len(trees), batch):
        chunk = trees[k : k + batch]
        lengths = torch.tensor([len(h) for h in chunk])
        heads = torch.zeros(len(chunk), int(lengths.max()), dtype=torch.long)
        for b, h in enumerate(chunk):
            heads[b, : len(h)] = torch.from_numpy(h)
        dist = batch_tree_distances(heads, lengths)  # [B, J, J]
        j = dist.shape[1]
        upper = torch.triu(torch.ones(j, j, dtype=torch.bool), diagonal=1)[None] & (dist >= 0)
        linear = (torch.arange(j)[None, :] - torch.arange(j)[:, None]).expand_as(dist)
        syn += np.bincount(dist[upper].clamp(max=MAX_BIN).numpy(), minlength=MAX_BIN + 1)
        lin += np.bincount(linear[upper].clamp(max=MAX_BIN).numpy(), minlength=MAX_BIN + 1)
        adj = upper & (linear == 1)
        adjacent_total += int(adj.sum())
        adjacent_sum += int(dist[adj].sum())
    return {
        "syntax": syn[1:].tolist(),
        "linear": lin[1:].tolist(),
        "mean_syntax_distance_of_adjacent_words": round(adjacent_sum / adjacent_total, 3)
        if adjacent_total
        else None,
    }


def split_report(conllu: Path, summary: Mapping) -> tuple[dict, list[Sentence]]:
    sents = list(read_conllu(conllu))
    trees = [s.heads for s in sents if s.heads is not None and len(s)]
    report = {
        k: summary[k]
        for k in (
            "backend",
            "has_trees",
            "sentences",
            "tokens",
            "fallbacks",
            "fallback_share",
            "sentences_per_second",
        )
    }
    report["nonprojective_share"] = (
        round(sum(bool(nonprojective_arcs(h)) for h in trees) / len(trees), 4) if trees else None
    )
    report["distances"] = distance_histograms(sents)
    return report, sents


def _example(sents: list[Sentence], max_len: int = 14) -> Sentence | None:
    """The first sentence with a regular parse and 6..max_len tokens."""
    for s in sents:
        if s.heads is not None and not s.fallback and 6 <= len(s) <= max_len:
            return s
    return None


def plot(report: Mapping, example: Sentence | None, title: str, out_png: Path) -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    from wordorder.syntax.distance import tree_distances

    fig, (ax_m, ax_h) = plt.subplots(1, 2, figsize=(13, 5.2), constrained_layout=True)
    if example is not None:
        assert example.heads is not None  # _example picks a parsed sentence
        m = tree_distances(example.heads)
        ax_m.imshow(m, cmap="viridis_r")
        for (i, j), v in np.ndenumerate(m):
            ax_m.text(
                j,
                i,
                str(v),
                ha="center",
                va="center",
                fontsize=7,
                color="white" if v > m.max() / 2 else "black",
            )
        ticks = range(len(example))
        ax_m.set_xticks(ticks, example.forms, rotation=60, fontsize=8)
        ax_m.set_yticks(ticks, example.forms, fontsize=8)
        ax_m.set_title("Syntax-distance mask M of one sentence (edges in the tree)")
    else:
        ax_m.text(
            0.5,
            0.5,
            "no parsed sentence to show",
            ha="center",
            va="center",
            transform=ax_m.transAxes,
        )
    x = np.arange(1, MAX_BIN + 1)
    # the splits look alike: show the first one that has trees (train)
    for split, rep in report["splits"].items():
        hist = rep["distances"]
        if sum(hist["syntax"]):
            ax_h.bar(
                x - 0.2,
                np.array(hist["syntax"]) / sum(hist["syntax"]),
                width=0.4,
                label=f"syntax distance ({split})",
            )
            ax_h.bar(
                x + 0.2,
                np.array(hist["linear"]) / sum(hist["linear"]),
                width=0.4,
                label=f"linear distance |i−j| ({split})",
            )
            break
    ax_h.set_xticks(x, [str(v) for v in x[:-1]] + [f"{MAX_BIN}+"])
    ax_h.set_xlabel("distance between two words")
    ax_h.set_ylabel("share of word pairs")
    ax_h.set_title("Syntax vs linear distance")
    ax_h.grid(True, alpha=0.3)
    if ax_h.lines:
        ax_h.legend(fontsize="small")
    fig.suptitle(title)
    try:
        with atomic_paths(out_png) as (tmp,):
            fig.savefig(tmp, format="png", dpi=110)
    finally:
        plt.close(fig)


def syntax_report(
    pair: str,
    lang: str,
    conllus: Mapping[str, Path],
    summaries: Mapping[str, Path],
    out_json: Path,
    out_png: Path,
) -> dict:
    """Write the JSON report and the figure for the source side of ``pair``; return the report."""
    report: dict = {"pair": pair, "lang": lang, "splits": {}}
    example = None
    for split, path in conllus.items():
        summary = json.loads(Path(summaries[split]).read_text(encoding="utf-8"))
        report["splits"][split], sents = split_report(Path(path), summary)
        example = example or _example(sents)
    plot(report, example, f"{pair}: source ({lang}) syntax", Path(out_png))
    with atomic_paths(out_json) as (tmp,):
        tmp.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return report
