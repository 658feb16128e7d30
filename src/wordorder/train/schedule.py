"""Learning-rate schedule: linear warmup, then inverse square root decay.

Vaswani et al. (2017) use ``lr = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)``. That is
the same curve as :func:`inverse_sqrt` with ``peak_lr = d_model^-0.5 * warmup^-0.5`` (the value
reached at ``step = warmup``): for d_model = 512 and warmup = 4000, peak_lr ≈ 7.0e-4, the
default of :class:`wordorder.train.loop.TrainOptions`. Stating the peak directly (as fairseq
does) keeps the learning rate independent of the model width; ``schedule: noam`` states the
factor instead (:func:`peak_lr`), so models of several widths each get the paper's peak.
"""

from __future__ import annotations

import math

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR

SCHEDULES = ("inverse_sqrt", "noam")


def peak_lr(lr: float, warmup: int, schedule: str, d_model: int) -> float:
    """The peak of the schedule: ``lr`` itself (``inverse_sqrt``), or Vaswani et al.'s Eq. 3
    at ``step = warmup`` with ``lr`` as its factor (``noam``): lr · d_model^-0.5 · warmup^-0.5.

    >>> round(peak_lr(1.0, 8000, "noam", 512), 7), round(peak_lr(1.0, 8000, "noam", 1024), 7)
    (0.0004941, 0.0003494)
    """
    if schedule == "inverse_sqrt":
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
