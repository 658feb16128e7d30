"""Statistics with the training run (seed) as the unit of replication
(docs/algorithms.md §SIG-SEEDS).

Clark, Dyer, Lavie & Smith (2011): a test that resamples test sentences while the training runs
stay fixed ignores run-to-run variance and rejects far too often (two systems that differ only
by their seeds look "significantly" different). Every test here treats one run as one
observation: the exact permutation test and Welch's t over the per-run scores (the t
distribution is computed here, scipy is not a dependency), the rule choosing between them, the
two-level bootstrap interval of the difference (runs, then sentences), Holm's adjustment over a
table's claims, the minimal detectable effect, and the verdict of a claim's row.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from wordorder.errors import WordorderError

ALPHA = 0.05
POWER = 0.8
EXACT_LIMIT = 100_000  # enumerate the relabelings up to this many (C(9+9, 9) = 48,620)
MC_RELABELINGS = 20_000  # Monte Carlo relabelings beyond it
WELCH_MIN_RUNS = 8  # both systems with at least this many runs: Welch's t is the claim's test
SEED = 12345  # sacreBLEU's default seed, for every random draw here

Scores = Sequence[float] | np.ndarray  # one score per training run


@dataclass(frozen=True)
class PermutationResult:
    """``extreme`` of ``relabelings`` relabelings were at least as far apart as the observed
    one; ``exact``: all C(n_A + n_B, n_A) were enumerated (else a Monte Carlo sample)."""

    p: float
    extreme: int
    relabelings: int
    exact: bool


@dataclass(frozen=True)
class WelchResult:
    t: float
    df: float
    p: float


def _scores(x: Scores, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim != 1 or len(a) == 0:
        raise WordorderError(f"{name}: one score per training run is needed, got {a.shape}")
    return a


@functools.lru_cache(maxsize=32)
def _combinations(n: int, k: int) -> np.ndarray:
    """Every k-subset of range(n) as rows of indices (cached: simulations reuse a few shapes)."""
    return np.array(list(itertools.combinations(range(n), k)), dtype=np.intp).reshape(-1, k)


def permutation_test(
    a: Scores,
    b: Scores,
    limit: int = EXACT_LIMIT,
    samples: int = MC_RELABELINGS,
    seed: int = SEED,
) -> PermutationResult:
    """Two-sided permutation test of mean(a) − mean(b) over the pooled per-run scores.

    Exact: p = share of the C(n_A + n_B, n_A) relabelings (the observed one included) whose
    |mean_A − mean_B| is at least the observed one. With 3 runs each the smallest p is
    2/20 = 0.1, so three seeds can never be significant at 0.05; 4 + 4 runs reach 2/70.
    Beyond ``limit`` relabelings: ``samples`` random ones (seeded) and p = (1 + extreme) /
    (samples + 1), which keeps the test valid (never below 1/(samples + 1)).
    """
    xa, xb = _scores(a, "system"), _scores(b, "baseline")
    pooled = np.concatenate([xa, xb])
    n, k = len(pooled), len(xa)
    total = pooled.sum()
    observed = abs(xa.mean() - xb.mean())
    tolerance = 1e-9 * (1.0 + observed)  # equal differences computed in another order
    count = math.comb(n, k)
    exact = count <= limit
    if exact:
        sums = pooled[_combinations(n, k)].sum(1)
    else:
        rng = np.random.default_rng(seed)
        sums = rng.permuted(np.broadcast_to(pooled, (samples, n)), axis=1)[:, :k].sum(1)
    extreme = int((np.abs(sums / k - (total - sums) / (n - k)) >= observed - tolerance).sum())
    if exact:
        return PermutationResult(extreme / count, extreme, count, True)
    return PermutationResult((1 + extreme) / (samples + 1), extreme, samples, False)


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz evaluation)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):  # the fraction converges fast on this side
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| ≥ |t|) for Student's t with ``df`` (real) degrees of freedom,
    I_{df/(df+t²)}(df/2, ½)."""
    if math.isinf(t):
        return 0.0
    return min(1.0, betainc(df / 2.0, 0.5, df / (df + t * t)))


