"""How well a permutation puts the source words into target order: Kendall's tau and FRS.

The reference order comes from the word alignment, with the rank relation of Neubig's
``evaluate_preordering.py`` (docs/algorithms.md §TAU): the target positions A of a word come
before those B of another iff ``min A <= min B and max A <= max B``; equal (min, max) are
ties, and a sentence with two incomparable words (one span strictly nested in the other) is
skipped. Unaligned words are removed from the order before scoring.

- normalised Kendall tau: ``1 - #{i<j: r_i > r_j} / C(m, 2)`` (ties are not errors), in [0, 1];
- Kawara et al. 2021's Eq. 7: ``4 #{i<j: r_i < r_j} / (m (m - 1)) - 1`` in [-1, 1], with a strict
  comparison (a tie counts against), the scale of the paper's Tables II-III; without ties it is
  ``2 tau_n - 1``;
- fuzzy reordering score (Talbot et al. 2011): ``1 - D / (m + 1)``, D = adjacent pairs of
  ``(-1, r_1..r_m, R)`` that are neither equal nor a +1 step, R = the number of rank groups;
- complete match: share of sentences with tau = 1.

Sentences with m <= 1 aligned words score 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def alignment_ranks(links: np.ndarray, n_src: int) -> np.ndarray | None:
    """Dense rank of each source word's target positions; -1 for unaligned words.

    Args:
        links: [L, 2] int (source index, target index).
        n_src: number of source words.

    Returns:
        [n_src] int64 ranks 0..R-1 (equal for tied words), or None if two aligned words are
        incomparable under the min/max relation.

    >>> alignment_ranks(np.array([[0, 2], [1, 0], [2, 1]]), 3).tolist()
    [2, 0, 1]
    """
    links = np.asarray(links, dtype=np.int64).reshape(-1, 2)
    ranks = np.full(n_src, -1, dtype=np.int64)
    if len(links) == 0:
        return ranks
    lo = np.full(n_src, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(n_src, -1, dtype=np.int64)
    np.minimum.at(lo, links[:, 0], links[:, 1])
    np.maximum.at(hi, links[:, 0], links[:, 1])
    aligned = np.flatnonzero(hi >= 0)
    order = aligned[np.lexsort((hi[aligned], lo[aligned]))]
    # Sorted by (min, max), the relation is total iff max never decreases along the order.
    if np.any(np.diff(hi[order]) < 0):
        return None
    new_group = np.r_[True, (np.diff(lo[order]) != 0) | (np.diff(hi[order]) != 0)]
    ranks[order] = np.cumsum(new_group) - 1
    return ranks


def kendall_tau(r: np.ndarray) -> float:
    """Normalised Kendall tau of the rank sequence ``r`` (ties are not errors).

    >>> round(kendall_tau(np.array([2, 0, 1])), 4)
    0.3333
    """
    m = len(r)
    if m <= 1:
        return 1.0
    discordant = np.count_nonzero(np.triu(r[:, None] > r[None, :], k=1))
    return float(1.0 - 2 * discordant / (m * (m - 1)))


def kendall_tau_eq7(r: np.ndarray) -> float:
    """Kawara et al. 2021 Eq. 7 of the rank sequence ``r``: in [-1, 1], ties count against.
    Sentences with m <= 1 words score 1, as under the normalised tau (no pair is out of order).

    >>> round(kendall_tau_eq7(np.array([2, 0, 1])), 4), round(
    ...     kendall_tau_eq7(np.array([0, 1, 0])), 4
    ... )
    (-0.3333, -0.3333)
    """
    m = len(r)
    if m <= 1:
        return 1.0
    ascending = np.count_nonzero(np.triu(r[:, None] < r[None, :], k=1))
    return float(4 * ascending / (m * (m - 1)) - 1.0)


def fuzzy_reordering_score(r: np.ndarray) -> float:
    """FRS of the rank sequence ``r`` with dense ranks 0..R-1.

    >>> fuzzy_reordering_score(np.array([2, 0, 1]))
    0.25
    """
    m = len(r)
    if m <= 1:
        return 1.0
    groups = int(r.max()) + 1
    seq = np.r_[-1, r, groups]
    step = np.diff(seq)
    breaks = np.count_nonzero((step != 0) & (step != 1))
    return float(1.0 - breaks / (m + 1))


def order_ranks(perm: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """The ranks read in the order of ``perm``, unaligned words removed."""
    r = ranks[np.asarray(perm, dtype=np.int64)]
    return r[r >= 0]


@dataclass
class OrderScores:
    """Per-sentence scores of a set of permutations (NaN where the sentence was skipped)."""

    tau: np.ndarray
    frs: np.ndarray
    tau_eq7: np.ndarray

    @property
    def scored(self) -> np.ndarray:
        return ~np.isnan(self.tau)

    def summary(self) -> dict:
        ok = self.scored
        n = int(ok.sum())
        return {
            "sentences": len(self.tau),
            "scored": n,
            "skipped_incomparable": len(self.tau) - n,
            "tau": float(self.tau[ok].mean()) if n else float("nan"),
            "tau_eq7": float(self.tau_eq7[ok].mean()) if n else float("nan"),
            "frs": float(self.frs[ok].mean()) if n else float("nan"),
            "complete_match": float((self.tau[ok] == 1.0).mean()) if n else float("nan"),
        }


def score_orders(
    perms: Sequence[np.ndarray], links: Sequence[np.ndarray], lengths: Sequence[int]
) -> OrderScores:
    """Kendall tau (both scales) and FRS of every permutation against its sentence's alignment.

    Args:
        perms: one permutation per sentence (``reordered[k] = src[perm[k]]``).
        links: [L, 2] (source, target) links per sentence.
        lengths: source length per sentence.
    """
    if not (len(perms) == len(links) == len(lengths)):
        raise ValueError("perms, links and lengths need one entry per sentence")
    tau = np.full(len(perms), np.nan)
    frs = np.full(len(perms), np.nan)
    tau7 = np.full(len(perms), np.nan)
    for k, (perm, lk, n) in enumerate(zip(perms, links, lengths)):
        ranks = alignment_ranks(lk, n)
        if ranks is None:
            continue
        r = order_ranks(perm, ranks)
        tau[k], frs[k], tau7[k] = kendall_tau(r), fuzzy_reordering_score(r), kendall_tau_eq7(r)
    return OrderScores(tau, frs, tau7)
