"""Tests with the training run (seed) as the unit of replication
(docs/algorithms.md §SIG-SEEDS).

Clark, Dyer, Lavie & Smith (2011): a test that resamples test sentences while the training runs
stay fixed ignores run-to-run variance and rejects far too often (two systems that differ only
by their seeds look "significantly" different). Every test here treats one run as one
observation: Welch's t over the per-run scores (the claim's test, the t distribution is in
:mod:`wordorder.evaluate.tdist`), the permutation test of Welch's t (a reported second opinion),
the rule choosing between them, and Holm's adjustment over a table's claims. The interval of
the difference is in :mod:`wordorder.evaluate.seed_interval`, the MDE and power in
:mod:`wordorder.evaluate.power`, the verdicts in :mod:`wordorder.evaluate.verdicts`.

Why Welch's t decides (simulated in ``tests/unit/test_seed_stats_simulation.py``, 4 claims
under Holm, 2,000 families per configuration): with unequal run counts and spreads the
permutation test of the raw difference of means rejects a true null far too often (3 runs of
sd 2 against 16 of sd 0.5: 0.36 at α 0.05), and permuting Welch's t is still liberal at such
extremes, and so is Welch's t-test with Satterthwaite's df at Holm's levels (α/4: 2.1 times
the nominal rate at 3 runs of sd 2 against 16 of sd 0.5). Welch's t with Hsu's conservative df,
min(n_A, n_B) − 1, holds it everywhere on the grid and is the claim's test.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wordorder.errors import WordorderError
from wordorder.evaluate.tdist import betainc, t_two_sided_p

__all__ = [
    "ALPHA",
    "POWER",
    "SEED",
    "PermutationResult",
    "WelchResult",
    "betainc",
    "holm",
    "permutation_floor",
    "permutation_test",
    "pooled_sd",
    "seed_level_p",
    "test_floor",
    "t_two_sided_p",
    "welch",
    "welch_arrays",
    "welch_test",
]

ALPHA = 0.05
POWER = 0.8
EXACT_LIMIT = 100_000  # enumerate the relabelings up to this many (C(9+9, 9) = 48,620)
MC_RELABELINGS = 20_000  # Monte Carlo relabelings beyond it
SEED = 12345  # sacreBLEU's default seed, for every random draw here

Scores = Sequence[float] | np.ndarray  # one score per training run


@dataclass(frozen=True)
class PermutationResult:
    """``extreme`` of ``relabelings`` relabelings had a statistic at least as far from 0 as
    the observed one; ``exact``: all C(n_A + n_B, n_A) were enumerated (else a Monte Carlo
    sample); ``statistic``: "Welch's t" or, with a single run on one side, "difference"."""

    p: float
    extreme: int
    relabelings: int
    exact: bool
    statistic: str = "Welch's t"


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


def _studentised(
    sum_a: np.ndarray, sq_a: np.ndarray, k: int, total: float, total_sq: float, n: int
) -> np.ndarray:
    """|Welch's t| of every relabeling from its group sums and sums of squares ([R] each; the
    other group's from the pooled totals), or |mean_A − mean_B| when a group has one run
    (Welch's t needs two). No spread and equal means: 0; no spread, different means: inf."""
    m = n - k
    mean_a, mean_b = sum_a / k, (total - sum_a) / m
    diff = np.abs(mean_a - mean_b)
    if min(k, m) < 2:
        return diff
    var_a = np.maximum(sq_a - k * mean_a**2, 0.0) / (k - 1)
    var_b = np.maximum((total_sq - sq_a) - m * mean_b**2, 0.0) / (m - 1)
    se = np.sqrt(var_a / k + var_b / m)
    scale = 1e-12 * (1.0 + np.abs(mean_a) + np.abs(mean_b))  # rounding-level spread is none
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > scale, diff / np.where(se > scale, se, 1.0), np.inf)
    return np.where(diff <= scale, 0.0, t)


def permutation_test(
    a: Scores,
    b: Scores,
    limit: int = EXACT_LIMIT,
    samples: int = MC_RELABELINGS,
    seed: int = SEED,
) -> PermutationResult:
    """Two-sided permutation test of Welch's t over the pooled per-run scores.

    Exact: p = share of the C(n_A + n_B, n_A) relabelings (the observed one included) whose
    |t| is at least the observed one. The statistic is studentised, not the raw difference of
    means: with unequal run counts and spreads the raw difference rejects far too often (3 runs
    of sd 2 against 16 of sd 0.5: 0.36 at α 0.05; Welch's t: about 0.10, still liberal, which is
    why this test is the second opinion and :func:`seed_level_p` uses Welch's t-test). With a
    single run on one side Welch's t does not exist and the difference of means is permuted.
    With 3 runs each the smallest p is 2/20 = 0.1; 4 + 4 runs reach 2/70. Beyond ``limit``
    relabelings: ``samples`` random ones (seeded) and p = (1 + extreme) / (samples + 1), which
    keeps the test valid (never below 1/(samples + 1)).
    """
    xa, xb = _scores(a, "system"), _scores(b, "baseline")
    pooled = np.concatenate([xa, xb])
    n, k = len(pooled), len(xa)
    total, total_sq = float(pooled.sum()), float((pooled**2).sum())
    stat = functools.partial(_studentised, k=k, total=total, total_sq=total_sq, n=n)
    observed = float(stat(np.array([xa.sum()]), np.array([(xa**2).sum()]))[0])
    tolerance = 1e-9 * (1.0 + observed) if math.isfinite(observed) else 0.0
    count = math.comb(n, k)
    exact = count <= limit
    if exact:
        groups = pooled[_combinations(n, k)]
    else:
        rng = np.random.default_rng(seed)
        groups = rng.permuted(np.broadcast_to(pooled, (samples, n)), axis=1)[:, :k]
    extreme = int((stat(groups.sum(1), (groups**2).sum(1)) >= observed - tolerance).sum())
    name = "Welch's t" if min(k, n - k) >= 2 else "difference"
    if exact:
        return PermutationResult(extreme / count, extreme, count, True, name)
    return PermutationResult((1 + extreme) / (samples + 1), extreme, samples, False, name)


