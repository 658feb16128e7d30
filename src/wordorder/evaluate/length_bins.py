"""BLEU by source-sentence length (Chen 2018 Figs 5-8, Chen 2020 Fig 4, Zhang 2018 Fig 3,
Kawara 2021 Figs 7-10): the test set cut into bins of source length, corpus BLEU per bin.

Lengths are counted in tokens of the pipeline's source tokenization; a bin ``(a, b]`` holds the
sentences with a < length ≤ b, the last bin is open (``> last edge``). Each bin's BLEU is
sacreBLEU corpus BLEU over that bin's sentences, with the target language's tokenizer.

With preorders (Kawara 2021 Figs 7-10), each bin also gets the mean Kendall τ of each source
order against the test set's word alignment (``identity`` = no preordering, then each method),
over the bin's sentences whose alignment ranks are comparable (as in the preorder table).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from wordorder.errors import WordorderError
from wordorder.evaluate.plots import plot_line_panels
from wordorder.io import atomic_open

if TYPE_CHECKING:
    import numpy as np

DEFAULT_EDGES = (10, 20, 30, 40, 50)


def bin_labels(edges: Sequence[int]) -> list[str]:
    """``[0, 10, 20]`` style edges → ``["1-10", "11-20", ">20"]`` (with a
    first edge of 0 implied)."""
    edges = list(edges)
    if not edges or any(b <= a for a, b in zip([0, *edges], edges)):
        raise WordorderError(f"length bin edges must rise from above 0, got {edges}")
    lows = [0, *edges[:-1]]
    return [f"{a + 1}-{b}" for a, b in zip(lows, edges)] + [f">{edges[-1]}"]


def bin_index(length: int, edges: Sequence[int]) -> int:
    for i, edge in enumerate(edges):
        if length <= edge:
            return i
    return len(edges)


def bleu_by_length(
    sources: Sequence[str],
    systems: Mapping[str, Sequence[str]],
    refs: Sequence[str],
    tokenize: str,
    edges: Sequence[int] = DEFAULT_EDGES,
) -> pd.DataFrame:
    """One row per length bin: ``bin``, ``sentences`` and the BLEU of every system.

    Args:
        sources: tokenized source lines (their token counts pick the bin).
        systems: name → detokenized hypotheses, line-aligned with ``refs``.
        refs: detokenized references.
        tokenize: the sacreBLEU tokenizer of the target language.
    """
    from sacrebleu.metrics import BLEU

    for name, hyps in systems.items():
        if len(hyps) != len(refs):
            raise WordorderError(
                f"system {name}: {len(hyps)} hypotheses but {len(refs)} references"
            )
    if len(sources) != len(refs):
        raise WordorderError(f"{len(sources)} source lines but {len(refs)} references")
    labels = bin_labels(edges)
    members: list[list[int]] = [[] for _ in labels]
    for i, line in enumerate(sources):
        members[bin_index(len(line.split()), edges)].append(i)
    metric = BLEU(tokenize=tokenize)
    rows = []
    for label, idx in zip(labels, members):
        row: dict = {"bin": label, "sentences": len(idx)}
        for name, hyps in systems.items():
            row[name] = (
                metric.corpus_score([hyps[i] for i in idx], [[refs[i] for i in idx]]).score
                if idx
                else float("nan")
            )
        rows.append(row)
    return pd.DataFrame(rows)


TAU = "tau "  # column prefix of the normalised Kendall τ columns
TAU7 = "tau_eq7 "  # and of Kawara et al.'s Eq. 7 τ in [-1, 1]


def add_tau_by_length(
    table: pd.DataFrame,
    sources: Sequence[str],
    taus: Mapping[str, Sequence[float] | np.ndarray],
    edges: Sequence[int] = DEFAULT_EDGES,
    prefix: str = TAU,
) -> pd.DataFrame:
    """``table`` (of :func:`bleu_by_length`) with a ``<prefix><order>`` column per order: the mean
    of the per-sentence τ (NaN = not comparable) over each bin's sentences."""
    import numpy as np

    bins = np.array([bin_index(len(line.split()), edges) for line in sources])
    out = table.copy()
    for name, given in taus.items():
        values = np.asarray(given, dtype=float)
        if len(values) != len(sources):
            raise WordorderError(
                f"order {name}: {len(values)} τ values for {len(sources)} source lines"
            )
        means = []
        for b in range(len(table)):
            v = values[(bins == b) & ~np.isnan(values)]
            means.append(float(v.mean()) if len(v) else float("nan"))
        out[prefix + name] = means
    return out


def write_length_analysis(
    table: pd.DataFrame, csv_path: Path, md_path: Path, png_path: Path, title: str
) -> None:
    """The table as CSV and Markdown, and a line plot of BLEU per bin (all atomic)."""
    systems = [
        c for c in table.columns if c not in ("bin", "sentences") and not c.startswith((TAU, TAU7))
    ]
    orders = [c for c in table.columns if c.startswith(TAU)]
    orders7 = [c for c in table.columns if c.startswith(TAU7)]
    with atomic_open(csv_path) as f:
        table.to_csv(f, index=False, lineterminator="\n")
    head = (
        systems
        + [f"τ {c[len(TAU) :]}" for c in orders]
        + [f"τ Eq. 7 {c[len(TAU7) :]}" for c in orders7]
    )
    lines = [
        f"# {title}",
        "",
        "| source length | sentences | " + " | ".join(head) + " |",
        "|---|---:|" + "---:|" * len(head),
    ]
    for _, r in table.iterrows():
        cells = ["–" if pd.isna(r[s]) else f"{r[s]:.1f}" for s in systems]
        cells += ["–" if pd.isna(r[c]) else f"{r[c]:.3f}" for c in (*orders, *orders7)]
        lines.append(f"| {r['bin']} | {int(r['sentences'])} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Corpus BLEU (sacreBLEU) of the sentences whose tokenized source length falls in each bin.",
    ]
    if orders:
        lines.append(
            "τ: mean normalised Kendall τ of each source order (identity = no preordering) "
            "against the word alignment of the test set, over the bin's sentences with "
            "comparable alignment ranks."
        )
    if orders7:
        lines.append(
            "τ Eq. 7: the same in [-1, 1] with ties counted against, as Kawara et "
            "al. 2021 Eq. 7 (Figs. 7-10)."
        )
    with atomic_open(md_path) as f:
        f.write("\n".join(lines) + "\n")
    panels = [("BLEU", {name: table[name] for name in systems})]
    if orders:
        panels.append(("Kendall τ", {c[len(TAU) :]: table[c] for c in orders}))
    plot_line_panels(
        range(len(table)),
        panels,
        png_path,
        title=title,
        xlabel="source length (tokens)",
        xticks=[f"{b}\n(n={n})" for b, n in zip(table["bin"], table["sentences"])],
    )
