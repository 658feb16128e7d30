"""Learning-rate schedule: linear warmup, then inverse square root decay.

Vaswani et al. (2017) use ``lr = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)``. That is
the same curve as :func:`inverse_sqrt` with ``peak_lr = d_model^-0.5 * warmup^-0.5`` (the value
reached at ``step = warmup``): for d_model = 512 and warmup = 4000, peak_lr ≈ 7.0e-4, the
default of :class:`wordorder.train.loop.TrainOptions`. Stating the peak directly (as fairseq
does) keeps the learning rate independent of the model width.
"""

from __future__ import annotations

import math

from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR


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