def welch_test(
    mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int
) -> WelchResult:
    """Welch's t-test from each system's mean, sample sd (ddof 1) and number of runs.

    From summaries because that is all a published table keeps (docs/findings.md's mean ± sd).
    """
    if n_a < 2 or n_b < 2:
        raise WordorderError(
            f"Welch's t needs two runs of each system, not {n_a} and {n_b}",
            hint="train more seeds, or read the permutation test",
        )
    va, vb = sd_a**2 / n_a, sd_b**2 / n_b
    diff = mean_a - mean_b
    if va + vb == 0.0:  # no spread at all: different exactly when the means differ
        return WelchResult(
            math.copysign(math.inf, diff) if diff else 0.0, math.inf, float(not diff)
        )
    t = diff / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    return WelchResult(t, df, t_two_sided_p(t, df))


def welch(a: Scores, b: Scores) -> WelchResult:
    """Welch's t-test over two lists of per-run scores."""
    xa, xb = _scores(a, "system"), _scores(b, "baseline")
    sd_a, sd_b = (float(x.std(ddof=1)) if len(x) > 1 else 0.0 for x in (xa, xb))
    return welch_test(float(xa.mean()), sd_a, len(xa), float(xb.mean()), sd_b, len(xb))


def seed_level_p(a: Scores, b: Scores) -> tuple[float, str]:
    """The claim's p and its test's name. Both systems with ≥ 8 runs: Welch's t (continuous p;
    the mean of 8 runs is close enough to normal, and the exact test would need Monte Carlo from
    10 + 10 runs on). Fewer: the permutation test, exact and assumption-free at any size."""
    if min(len(a), len(b)) >= WELCH_MIN_RUNS:
        return welch(a, b).p, "Welch"
    result = permutation_test(a, b)
    return result.p, "exact permutation" if result.exact else "Monte Carlo permutation"


def permutation_floor(n_a: int, n_b: int, limit: int = EXACT_LIMIT) -> float:
    """The smallest p :func:`permutation_test` can give: 2/C(n, n_A) for equal counts (the
    observed labeling and its mirror), 1/C(n, n_A) otherwise, 1/(samples + 1) by Monte Carlo."""
    count = math.comb(n_a + n_b, n_a)
    return 1 / (MC_RELABELINGS + 1) if count > limit else min(1.0, (1 + (n_a == n_b)) / count)


