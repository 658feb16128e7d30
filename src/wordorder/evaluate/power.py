"""The runs a pre-registered design needs (issue 34; docs/algorithms.md §SIG-SEEDS).

Before the runs: how many training runs per system give a comparison the power to detect the
paper's Δ, given the run-to-run sd of a pilot and the number of claims Holm corrects over, and
what a budget's number of runs can detect. Holm's first step tests the smallest p at α/m
(Bonferroni), so every comparison is planned at α/m: conservative, since later steps test at
α/(m − 1), …, α. The normal approximation is :func:`wordorder.evaluate.seed_stats.mde`'s (the
claim's test is Welch's t from 8 runs each); below that the exact permutation test decides, and
it cannot give a p under 2/C(2n, n) whatever the effect, so n is raised until that floor is
under α/m (with 8 claims at α 0.05: 2/C(10, 5) = 0.0079 > 0.00625, so at least 6 runs each).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from wordorder.errors import WordorderError
from wordorder.evaluate.seed_stats import (
    ALPHA,
    POWER,
    WELCH_MIN_RUNS,
    mde,
    permutation_floor,
)

__all__ = [
    "mde",
    "normal_runs",
    "permutation_min_runs",
    "power_at",
    "power_report",
    "runs_for_power",
]


def _check(sd: float, claims: int, alpha: float, power: float) -> None:
    if not sd >= 0 or not math.isfinite(sd):
        raise WordorderError(f"the run sd must be a number ≥ 0, not {sd}")
    if claims < 1:
        raise WordorderError(f"the number of claims must be at least 1, not {claims}")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise WordorderError(f"α and the power lie between 0 and 1, not {alpha} and {power}")


def permutation_min_runs(alpha: float = ALPHA, claims: int = 1) -> int:
    """The fewest runs per system (equal numbers) with which the claim's test can give
    p < α/claims at all: the exact permutation test's floor 2/C(2n, n) below it, or 8 runs,
    from which Welch's t (a continuous p) is the claim's test
    (:func:`wordorder.evaluate.seed_stats.seed_level_p`)."""
    n = 2
    while n < WELCH_MIN_RUNS and permutation_floor(n, n) >= alpha / claims:
        n += 1
    return n


def normal_runs(
    delta: float, sd: float, claims: int = 1, alpha: float = ALPHA, power: float = POWER
) -> int:
    """The smallest n ≥ 2 whose :func:`mde` (n runs each, at α/claims) is at most |delta|."""
    _check(sd, claims, alpha, power)
    if delta == 0 or not math.isfinite(delta):
        raise WordorderError(f"no number of runs detects a difference of {delta}")
    delta = abs(delta)
    z = NormalDist().inv_cdf
    n = max(2, math.ceil(2 * ((z(1 - alpha / (2 * claims)) + z(power)) * sd / delta) ** 2))
    # the closed form rounded up; the float comparison with mde() decides at the boundary
    while n > 2 and mde(sd, n - 1, n - 1, alpha, power, claims) <= delta:
        n -= 1
    while mde(sd, n, n, alpha, power, claims) > delta:
        n += 1
    return n


def runs_for_power(
    delta: float, sd: float, claims: int = 1, alpha: float = ALPHA, power: float = POWER
) -> int:
    """Runs per system so that a two-sided test at α/claims has ``power`` for a true
    difference ``delta`` given the run sd ``sd``: :func:`normal_runs`, raised to
    :func:`permutation_min_runs` where the exact test could not reach α/claims with fewer."""
    return max(normal_runs(delta, sd, claims, alpha, power), permutation_min_runs(alpha, claims))


def power_at(
    delta: float, sd: float, n_a: int, n_b: int, claims: int = 1, alpha: float = ALPHA
) -> float:
    """The power (normal approximation, the far tail left out) of a two-sided test at
    α/claims for a true difference ``delta`` with ``n_a`` and ``n_b`` runs:
    Φ(|δ|/(sd·√(1/n_A + 1/n_B)) − z_{1−α/(2·claims)}); 0 where the exact test's floor
    (fewer than 8 runs) cannot go under α/claims."""
    _check(sd, claims, alpha, 0.5)
    if min(n_a, n_b) < WELCH_MIN_RUNS and permutation_floor(n_a, n_b) >= alpha / claims:
        return 0.0
    if sd == 0:
        return 1.0 if delta else 0.0
    nd = NormalDist()
    se = sd * math.sqrt(1 / n_a + 1 / n_b)
    return nd.cdf(abs(delta) / se - nd.inv_cdf(1 - alpha / (2 * claims)))


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
        f"the claim's test can give p < {level:.4g} from "
        f"{permutation_min_runs(alpha, claims)} runs per system on (the exact permutation "
        f"test's floor 2/C(2n, n); Welch's t from {WELCH_MIN_RUNS} runs each)",
    ]
    for d in deltas:
        n, normal = (
            runs_for_power(d, sd, claims, alpha, power),
            normal_runs(d, sd, claims, alpha, power),
        )
        raised = (
            f"; the normal approximation's {normal} are too few for the exact test"
            if n > normal
            else ""
        )
        lines.append(
            f"Δ {d:g}: {n} runs per system (MDE at {n} runs: "
            f"{mde(sd, n, n, alpha, power, claims):.2f}{raised})"
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
            f"at {each}: MDE {mde(sd, runs, n_b, alpha, power, claims):.2f} after the "
            f"correction; power for {chances}"
        )
    return "\n".join(lines)
