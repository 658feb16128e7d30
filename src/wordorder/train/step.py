"""What every update route does around its micro-batches (:mod:`wordorder.train.routes`,
:class:`wordorder.train.graphs.GraphedRoute`): the loss scaled to a per-token mean of the whole
update, clipping, the optimizer's step through the GradScaler and the zeroing (:class:`StepOps`),
and the sums over the micro-batches (:func:`accumulate`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from wordorder.model_io.batching import Batch


@dataclass
class StepOps:
    """Accumulation, scaling, clipping, stepping and zeroing: the one implementation the routes
    share. ``foreach``: clip with the multi-tensor kernels (the graphed route: fewer kernels to
    capture; None lets torch choose, as the eager routes always have)."""

    optimizer: torch.optim.Optimizer
    scaler: torch.amp.GradScaler
    params: list[torch.nn.Parameter]
    clip_norm: float
    foreach: bool | None = None

    def backward(self, loss: torch.Tensor, scale: float | torch.Tensor) -> None:
        """Add ``loss · scale`` (scale: world / tokens of the update) to the gradients."""
        self.scaler.scale(loss * scale).backward()

    def step(self) -> None:
        if self.clip_norm > 0:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.params, self.clip_norm, foreach=self.foreach)
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def zero(self) -> None:
        """Drop the gradients: the next backward pass hands each parameter a new one."""
        self.optimizer.zero_grad(set_to_none=True)


def accumulate(
    group: Sequence[Batch],
    micro_batch: Callable[[int, Batch], tuple[torch.Tensor, torch.Tensor]],
    device: torch.device,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run ``micro_batch(k, batch)`` over the group; the sums of its losses and NLLs."""
    loss_sum = nll_sum = torch.zeros((), device=device)
    for k, batch in enumerate(group):
        loss, nll = micro_batch(k, batch)
        loss_sum, nll_sum = loss_sum + loss, nll_sum + nll
    return loss_sum, nll_sum