def holm(p: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p over the m claims of one table, in the input's order:
    sorted ascending, p_(k) ↦ max_{j ≤ k} min(1, (m − j + 1)·p_(j)). It keeps the chance of
    any false "significant" in the table at α, where 11 claims at 0.05 each would give ~43 %."""
    m = len(p)
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=lambda i: p[i])):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def pooled_sd(a: Scores, b: Scores) -> float | None:
    """The runs' sd pooled over both systems (each around its own mean); None with one run each."""
    xa, xb = _scores(a, "system"), _scores(b, "baseline")
    dof = len(xa) + len(xb) - 2
    if dof < 1:
        return None
    ss = ((xa - xa.mean()) ** 2).sum() + ((xb - xb.mean()) ** 2).sum()
    return float(math.sqrt(ss / dof))


def mde(
    sd: float, n_a: int, n_b: int, alpha: float = ALPHA, power: float = POWER, claims: int = 1
) -> float:
    """Minimal detectable effect (normal approximation, two-sided α/claims: Holm's first step)
    δ = (z_{1−α/(2·claims)} + z_{power})·sd·√(1/n_A + 1/n_B). A difference below it is likely
    missed, so "not detected" says little about effects smaller than δ."""
    z = NormalDist().inv_cdf
    return (z(1 - alpha / (2 * claims)) + z(power)) * sd * math.sqrt(1 / n_a + 1 / n_b)


def two_level_bootstrap(
    stats_a: np.ndarray,
    stats_b: np.ndarray,
    score: Callable[[np.ndarray], np.ndarray],
    samples: int = 1000,
    seed: int = SEED,
    chunk: int = 100,
) -> np.ndarray:
    """Draws of mean_A − mean_B: per draw, the runs of each system resampled with replacement,
    then one set of test-sentence indices shared by every run of the draw; each run's score
    from its summed per-sentence statistics (``stats_a``, ``stats_b``: [runs, N, K]; ``score``:
    [..., K] totals -> [...] scores, e.g. BLEU). The CI: the 2.5 / 97.5 percentiles (:func:`ci95`).
    A sentence draw is a count per sentence: the totals of every run of ``chunk`` draws are one
    matrix product ([chunk, N] @ [N, runs·K])."""
    ra, n, k = stats_a.shape
    rb = stats_b.shape[0]
    if stats_b.shape[1:] != (n, k):
        raise WordorderError(f"statistics of different shapes: {stats_a.shape} and {stats_b.shape}")
    flat = np.concatenate([stats_a, stats_b]).astype(float).transpose(1, 0, 2).reshape(n, -1)
    rng = np.random.default_rng(seed)
    deltas = np.empty(samples)
    for start in range(0, samples, chunk):
        m = min(chunk, samples - start)
        runs_a = rng.integers(ra, size=(m, ra))
        runs_b = rng.integers(rb, size=(m, rb))
        idx = rng.integers(n, size=(m, n)) + n * np.arange(m)[:, None]
        counts = np.bincount(idx.ravel(), minlength=m * n).reshape(m, n).astype(float)
        scores = np.asarray(score((counts @ flat).reshape(m, ra + rb, k)))
        mean_a = np.take_along_axis(scores[:, :ra], runs_a, 1).mean(1)
        mean_b = np.take_along_axis(scores[:, ra:], runs_b, 1).mean(1)
        deltas[start : start + m] = mean_a - mean_b
    return deltas


def ci95(draws: np.ndarray) -> tuple[float, float]:
    return float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5))


def verdict(
    paper_delta: float,
    delta: float,
    p_holm: float,
    ci: tuple[float, float],
    mde_: float | None,
    seed_level: bool = True,
    floor: float = 0.0,
    alpha: float = ALPHA,
) -> str:
    """What a claim's row says.

    Significant after Holm: *reproduced* (the paper's sign and its Δ inside our CI), *same
    sign, smaller* / *larger* (its Δ outside the CI), *opposite* (the other sign). Otherwise
    *not detected (MDE x.xx)*: absence of evidence, at the design's power. A paper Δ of 0
    claims no direction: *difference found* or *no difference detected (MDE x.xx)*. A test
    over one run of each system (``seed_level`` false) sees sentence sampling only, so its
    verdict names that instead of counting as a reproduction. ``floor``: the smallest p the
    test can give with these runs (:func:`permutation_floor`); at α or above no effect of any
    size is detectable, whatever the MDE's normal approximation says: *not detectable*.
    """
    significant = p_holm < alpha and delta != 0
    power = f" (MDE {mde_:.2f})" if mde_ is not None else ""
    if floor >= alpha and not significant:
        power = f" (p ≥ {floor:.2f} with these runs)"
    found = "detectable" if floor >= alpha else "detected"
    if paper_delta == 0:
        text = "difference found" if significant else f"no difference {found}{power}"
    elif not significant:
        text = f"not {found}{power}"
    elif (delta > 0) != (paper_delta > 0):
        text = "opposite"
    elif ci[0] <= paper_delta <= ci[1]:
        text = "reproduced"
    else:
        text = "same sign, " + ("smaller" if abs(delta) < abs(paper_delta) else "larger")
    if seed_level:
        return text
    return f"one run: {text.replace('reproduced', 'same sign')} (sentence sampling only)"
