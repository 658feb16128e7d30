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


def test_noam_gives_each_width_vaswanis_peak():
    from wordorder.models import build_model
    from wordorder.train.loop import TrainOptions, make_optimizer
    from wordorder.train.schedule import peak_lr

    # Vaswani et al. Eq. 3 at step = warmup: d^-0.5 * warmup^-0.5 (Chen 2019/2020: warmup 8000)
    assert (
        peak_lr(1.0, 8000, "noam", 512)
        == pytest.approx(512**-0.5 * 8000**-0.5)
        == pytest.approx(4.941e-4, rel=1e-3)
    )
    assert peak_lr(1.0, 8000, "noam", 1024) == pytest.approx(3.494e-4, rel=1e-3)
    assert peak_lr(2.0, 4000, "noam", 512) == pytest.approx(2 * 6.988e-4, rel=1e-3)
    assert peak_lr(7e-4, 4000, "inverse_sqrt", 1024) == 7e-4  # the peak itself, whatever the width
    model = build_model({"preset": "tiny"}, 30)  # d_model 64
    opt = make_optimizer(model, TrainOptions(lr=1.0, warmup=100, schedule="noam"))
    assert opt.param_groups[0]["lr"] == pytest.approx(64**-0.5 * 100**-0.5)
    sched = inverse_sqrt_scheduler(opt, 100)
    for step in range(1, 301):  # the whole curve is Eq. 3
        assert opt.param_groups[0]["lr"] == pytest.approx(
            64**-0.5 * min(step**-0.5, step * 100**-1.5)
        )
        opt.step()
        sched.step()


def test_noam_needs_a_warmup_and_schedules_are_checked():
    from wordorder.errors import WordorderError
    from wordorder.train.loop import TrainOptions

    with pytest.raises(WordorderError, match="warmup"):
        TrainOptions.from_dict({"schedule": "noam", "warmup": 0})
    with pytest.raises(WordorderError, match="schedule must be one of inverse_sqrt, noam"):
        TrainOptions.from_dict({"schedule": "cosine"})


def test_step_decay_is_opennmt_pys_exponential_decay():
    """OpenNMT-py 1.0.0 (onmt/utils/optimizers.py, exponential_decay at its 1-based decay step):
    Adam at lr until update 49,999, halved at 50,000 and at every 10,000 updates after it."""
    from wordorder.train.schedule import step_decay

    lr = 1e-3
    expected = {
        1: 1e-3,
        40_000: 1e-3,
        49_999: 1e-3,
        50_000: 5e-4,
        59_999: 5e-4,
        60_000: 2.5e-4,
        100_000: 1.5625e-5,  # 0.5^6
        250_000: 1e-3 * 0.5**21,  # Kawara et al.'s last update
    }
    for step, rate in expected.items():
        assert lr * step_decay(step, 50_000, 10_000, 0.5) == rate, step
    # an optional linear warm-up before it, as inverse_sqrt's
    assert step_decay(1, 50_000, 10_000, 0.5, warmup=4) == 0.25
    assert step_decay(4, 50_000, 10_000, 0.5, warmup=4) == 1.0


def test_step_decay_scheduler_gives_the_kth_update_the_kth_rate():
    from wordorder.train.options import TrainOptions
    from wordorder.train.schedule import make_scheduler

    opts = TrainOptions.from_dict(
        {"schedule": "step_decay", "lr": 1e-3, "warmup": 0, "decay_start": 5, "decay_every": 3}
    )
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.Adam([param], lr=opts.lr)
    sched = make_scheduler(opt, opts)
    seen = []
    for _ in range(11):
        seen.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    # updates 1-4 at lr, 5-7 at lr/2, 8-10 at lr/4, 11 at lr/8
    assert seen == [1e-3] * 4 + [5e-4] * 3 + [2.5e-4] * 3 + [1.25e-4]
    # the other schedules keep the inverse-sqrt scheduler
    inv = make_scheduler(torch.optim.Adam([param], lr=2e-3), TrainOptions(warmup=10))
    assert inv.get_last_lr() == [pytest.approx(2e-3 / 10)]


def test_step_decay_options_are_checked_and_keyed_only_when_used():
    from wordorder.errors import WordorderError
    from wordorder.train.options import TrainOptions

    with pytest.raises(WordorderError, match="decay_factor must be in"):
        TrainOptions.from_dict({"schedule": "step_decay", "decay_factor": 1.5})
    with pytest.raises(WordorderError, match="decay_every must be a positive integer"):
        TrainOptions.from_dict({"schedule": "step_decay", "decay_every": 0})
    assert "decay_start" not in TrainOptions().state_key()  # older states keep their key
    assert TrainOptions(schedule="step_decay").state_key()["decay_factor"] == 0.5
