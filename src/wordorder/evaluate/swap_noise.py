"""Swap-noise robustness (Chen et al. 2019, Figs 3-5): BLEU when a share of each test source's
words is randomly swapped.

For a rate r and a sentence of n words, k = round(r·n) positions are drawn (k = 2 when that
rounds to 1: one word cannot be swapped alone) and their words are rotated along a random
cycle, so every drawn word leaves its place and the others stay. The result is a permutation
in the format of the preorders (``reordered[k] = src[perm[k]]``), so the preorder projection
carries it onto the subwords. Draws are seeded per (seed, rate, sentence): reruns and other
systems see the same noisy test set.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from wordorder.errors import WordorderError
from wordorder.evaluate.plots import plot_bleu_lines
from wordorder.io import atomic_open


def swap_permutation(n: int, rate: float, rng: random.Random) -> np.ndarray:
    """A permutation of ``range(n)`` moving round(rate·n) words (at least 2
    when any) along one cycle."""
    if not 0.0 <= rate <= 1.0:
        raise WordorderError(f"a swap rate must be in [0, 1], got {rate}")
    perm = np.arange(n)
    k = min(n, round(rate * n))
    if k == 1:
        k = 2 if n >= 2 else 0
    if k < 2:
        return perm
    # in random order: position chosen[i] takes the word of chosen[i+1]
    chosen = rng.sample(range(n), k)
    perm[chosen] = np.roll(chosen, -1)
    return perm


def swap_permutations(lengths: Sequence[int], percent: int, seed: int) -> list[np.ndarray]:
    """One permutation per sentence for ``percent`` % swapped words."""
    out = []
    for i, n in enumerate(lengths):
        rng = random.Random(f"{seed}-{percent}-{i}")
        out.append(swap_permutation(n, percent / 100.0, rng))
    return out


def swap_noise_table(bleu: Mapping[tuple[str, int], float]) -> pd.DataFrame:
    """``{(variant, percent): BLEU}`` → rows = percent, columns = variants (in first-seen order)."""
    variants = list(dict.fromkeys(v for v, _ in bleu))
    rates = sorted({r for _, r in bleu})
    return pd.DataFrame(
        {v: [bleu.get((v, r), float("nan")) for r in rates] for v in variants},
        index=pd.Index(rates, name="swapped %"),
    )


def write_swap_noise(
    table: pd.DataFrame, csv_path: Path, md_path: Path, png_path: Path, title: str
) -> None:
    """The table as CSV and Markdown and a line plot of BLEU against the swapped share (atomic)."""
    with atomic_open(csv_path) as f:
        table.to_csv(f, lineterminator="\n")
    lines = [
        f"# {title}",
        "",
        "| swapped % | " + " | ".join(table.columns) + " |",
        "|---:|" + "---:|" * len(table.columns),
    ]
    for rate, row in table.iterrows():
        lines.append(f"| {rate} | " + " | ".join(f"{v:.1f}" for v in row) + " |")
    lines += [
        "",
        "sacreBLEU BLEU on the test set whose source sentences have that share of their words "
        "moved (a random cycle over the drawn positions; the same draw for every system).",
    ]
    with atomic_open(md_path) as f:
        f.write("\n".join(lines) + "\n")
    plot_bleu_lines(
        list(table.index),
        {name: table[name] for name in table.columns},
        png_path,
        title=title,
        xlabel="swapped source words (%)",
    )
