"""How a run's training updates run, chosen once (:func:`choose_route`, :func:`make_route`):
one interface, :class:`Route` (``route.update(group, n_tokens)``), and one implementation of
what every update does around its micro-batches, :class:`StepOps`: the loss scaled to a
per-token mean of the whole update (gradient accumulation), clipping, the optimizer's step
through the GradScaler, and the zeroing of the gradients.

The routes differ only in how a micro-batch's forward and backward run:

* ``eager``: ``loss_fn(model, batch)`` per micro-batch;
* ``stacked``: the same through :class:`~wordorder.train.stacked.StackedParameters`, made
  after the first update (which runs eagerly: only the parameters it used are stacked);
* ``ddp``: through the DDP wrapper, gradients all-reduced once, at the last micro-batch;
* ``graphed``: replayed from a graph per static batch shape, the step a graph of its own
  (:class:`wordorder.train.graphs.GraphedRoute`).

A compiled loss (``train.compile``) is a property of ``loss_fn``, not a route.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from wordorder.model_io.batching import Batch
from wordorder.models.base import Seq2SeqModel
from wordorder.train.graphs import GraphedRoute, use_graphs
from wordorder.train.stacked import StackedParameters, use_stacks, used_parameters
from wordorder.train.step import StepOps, accumulate
from wordorder.train.update import LossFn

ROUTES = ("eager", "stacked", "ddp", "graphed")


class Route(Protocol):
    """One optimizer update over the micro-batches ``group`` holding ``n_tokens`` target tokens
    (of the whole update: with DDP, of all processes); returns the summed loss and NLL of this
    process' micro-batches as device scalars (not synchronised)."""

    name: str

    def update(
        self, group: Sequence[Batch], n_tokens: int
    ) -> tuple[torch.Tensor, torch.Tensor]: ...


@dataclass
class EagerRoute:
    """Every micro-batch's loss and backward issued from Python (``world``: processes whose
    gradients a DDP route averages; 1 here)."""

    model: Seq2SeqModel
    ops: StepOps
    loss_fn: LossFn
    device: torch.device
    world: int = 1
    name: str = "eager"

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return self.loss_fn(self.model, batch)

    def update(self, group: Sequence[Batch], n_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
        self.begin()
        # DDP averages gradients over processes: scaled by world, the result is the sum
        scale = self.world / n_tokens

        def micro_batch(k: int, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
            with self.context(last=k == len(group) - 1):  # the backward runs inside it too
                loss, nll = self.forward(batch.to(self.device))
                self.ops.backward(loss, scale)
            return loss.detach(), nll

        sums = accumulate(group, micro_batch, self.device)
        self.end()
        self.ops.step()
        return sums

    def context(self, last: bool) -> contextlib.AbstractContextManager[Any]:
        """Around a micro-batch's forward and backward."""
        return contextlib.nullcontext()

    def begin(self) -> None:
        self.ops.zero()

    def end(self) -> None:
        """After the backward passes, before the step."""


@dataclass
class DDPRoute(EagerRoute):
    """The micro-batches through the DDP wrapper; gradients all-reduced at the last one."""

    ddp: Any = None
    name: str = "ddp"

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        return self.ddp(batch)

    def context(self, last: bool) -> contextlib.AbstractContextManager[Any]:
        return contextlib.nullcontext() if last else self.ddp.no_sync()


@dataclass
class StackedRoute(EagerRoute):
    """The eager route with the parameters stacked by shape from the second update on (made as
    it begins: the first update shows which parameters are used, and its gradients stay
    readable until then)."""

    amp_dtype: torch.dtype | None = None
    stacked: StackedParameters | None = field(default=None, init=False)
    updates: int = field(default=0, init=False)
    name: str = "stacked"

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        if self.stacked is None:
            return self.loss_fn(self.model, batch)
        return self.stacked(self.loss_fn, batch)

    def stack(self) -> None:
        """Stack the parameters the updates so far used (after the first; once)."""
        if self.stacked is None and self.updates > 0:
            used = used_parameters(self.model)
            self.stacked = StackedParameters(self.model, self.amp_dtype, used)

    def begin(self) -> None:
        self.stack()
        if self.stacked is None:
            self.ops.zero()
        else:
            self.stacked.zero_grad()

    def end(self) -> None:
        self.updates += 1
        if self.stacked is not None:
            self.stacked.link_grads()


def choose_route(
    opts: Any, device: torch.device, model: Seq2SeqModel, world: int, amp_dtype: torch.dtype | None
) -> str:
    """The route of a run from its options, device, processes and precision (each setting's
    own rules: :func:`~wordorder.train.graphs.use_graphs`,
    :func:`~wordorder.train.stacked.use_stacks`)."""
    from wordorder.gpu_table import family_of, precision_of

    graphs = use_graphs(opts.cuda_graphs, device, model, world, amp_dtype)
    if graphs:
        return "graphed"
    kind = (precision_of(amp_dtype), family_of(model))
    stacks = use_stacks(opts.stack_parameters, device, world, opts.compile, graphs, *kind)
    if world > 1:
        return "ddp"  # use_stacks has refused true here, saying why
    return "stacked" if stacks else "eager"


def make_route(
    name: str,
    model: Seq2SeqModel,
    optimizer: torch.optim.Optimizer,
    scaler: torch.amp.GradScaler,
    loss_fn: LossFn,
    device: torch.device,
    clip_norm: float,
    amp_dtype: torch.dtype | None = None,
    ddp: Any = None,
    world: int = 1,
    max_graphs: int = 64,
    backend: Any = None,
) -> Route:
    """The route ``name`` (:data:`ROUTES`) over a model, its optimizer (already loaded and
    prepared: :func:`wordorder.train.update.prepare_optimizer`) and its loss. ``backend``: the
    graphed route's graphs (CUDA's by default; tests inject a stand-in)."""
    if name == "graphed":
        return GraphedRoute(model, optimizer, loss_fn, clip_norm, device, max_graphs, backend)
    ops = StepOps(optimizer, scaler, list(model.parameters()), clip_norm)
    if name == "ddp":
        return DDPRoute(model, ops, loss_fn, device, world, ddp=ddp)
    if name == "stacked":
        return StackedRoute(model, ops, loss_fn, device, amp_dtype=amp_dtype)
    if name == "eager":
        return EagerRoute(model, ops, loss_fn, device)
    raise ValueError(f"unknown update route {name!r} (one of {', '.join(ROUTES)})")


def route_from_options(
    name: str,
    model: Seq2SeqModel,
    optimizer: torch.optim.Optimizer,
    opts: Any,
    device: torch.device,
    amp_dtype: torch.dtype | None = None,
    scaler: torch.amp.GradScaler | None = None,
    loss_fn: LossFn | None = None,
    **kwargs: Any,
) -> Route:
    """:func:`make_route` with the loss of the options' label smoothing and, unless given, a
    disabled GradScaler: updates outside a Trainer (benchmarks, tests)."""
    from wordorder.train.update import loss_function

    return make_route(
        name,
        model,
        optimizer,
        scaler if scaler is not None else torch.amp.GradScaler(device.type, enabled=False),
        loss_fn or loss_function(opts.label_smoothing, amp_dtype),
        device,
        opts.clip_norm,
        amp_dtype=amp_dtype,
        **kwargs,
    )
