"""The minimal detectable effect, the power and the runs a design needs, by Student's t
(issue 34, issue 44; docs/algorithms.md §SIG-SEEDS).

The claim's test is Welch's t over the per-run scores (:func:`wordorder.evaluate.seed_stats.
seed_level_p`), so the arithmetic is the t distribution's, not the normal's: at 3–10 runs the
normal approximation promises 5–25 % smaller detectable effects than the test can see (σ 0.91,
3 runs each: 2.08 by z, 2.76 by t). Before the runs: how many runs per system give a comparison
the power to detect the paper's Δ, given a pilot's run sd and the m claims Holm corrects over;
after them: what the runs could detect. Holm's first step tests the smallest p at α/m
(Bonferroni), so every comparison is planned at α/m: conservative, since later steps test at
α/(m − 1), …, α. Welch's t has a continuous p, so no floor raises n (the permutation test's
floor matters only where a system has a single run).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from wordorder.errors import WordorderError
from wordorder.evaluate.seed_stats import ALPHA, POWER
from wordorder.evaluate.tdist import t_quantile, t_test_power

__all__ = ["mde", "mde_welch", "power_at", "power_report", "runs_for_power"]


def _check(sd: float, claims: int, alpha: float, power: float) -> None:
    if not sd >= 0 or not math.isfinite(sd):
        raise WordorderError(f"the run sd must be a number ≥ 0, not {sd}")
    if claims < 1:
        raise WordorderError(f"the number of claims must be at least 1, not {claims}")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise WordorderError(f"α and the power lie between 0 and 1, not {alpha} and {power}")


def _mde_se(se: float, df: float, level: float, power: float) -> float:
    """(t_{1−level/2, df} + t_{power, df})·se."""
    if se == 0:
        return 0.0
    return (t_quantile(1 - level / 2, df) + t_quantile(power, df)) * se


def mde(
    sd: float, n_a: int, n_b: int, alpha: float = ALPHA, power: float = POWER, claims: int = 1
) -> float:
    """Minimal detectable effect of the pooled t-test with one run sd for both systems,
    two-sided at α/claims (Holm's first step): δ = (t_{1−α/(2·claims)} + t_{power})
    ·sd·√(1/n_A + 1/n_B), df = n_A + n_B − 2 (the spec's formula; the claim's test, with
    fewer df, has :func:`mde_welch`, which the rows and the designs use). A difference below
    it is likely missed, so "not detected" says little about effects smaller than δ.
    σ 0.91: 3 runs each 2.762, 10 runs 1.206; σ 0.67, 8 runs 1.009."""
    if n_a + n_b < 3:
        raise WordorderError(f"an MDE needs 3 runs in all, not {n_a} + {n_b}")
    return _mde_se(sd * math.sqrt(1 / n_a + 1 / n_b), n_a + n_b - 2, alpha / claims, power)


def mde_welch(
    sd_a: float,
    n_a: int,
    sd_b: float,
    n_b: int,
    alpha: float = ALPHA,
    power: float = POWER,
    claims: int = 1,
) -> float:
    """The MDE of the claim's test, Welch's t with Hsu's df min(n_A, n_B) − 1, with each
    system's own sd: (t_{1−α/(2·claims)} + t_{power})·√(sd_A²/n_A + sd_B²/n_B). With unequal
    runs and spreads the pooled sd would understate the noisier system's share (3 runs of sd 2
    and 16 of sd 0.5: a standard error of 1.16 against 0.52)."""
    if min(n_a, n_b) < 2:
        raise WordorderError(f"Welch's MDE needs two runs of each system, not {n_a}, {n_b}")
    va, vb = sd_a**2 / n_a, sd_b**2 / n_b
    if va + vb == 0:
        return 0.0
    return _mde_se(math.sqrt(va + vb), min(n_a, n_b) - 1, alpha / claims, power)


def power_at(
    delta: float, sd: float, n_a: int, n_b: int, claims: int = 1, alpha: float = ALPHA
) -> float:
    """The power of the claim's test (Welch's t, Hsu's df) at α/claims for a true difference
    ``delta`` with ``n_a`` and ``n_b`` runs of sd ``sd``: the noncentral t with df
    min(n_A, n_B) − 1 and noncentrality |δ|/(sd·√(1/n_A + 1/n_B)). The statistic's own
    distribution has other df than the test assumes: simulated, the power differs from this
    by at most 0.06 at 3–10 runs (``tests/unit/test_seed_stats_simulation.py``)."""
    _check(sd, claims, alpha, 0.5)
    if min(n_a, n_b) < 2:
        raise WordorderError(f"Welch's t needs two runs of each system, not {n_a}, {n_b}")
    if sd == 0:
        return 1.0 if delta else 0.0
    lam = abs(delta) / (sd * math.sqrt(1 / n_a + 1 / n_b))
    return t_test_power(lam, min(n_a, n_b) - 1, alpha / claims)


def runs_for_power(
    delta: float, sd: float, claims: int = 1, alpha: float = ALPHA, power: float = POWER
) -> int:
    """Runs per system so that the t-test at α/claims has ``power`` for a true difference
    ``delta`` given the run sd ``sd``: the smallest n ≥ 2 whose MDE for the claim's test
    (:func:`mde_welch`, n runs each of sd ``sd``) is at most |delta|."""
    _check(sd, claims, alpha, power)
    if delta == 0 or not math.isfinite(delta):
        raise WordorderError(f"no number of runs detects a difference of {delta}")
    delta = abs(delta)
    z = t_quantile(1 - alpha / (2 * claims), 1e9) + t_quantile(power, 1e9)
    n = max(2, math.ceil(2 * (z * sd / delta) ** 2))  # the normal approximation: a lower bound
    while n > 2 and mde_welch(sd, n - 1, sd, n - 1, alpha, power, claims) <= delta:
        n -= 1
    while mde_welch(sd, n, sd, n, alpha, power, claims) > delta:
        n += 1
    return n


def power_report(
    deltas: Sequence[float],
    sd: float,
    claims: int,
    alpha: float = ALPHA,
    power: float = POWER,
    runs: int | None = None,
    baseline_runs: int | None = None,
) -> str:
    """The lines ``wordorder power`` prints: the runs each Δ needs, and for ``runs`` (and the
    baseline's ``baseline_runs``, else the same) the MDE after the correction and the power
    for each Δ, to write the design into the config."""
    _check(sd, claims, alpha, power)
    level = alpha / claims
    lines = [
        f"run sd {sd:g}; {claims} claim{'s' * (claims != 1)} at two-sided α {alpha:g}: "
        f"each tested at α/{claims} = {level:.4g} (Holm's first step), power {power:g}",
        "the claim's test: Welch's t over the per-run scores with Hsu's df, the fewer runs − 1 "
        "(2 runs per system at least); MDE and power by Student's t at that df",
    ]
    for d in deltas:
        n = runs_for_power(d, sd, claims, alpha, power)
        lines.append(
            f"Δ {d:g}: {n} runs per system (MDE at {n} runs: "
            f"{mde_welch(sd, n, sd, n, alpha, power, claims):.2f})"
        )
    if runs is not None:
        n_b = baseline_runs or runs
        if min(runs, n_b) < 2:
            raise WordorderError("a seed-level test needs at least 2 runs of each system")
        each = (
            f"{runs} runs per system" if n_b == runs else f"{runs} system and {n_b} baseline runs"
        )
        chances = ", ".join(
            f"Δ {d:g}: {power_at(d, sd, runs, n_b, claims, alpha):.2f}" for d in deltas
        )
        lines.append(
            f"at {each}: MDE {mde_welch(sd, runs, sd, n_b, alpha, power, claims):.2f} after the "
            f"correction; power for {chances}"
        )
    return "\n".join(lines)
