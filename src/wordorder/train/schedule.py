"""Learning-rate schedule: linear warmup, then inverse square root decay.

Vaswani et al. (2017) use ``lr = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)``. That is
the same curve as :func:`inverse_sqrt` with ``peak_lr = d_model^-0.5 * warmup^-0.5`` (the value
reached at ``step = warmup``): for d_model = 512 and warmup = 4000, peak_lr ≈ 7.0e-4, the
default of :class:`wordorder.train.loop.TrainOptions`. Stating the peak directly (as fairseq
does) keeps the learning rate independent of the model width; ``schedule: noam`` states the
factor instead (:func:`peak_lr`), so models of several widths each get the paper's peak.

``schedule: step_decay`` is OpenNMT-py's rate for ``decay_method none`` (the default of its 0.x
and 1.x releases, which Kawara et al. 2021 trained with): ``lr`` constant, then multiplied by
``decay_factor`` at update ``decay_start`` and again every ``decay_every`` updates after it
(:func:`step_decay`); an optional linear warm-up (``warmup`` > 0) ramps up to ``lr`` first.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR

from wordorder.train.options import SCHEDULES

if TYPE_CHECKING:
    from wordorder.train.options import TrainOptions


def peak_lr(lr: float, warmup: int, schedule: str, d_model: int) -> float:
    """The peak of the schedule: ``lr`` itself (``inverse_sqrt``), or Vaswani et al.'s Eq. 3
    at ``step = warmup`` with ``lr`` as its factor (``noam``): lr · d_model^-0.5 · warmup^-0.5.

    >>> round(peak_lr(1.0, 8000, "noam", 512), 7), round(peak_lr(1.0, 8000, "noam", 1024), 7)
    (0.0004941, 0.0003494)
    """
    if schedule in ("inverse_sqrt", "step_decay"):
        return lr
    if schedule != "noam":
        raise ValueError(f"unknown schedule {schedule!r}; expected one of {SCHEDULES}")
    if warmup < 1:
        raise ValueError("the noam schedule needs warmup ≥ 1 (its peak is at step = warmup)")
    return lr * d_model**-0.5 * warmup**-0.5


def inverse_sqrt(step: int, warmup: int, peak_lr: float) -> float:
    """Learning rate for update number ``step`` (1-based).

    ``peak_lr * step / warmup`` up to ``warmup``, then ``peak_lr * sqrt(warmup / step)``.
    Without warmup (``warmup <= 0``) the rate is ``peak_lr`` throughout.
    """
    step = max(step, 1)
    if warmup <= 0:
        return peak_lr
    if step < warmup:
        return peak_lr * step / warmup
    return peak_lr * math.sqrt(warmup / step)


def inverse_sqrt_scheduler(optimizer: Optimizer, warmup: int) -> LambdaLR:
    """A LambdaLR applying :func:`inverse_sqrt` with the optimizer's lr as the peak.

    Call ``scheduler.step()`` after each ``optimizer.step()``: LambdaLR counts from 0, and the
    k-th update (1-based) must use ``inverse_sqrt(k, ...)``, hence the ``+ 1``.
    """
    return LambdaLR(optimizer, lambda done: inverse_sqrt(done + 1, warmup, 1.0))


def step_decay(step: int, start: int, every: int, factor: float, warmup: int = 0) -> float:
    """The multiplier of ``lr`` for update number ``step`` (1-based) under step decay.

    ``factor ** (max(step - start + every, 0) // every)``: 1 before update ``start``, ``factor``
    from update ``start`` on, ``factor²`` from ``start + every`` on, and so on. This is the
    ``exponential_decay`` of OpenNMT-py's ``onmt/utils/optimizers.py`` (1.0.0), which its
    optimizer evaluates at the 1-based number of the update about to be made; with its defaults
    (start 50,000, every 10,000, factor 0.5) update 49,999 runs at ``lr``, 50,000 at ``lr``/2,
    60,000 at ``lr``/4. With ``warmup`` > 0 the first ``warmup`` updates ramp up linearly
    (``step / warmup``), as :func:`inverse_sqrt` does; OpenNMT-py has no warm-up here.

    >>> [step_decay(s, 50_000, 10_000, 0.5) for s in (1, 49_999, 50_000, 59_999, 60_000)]
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """
    step = max(step, 1)
    ramp = step / warmup if 0 < warmup and step < warmup else 1.0
    return ramp * factor ** (max(step - start + every, 0) // every)


def make_scheduler(optimizer: Optimizer, opts: TrainOptions) -> LambdaLR:
    """The scheduler of ``opts.schedule`` around ``optimizer``, whose lr is the peak
    (:func:`peak_lr`): inverse square root (``inverse_sqrt``, and ``noam``, the same curve) or
    step decay (``step_decay``). Step it after each optimizer step, as
    :func:`inverse_sqrt_scheduler`."""
    if opts.schedule != "step_decay":
        return inverse_sqrt_scheduler(optimizer, opts.warmup)
    start, every, factor, warmup = (
        opts.decay_start,
        opts.decay_every,
        opts.decay_factor,
        opts.warmup,
    )
    return LambdaLR(optimizer, lambda done: step_decay(done + 1, start, every, factor, warmup))