def welch_arrays(
    mean_a: np.ndarray | float,
    var_a: np.ndarray | float,
    n_a: np.ndarray | int,
    mean_b: np.ndarray | float,
    var_b: np.ndarray | float,
    n_b: np.ndarray | int,
    df_rule: str = "satterthwaite",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Welch's t-test from each system's mean, sample variance (ddof 1) and number of runs,
    elementwise over broadcast arrays (e.g. [experiments] in a simulation): (t, df, p).
    ``df_rule`` "satterthwaite": (v_A + v_B)² / (v_A²/(n_A − 1) + v_B²/(n_B − 1)) with
    v = var/n; "min": min(n_A, n_B) − 1 (Hsu's conservative df, the claim's test: its level is
    at most α whatever the ratio of the two run sds, where Satterthwaite's estimated df lets the
    level double at α/4 when a 3-run system has 4 times the other's sd). No spread at all:
    t = ±inf, p = 0 where the means differ; t = 0, p = 1 where not.
    """
    va = np.asarray(var_a, dtype=float) / np.asarray(n_a, dtype=float)
    vb = np.asarray(var_b, dtype=float) / np.asarray(n_b, dtype=float)
    diff = np.asarray(mean_a, dtype=float) - np.asarray(mean_b, dtype=float)
    se2 = va + vb
    spread = se2 > 0
    safe = np.where(spread, se2, 1.0)
    with np.errstate(invalid="ignore"):  # 0 · inf where the means are equal: replaced by 0
        inf = np.sign(diff) * np.inf
    t = np.where(spread, diff / np.sqrt(safe), np.where(diff == 0, 0.0, inf))
    den = va**2 / (np.asarray(n_a, dtype=float) - 1) + vb**2 / (np.asarray(n_b, dtype=float) - 1)
    df = np.where(spread, safe**2 / np.where(den > 0, den, 1.0), np.inf)
    if df_rule == "min":
        df = np.where(spread, np.minimum(n_a, n_b) - 1.0, np.inf)
    elif df_rule != "satterthwaite":
        raise WordorderError(f"unknown df rule {df_rule!r}")
    p = np.where(spread, t_two_sided_p(t, np.where(spread, df, 1.0)), (diff == 0).astype(float))
    return t, df, p


def welch_test(
    mean_a: float,
    sd_a: float,
    n_a: int,
    mean_b: float,
    sd_b: float,
    n_b: int,
    df_rule: str = "satterthwaite",
) -> WelchResult:
    """Welch's t-test from each system's mean, sample sd (ddof 1) and number of runs.

    From summaries because that is all a published table keeps (docs/findings.md's mean ± sd).
    """
    if n_a < 2 or n_b < 2:
        raise WordorderError(
            f"Welch's t needs two runs of each system, not {n_a} and {n_b}",
            hint="train more seeds, or read the permutation test",
        )
    t, df, p = welch_arrays(mean_a, sd_a**2, n_a, mean_b, sd_b**2, n_b, df_rule)
    return WelchResult(float(t), float(df), float(p))


def welch(a: Scores, b: Scores, df_rule: str = "satterthwaite") -> WelchResult:
    """Welch's t-test over two lists of per-run scores (``df_rule``: :func:`welch_arrays`)."""
    xa, xb = _scores(a, "system"), _scores(b, "baseline")
    sd_a, sd_b = (float(x.std(ddof=1)) if len(x) > 1 else 0.0 for x in (xa, xb))
    return welch_test(float(xa.mean()), sd_a, len(xa), float(xb.mean()), sd_b, len(xb), df_rule)


def seed_level_p(a: Scores, b: Scores) -> tuple[float, str]:
    """The claim's p and its test's name: Welch's t with Hsu's df, min(n_A, n_B) − 1, whenever
    both systems have ≥ 2 runs: the test that held its family-wise level under Holm in
    simulation over 3–20 runs and sds 0.2–2 (ratio up to 4), where the permutation tests and
    Welch's t with Satterthwaite's df did not (module docstring). With a single
    run of one system (and more of the other) only the permutation test exists: it permutes the
    difference of means, exact and assumption-free; one run of each has no seed-level test."""
    if min(len(a), len(b)) >= 2:
        return welch(a, b, "min").p, "Welch"
    result = permutation_test(a, b)
    return result.p, "exact permutation" if result.exact else "Monte Carlo permutation"


def test_floor(n_a: int, n_b: int) -> float:
    """The smallest p :func:`seed_level_p` can give with these runs: 0 for Welch's t (a
    continuous p), the permutation floor where a system has one run."""
    return 0.0 if min(n_a, n_b) >= 2 else permutation_floor(n_a, n_b)


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
