"""The runs a pre-registered design needs (docs/algorithms.md §SIG-SEEDS): the MDE's worked
examples, its α/claims form, runs_for_power as the smallest n whose MDE reaches Δ (a property
over a grid), the exact permutation test's floor raising n where it must, the power at n runs,
and ``wordorder power``."""

from __future__ import annotations

import itertools
import math

import pytest

from wordorder.cli import main
from wordorder.errors import WordorderError
from wordorder.evaluate import seed_stats
from wordorder.evaluate.power import (
    mde,
    normal_runs,
    permutation_min_runs,
    power_at,
    power_report,
    runs_for_power,
)


@pytest.mark.parametrize(
    ("sd", "n", "expected"), [(0.91, 3, 2.08), (0.91, 10, 1.14), (0.67, 8, 0.94)]
)
def test_mde_worked_examples_still_hold(sd, n, expected):
    assert mde is seed_stats.mde  # one formula, reused
    assert round(mde(sd, n, n), 2) == expected == round(mde(sd, n, n, claims=1), 2)


def test_mde_after_the_correction_is_the_mde_at_alpha_over_claims():
    for claims in (2, 4, 11):
        assert mde(0.91, 8, 8, claims=claims) == pytest.approx(mde(0.91, 8, 8, alpha=0.05 / claims))
    # z_{1 − 0.05/12} = 2.638 instead of 1.960: (2.638 + 0.842)·0.91·√(2/8) = 1.58
    assert round(mde(0.91, 8, 8, claims=6), 2) == 1.58


def test_runs_for_power_is_the_smallest_n_whose_mde_reaches_delta():
    """Over a grid of sd, Δ, claims and power (360 designs)."""
    grid = itertools.product(
        [0.3, 0.5, 0.91, 1.14, 2.0],  # sd
        [0.4, 0.94, 1.08, 1.34, 2.37, 5.0],  # delta
        [1, 2, 4, 6, 8, 11],  # claims
        [0.8, 0.9],  # power
    )
    raised = 0
    for sd, delta, claims, power in grid:
        n = normal_runs(delta, sd, claims, power=power)
        assert n >= 2 and mde(sd, n, n, power=power, claims=claims) <= delta
        assert n == 2 or mde(sd, n - 1, n - 1, power=power, claims=claims) > delta
        needed = runs_for_power(delta, sd, claims, power=power)
        assert needed == max(n, permutation_min_runs(0.05, claims))
        raised += needed > n
        # with the runs it asks for the claim's test can reach α/claims, with the power asked
        assert (
            needed >= seed_stats.WELCH_MIN_RUNS
            or seed_stats.permutation_floor(needed, needed) < 0.05 / claims
        )
        assert power_at(delta, sd, needed, needed, claims) >= power - 1e-9
        assert runs_for_power(-delta, sd, claims, power=power) == needed  # two-sided
    assert raised > 0  # the grid reaches the floor


def test_the_permutation_floor_raises_n_where_it_must():
    # one claim: 3 runs each cannot go below 2/20 = 0.1, 4 reach 2/70 = 0.029
    assert permutation_min_runs(0.05, 1) == 4
    # 8 claims: 2/C(10, 5) = 0.0079 ≥ 0.05/8 = 0.00625, 2/C(12, 6) = 0.0022 below it
    assert 2 / math.comb(10, 5) > 0.05 / 8 > 2 / math.comb(12, 6)
    assert permutation_min_runs(0.05, 8) == 6
    assert normal_runs(5.0, 0.5, 8) == 2 and runs_for_power(5.0, 0.5, 8) == 6
    # where the normal approximation asks for more, the floor changes nothing
    assert runs_for_power(1.34, 0.91, 8) == normal_runs(1.34, 0.91, 8) > 6
    # from 8 runs each Welch's t decides (no floor): never more than 8 for the floor's sake
    assert permutation_min_runs(0.05, 10_000) == seed_stats.WELCH_MIN_RUNS


def test_power_at():
    # at the MDE's n the normal power is the asked one, exactly
    d = mde(0.91, 10, 10, claims=4)
    assert power_at(d, 0.91, 10, 10, claims=4) == pytest.approx(0.8)
    assert power_at(2 * d, 0.91, 10, 10, claims=4) > 0.99
    # 3 runs each cannot give p < 0.05: no power, whatever the effect
    assert power_at(100.0, 0.91, 3, 3) == 0.0
    assert power_at(1.0, 0.0, 4, 4) == 1.0 and power_at(0.0, 0.0, 4, 4) == 0.0


def test_refuses_impossible_designs():
    with pytest.raises(WordorderError, match="no number of runs"):
        runs_for_power(0.0, 0.91, 4)
    with pytest.raises(WordorderError, match="run sd"):
        runs_for_power(1.0, -1.0, 4)
    with pytest.raises(WordorderError, match="claims"):
        runs_for_power(1.0, 0.91, 0)
    with pytest.raises(WordorderError, match="2 runs"):
        power_report([1.0], 0.91, 4, runs=1)


def test_power_cli(capsys):
    argv = ["power", "--sd", "0.91", "--delta", "1.34", "2.37", "--claims", "6", "--runs", "8"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run sd 0.91; 6 claims at two-sided α 0.05: each tested at α/6")
    assert "from 5 runs per system on" in lines[1]  # 2/C(8, 4) = 0.029, 2/C(10, 5) = 0.0079
    assert lines[2] == "Δ 1.34: 12 runs per system (MDE at 12 runs: 1.29)"
    assert lines[3] == (
        "Δ 2.37: 5 runs per system (MDE at 5 runs: 2.00; the normal approximation's 4 are too "
        "few for the exact test)"
    )
    assert lines[4] == (
        "at 8 runs per system: MDE 1.58 after the correction; power for Δ 1.34: 0.62, Δ 2.37: 0.99"
    )
    assert main([*argv, "--baseline-runs", "16"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(
        f"at 8 system and 16 baseline runs: MDE {mde(0.91, 8, 16, claims=6):.2f}"
    )
