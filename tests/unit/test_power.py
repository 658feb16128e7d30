"""The runs a pre-registered design needs (docs/algorithms.md §SIG-SEEDS): the t-based MDE's
worked examples, its α/claims form, runs_for_power as the smallest n whose MDE for the claim's
test reaches Δ (a property over a grid), the power at n runs by the noncentral t, and
``wordorder power``."""

from __future__ import annotations

import itertools

import pytest

from wordorder.cli import main
from wordorder.errors import WordorderError
from wordorder.evaluate.power import mde, mde_welch, power_at, power_report, runs_for_power
from wordorder.evaluate.tdist import t_quantile


@pytest.mark.parametrize(
    ("sd", "n", "expected"), [(0.91, 3, 2.762), (0.91, 10, 1.206), (0.67, 8, 1.009)]
)
def test_mde_worked_examples_still_hold(sd, n, expected):
    assert round(mde(sd, n, n), 3) == expected == round(mde(sd, n, n, claims=1), 3)


def test_mde_after_the_correction_is_the_mde_at_alpha_over_claims():
    for claims in (2, 4, 11):
        assert mde(0.91, 8, 8, claims=claims) == pytest.approx(mde(0.91, 8, 8, alpha=0.05 / claims))
    # t_{1 − 0.05/12, 14} + t_{0.8, 14}, times 0.91·√(2/8)
    by_hand = (t_quantile(1 - 0.05 / 12, 14) + t_quantile(0.8, 14)) * 0.91 / 2
    assert mde(0.91, 8, 8, claims=6) == pytest.approx(by_hand)
    # the claim's test has Hsu's df, n − 1 with n runs each: a larger MDE
    assert mde_welch(0.91, 8, 0.91, 8, claims=6) > mde(0.91, 8, 8, claims=6)


def test_runs_for_power_is_the_smallest_n_whose_mde_reaches_delta():
    """Over a grid of sd, Δ, claims and power (96 designs: from n = 2 at sd 0.3 and Δ 5 to
    hundreds of runs at sd 2 and Δ 0.4; the 360 of an earlier grid took 21 s, issue 47)."""
    grid = itertools.product(
        [0.3, 0.91, 2.0],  # sd
        [0.4, 1.08, 2.37, 5.0],  # delta
        [1, 4, 6, 11],  # claims
        [0.8, 0.9],  # power
    )
    for sd, delta, claims, power in grid:
        n = runs_for_power(delta, sd, claims, power=power)
        assert n >= 2 and mde_welch(sd, n, sd, n, power=power, claims=claims) <= delta
        assert n == 2 or mde_welch(sd, n - 1, sd, n - 1, power=power, claims=claims) > delta
        assert runs_for_power(-delta, sd, claims, power=power) == n  # two-sided
        # the noncentral t at those runs gives about the power asked (the (t + t) formula)
        # the (t + t) formula is loose at few df: 0.71 for 0.8 at 3 runs (df 2) and 6 claims,
        # 0.83 for 0.9 at 5 runs and 11 claims
        assert n <= 3 or power_at(delta, sd, n, n, claims) >= power - 0.08


def test_power_at():
    # at the MDE's n the noncentral-t power is about the asked one
    d = mde_welch(0.91, 10, 0.91, 10, claims=4)
    assert power_at(d, 0.91, 10, 10, claims=4) == pytest.approx(0.8, abs=0.02)
    assert power_at(2 * d, 0.91, 10, 10, claims=4) > 0.99
    assert power_at(1.0, 0.0, 4, 4) == 1.0 and power_at(0.0, 0.0, 4, 4) == 0.0
    with pytest.raises(WordorderError, match="two runs"):
        power_at(1.0, 0.91, 1, 4)


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
    assert "Hsu's df" in lines[1]
    assert lines[2] == "Δ 1.34: 15 runs per system (MDE at 15 runs: 1.31)"
    assert lines[3] == "Δ 2.37: 7 runs per system (MDE at 7 runs: 2.32)"
    assert lines[4] == (
        "at 8 runs per system: MDE 2.06 after the correction; power for Δ 1.34: 0.35, Δ 2.37: 0.89"
    )
    assert main([*argv, "--baseline-runs", "16"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(
        f"at 8 system and 16 baseline runs: MDE {mde_welch(0.91, 8, 0.91, 16, claims=6):.2f}"
    )
