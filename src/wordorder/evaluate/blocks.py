"""The paired analysis of a block design (docs/algorithms.md §SIG-SEEDS): run s of the system
and run s of the baseline form block s (the same seed, trained side by side on one machine), so
what a machine or a seed adds to both cancels in their difference.

With n blocks and differences d_s = score_A,s − score_B,s, the claim's test is the paired t:
t = mean(d) / (sd(d)/√n) with n − 1 df, exact for normal differences whatever the two systems'
spreads (each block contributes one difference, so unequal spreads are no concern, unlike two
groups of runs). Its interval adds the test-sentence sampling variance once, as the unpaired
one does (:func:`wordorder.evaluate.seed_interval.welch_interval`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wordorder.errors import WordorderError
from wordorder.evaluate.seed_stats import ALPHA, POWER, Scores
from wordorder.evaluate.tdist import t_quantile, t_two_sided_p

__all__ = ["PairedResult", "blocks_for_power", "paired_interval", "paired_mde", "paired_t"]


@dataclass(frozen=True)
class PairedResult:
    """The paired t over ``n`` blocks: the mean difference, the differences' sd, t, df, p."""

    mean: float
    sd: float
    n: int
    t: float
    df: int
    p: float


def paired_t(a: Scores, b: Scores) -> PairedResult:
    """The paired t-test of a[s] − b[s] over the blocks s (equal lengths, at least 2)."""
    xa, xb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if xa.shape != xb.shape or xa.ndim != 1 or len(xa) < 2:
        raise WordorderError(
            f"a paired test needs two equal lists of at least 2 runs, not {xa.shape}, {xb.shape}",
            hint="train both systems at the same seeds (a block is one seed of each)",
        )
    d = xa - xb
    n, mean, sd = len(d), float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:
        t = math.copysign(math.inf, mean) if mean else 0.0
        return PairedResult(mean, sd, n, t, n - 1, float(not mean))
    t = mean / (sd / math.sqrt(n))
    return PairedResult(mean, sd, n, t, n - 1, float(t_two_sided_p(t, n - 1)))


def paired_interval(
    result: PairedResult, sentence_var: float = 0.0, level: float = 0.95
) -> tuple[float, float]:
    """mean(d) ± t_{(1+level)/2, df}·√(sd(d)²/n + sentence_var), df = n − 1 raised by
    Satterthwaite's rule for the sentence term taken as exact (as the unpaired interval)."""
    runs = result.sd**2 / result.n
    total = runs + sentence_var
    df = (result.n - 1) * (total / runs) ** 2 if runs > 0 else 1e9
    half = float(t_quantile((1 + level) / 2, df)) * math.sqrt(total)
    return result.mean - half, result.mean + half


def paired_mde(
    sd: float, n: int, alpha: float = ALPHA, power: float = POWER, claims: int = 1
) -> float:
    """(t_{1−α/(2m), n−1} + t_{power, n−1})·sd/√n: the smallest mean difference the paired
    test finds with ``power`` at α/m, given the sd of the blocks' differences."""
    if n < 2:
        raise WordorderError(f"a paired test needs at least 2 blocks, not {n}")
    df = n - 1
    q = float(t_quantile(1 - alpha / (2 * claims), df)) + float(t_quantile(power, df))
    return q * sd / math.sqrt(n)


def blocks_for_power(
    delta: float, sd: float, alpha: float = ALPHA, power: float = POWER, claims: int = 1
) -> int:
    """The fewest blocks (≥ 2) whose :func:`paired_mde` is at most |delta|."""
    if delta == 0 or not math.isfinite(delta) or not sd >= 0:
        raise WordorderError(f"no number of blocks detects {delta} at a differences' sd of {sd}")
    n = 2
    while paired_mde(sd, n, alpha, power, claims) > abs(delta):
        n += 1
    return n
