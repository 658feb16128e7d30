"""Inverse square-root learning-rate schedule with linear warmup."""

from __future__ import annotations

import pytest
import torch

from wordorder.train.schedule import inverse_sqrt, inverse_sqrt_scheduler


def test_exact_values():
    assert inverse_sqrt(1, 4000, 7e-4) == pytest.approx(7e-4 / 4000)
    assert inverse_sqrt(2000, 4000, 7e-4) == pytest.approx(3.5e-4)
    assert inverse_sqrt(4000, 4000, 7e-4) == pytest.approx(7e-4)
    assert inverse_sqrt(16000, 4000, 7e-4) == pytest.approx(3.5e-4)
    assert inverse_sqrt(10, 0, 1e-3) == 1e-3  # no warmup: constant


def test_same_curve_as_vaswani():
    d, warmup = 512, 4000
    peak = d**-0.5 * warmup**-0.5
    for step in (1, 100, 3999, 4000, 4001, 10_000, 100_000):
        vaswani = d**-0.5 * min(step**-0.5, step * warmup**-1.5)
        assert inverse_sqrt(step, warmup, peak) == pytest.approx(vaswani, rel=1e-12)


def test_lambda_lr_factory_gives_the_kth_update_the_kth_rate():
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.Adam([param], lr=2e-3)
    sched = inverse_sqrt_scheduler(opt, warmup=10)
    seen = []
    for _ in range(40):
        seen.append(opt.param_groups[0]["lr"])  # the rate this update uses
        opt.step()
        sched.step()
    assert seen[0] == pytest.approx(2e-3 / 10)  # update 1
    assert seen[9] == pytest.approx(2e-3)  # update 10 = warmup: the peak
    assert seen[39] == pytest.approx(1e-3)  # update 40 = 4 * warmup: half the peak
