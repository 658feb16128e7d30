"""The paired analysis of a block design (src/wordorder/evaluate/blocks.py): worked examples,
its level and its gain over two groups by simulation, and a findings row that uses it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wordorder.errors import WordorderError
from wordorder.evaluate.blocks import blocks_for_power, paired_interval, paired_mde, paired_t
from wordorder.evaluate.findings import judge, matched_runs
from wordorder.evaluate.seed_stats import welch_arrays


def t3_two_sided(t: float) -> float:
    """Student's t with 3 df in closed form: F(t) = ½ + (u/(1 + u²) + atan u)/π, u = t/√3."""
    u = abs(t) / math.sqrt(3)
    return 2 * (0.5 - (u / (1 + u * u) + math.atan(u)) / math.pi)


def test_the_paired_t_of_a_worked_example():
    # differences 1, 1.5, 1, 1: mean 1.125, sd 0.25, t = 1.125 / (0.25 / 2) = 9 with 3 df
    r = paired_t([26, 27, 28, 27], [25, 25.5, 27, 26])
    assert (r.mean, r.sd, r.n, r.df) == (1.125, 0.25, 4, 3)
    assert r.t == pytest.approx(9.0) and r.p == pytest.approx(t3_two_sided(9.0), abs=1e-6)
    assert r.p == pytest.approx(0.0028958, abs=1e-6)
    lo, hi = paired_interval(r)  # t_{.975, 3} = 3.1824: 1.125 ± 3.1824 · 0.125
    assert (lo, hi) == pytest.approx((1.125 - 0.39780, 1.125 + 0.39780), abs=1e-4)
    wider = paired_interval(r, sentence_var=0.04)
    assert wider[0] < lo and wider[1] > hi


def test_the_paired_mde_and_the_blocks_a_design_needs():
    # t_{.975, 7} = 2.3646, t_{.8, 7} = 0.8960 (tables): (2.3646 + 0.8960) · 0.5 / √8
    assert paired_mde(0.5, 8) == pytest.approx(0.5764, abs=2e-4)
    n = blocks_for_power(1.34, 0.84)
    assert paired_mde(0.84, n) <= 1.34 < paired_mde(0.84, n - 1)
    assert blocks_for_power(1.34, 0.84, claims=2) >= n
    with pytest.raises(WordorderError, match="same seeds"):
        paired_t([1.0, 2.0], [1.0])


def test_paired_level_holds_and_it_beats_two_groups_when_blocks_share_an_effect():
    rng = np.random.default_rng(7)
    experiments, n = 4000, 8
    block = rng.normal(0, 1.0, (experiments, n))  # a seed's or machine's effect on both
    a = block + rng.normal(0, 0.5, (experiments, n))
    b = block + rng.normal(0, 0.5, (experiments, n))
    d = a - b
    t = d.mean(1) / (d.std(1, ddof=1) / math.sqrt(n))
    from wordorder.evaluate.tdist import t_two_sided_p

    level = float((t_two_sided_p(t, n - 1) < 0.05).mean())
    se = math.sqrt(0.05 * 0.95 / experiments)
    assert abs(level - 0.05) < 3 * se, level  # exact for normal differences
    shift = 0.6  # a true difference: the paired test finds it far more often
    paired = t_two_sided_p((d.mean(1) + shift) / (d.std(1, ddof=1) / math.sqrt(n)), n - 1)
    x = a + shift
    _, _, welch_p = welch_arrays(
        x.mean(1), x.var(1, ddof=1), n, b.mean(1), b.var(1, ddof=1), n, df_rule="min"
    )
    assert (paired < 0.05).mean() > 2 * (welch_p < 0.05).mean()


def test_a_paired_row_matches_blocks_by_seed_and_is_judged_by_the_paired_test():
    claim = {
        "system_hyps": ["s1", "s2", "s4"],
        "baseline_hyps": ["b4", "b1", "b2", "b3"],
        "system_seeds": [1, 2, 4],
        "baseline_seeds": [4, 1, 2, 3],
    }
    assert matched_runs(claim) == (["s1", "s2", "s4"], ["b1", "b2", "b4"], [1, 2, 4])
    row = {
        "paper_delta": 1.34,
        "delta": 1.125,
        "p": 0.0029,
        "ci": [0.7, 1.5],
        "mde": 0.6,
        "seed_level": True,
        "paired": True,
        "difference_sd": 0.25,
        "system_runs": 4,
        "baseline_runs": 4,
        "pooled_sd": 0.8,
        "system_sd": 0.8,
        "baseline_sd": 0.7,
        "family": "sensitivity",
    }
    (judged,) = judge([row])
    assert judged["verdict"].startswith("reproduced")
    assert judged["mde"] == pytest.approx(paired_mde(0.25, 4))
    assert judged["runs_needed"] == blocks_for_power(1.34, 0.25)
