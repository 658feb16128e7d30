"""Training updates replayed from CUDA graphs (``train.cuda_graphs``).

An eager update issues a few thousand operators from Python (:mod:`wordorder.train.opcount`),
and a GPU finishes a Transformer-base update on 8k tokens faster than the host can issue them:
the device idles. A CUDA graph records the kernels of one forward + backward once and replays
them with one call. This needs fixed tensor shapes and addresses, hence:

* batches padded to a few static shapes (:func:`~wordorder.model_io.batching.static_shape`),
  one graph per shape (a shape seen for the first time runs eagerly, the next time it is
  captured; past ``max_graphs`` shapes the rest run eagerly), all drawing their working memory
  from one pool (they never run at the same time);
* gradients allocated once, before any capture: every micro-batch adds into them in place, so
  gradient accumulation needs nothing more, and the step zeroes them;
* the optimizer step (clipping, fused Adam with ``capturable`` and a learning rate held in a
  device tensor, then the zeroing) captured as a graph of its own, after one eager step has
  created Adam's state; the scheduler writes the rate into that tensor between replays;
* the loss scale 1 / (target tokens of the update) in a device scalar filled before each update.

Dropout stays random: graph replays advance the CUDA generator's offset. What must not happen
inside an update is a host sync (``.item()``, ``nonzero``...): capture fails on it, with an error
saying to turn the option off.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from wordorder.cuda_graphs import CudaGraphs
from wordorder.errors import WordorderError
from wordorder.gpu_table import family_of, precision_of, tried, untried
from wordorder.model_io.batching import Batch
from wordorder.models.base import Seq2SeqModel
from wordorder.train.step import StepOps, accumulate


@dataclass
class _Captured:
    """A graph of one micro-batch shape: its static inputs and the outputs of its replays."""

    graph: Any  # a torch.cuda.CUDAGraph, or what a stand-in backend captures
    batch: Batch  # the static input tensors, on the device
    loss: torch.Tensor
    nll: torch.Tensor

    def load(self, batch: Batch) -> None:
        # From page-locked memory the copy is queued behind the running graph and the host goes
        # on (a copy from pageable memory waits for the device: measured 36 ms an update at
        # 25k tokens on an H100, time the host could have spent on the next batch).
        for static, new in zip(_tensors(self.batch), _tensors(batch)):
            static.copy_(
                new.pin_memory() if new.is_cpu and static.is_cuda else new, non_blocking=True
            )


def _tensors(batch: Batch) -> list[torch.Tensor]:
    feats = [batch.feats[k] for k in sorted(batch.feats)] if batch.feats else []
    return [batch.src, batch.tgt_in, batch.tgt_out, *feats]


def _own(batch: Batch) -> Batch:
    """The graph's own input tensors: later batches are copied into them, so they must not be
    the caller's (on a CPU, ``Batch.to`` returns the same tensors)."""
    feats = {k: v.clone() for k, v in batch.feats.items()} if batch.feats else batch.feats
    return Batch(batch.src.clone(), batch.tgt_in.clone(), batch.tgt_out.clone(), feats)


def _shape_key(batch: Batch) -> tuple:
    feats = tuple((k, tuple(v.shape)) for k, v in sorted((batch.feats or {}).items()))
    return tuple(batch.src.shape), tuple(batch.tgt_in.shape), feats


def use_graphs(
    setting: bool | str,
    device: torch.device,
    model: Seq2SeqModel,
    processes: int,
    amp_dtype: torch.dtype | None,
) -> bool:
    """Whether a run's updates replay from CUDA graphs. ``train.cuda_graphs``: ``true`` demands
    them (a :class:`WordorderError` saying why where they cannot be used), ``auto`` uses them
    where they can be: on a CUDA device, in one process, in bf16 or float32, for a model whose
    update never reads the device (``model.capture_blocker`` is None; every model today), and
    only where the route table says graphs passed the GPU checks with the running torch
    (:mod:`wordorder.gpu_table`). ``auto`` lets one config run on any device."""
    if not setting:
        return False
    if device.type != "cuda":
        why = f"it needs a CUDA device, and this run trains on {device}"
    elif processes > 1 or amp_dtype == torch.float16:
        from wordorder.device import precision_name

        why = (
            "it needs one process and bf16 or float32 "
            f"({processes} process{'es' if processes > 1 else ''}, {precision_name(amp_dtype)} "
            "here; fp16's loss scaling "
            "cannot be captured)"
        )
    elif model.capture_blocker is not None:
        why = f"{type(model).__name__} cannot be captured: {model.capture_blocker}"
    elif setting == "auto" and not tried("graphed", precision_of(amp_dtype), family_of(model)):
        why = untried("graphed", precision_of(amp_dtype), family_of(model))
    else:
        return True
    if setting == "auto":
        if device.type == "cuda":
            print(f"train.cuda_graphs auto: eager updates ({why})", flush=True)
        return False
    raise WordorderError(
        f"train.cuda_graphs: {why}",
        hint="set train.cuda_graphs: auto (graphs where they can be used) or false",
    )


class GraphedRoute:
    """Training updates of ``model`` through graphs (see the module docstring): the route
    ``graphed`` of :mod:`wordorder.train.routes`, sharing its :class:`StepOps`.

    ``loss_fn(model, batch)`` → (summed loss, summed NLL) of a batch on the device, as
    :func:`wordorder.train.update.batch_loss`; ``optimizer`` a capturable Adam whose learning
    rate is a tensor on the parameters' device (:func:`wordorder.train.update.prepare_optimizer`).
    ``backend``: :class:`CudaGraphs` of ``device`` unless given.
    """

    name = "graphed"

    def __init__(
        self,
        model: Seq2SeqModel,
        optimizer: torch.optim.Optimizer,
        loss_fn: Callable[..., tuple[torch.Tensor, torch.Tensor]],
        clip_norm: float,
        device: torch.device,
        max_graphs: int = 32,
        backend: Any = None,
    ) -> None:
        self.backend = backend if backend is not None else CudaGraphs(device)
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.device, self.max_graphs = device, max_graphs
        self.params = [p for p in model.parameters() if p.requires_grad]
        # loss scaling cannot be captured (use_graphs refuses fp16): a disabled scaler
        scaler = torch.amp.GradScaler(device.type, enabled=False)
        self.ops = StepOps(optimizer, scaler, self.params, clip_norm, foreach=True)
        # the static gradients every graph adds into
        self.grads: list[torch.Tensor] = [torch.zeros_like(p) for p in self.params]
        for p, g in zip(self.params, self.grads):
            p.grad = g
        self.scale = torch.zeros((), device=device)
        self.graphs: dict[tuple, _Captured] = {}
        self.seen: Counter[tuple] = Counter()
        self.step_graph: Any = None
        self.eager_steps = 0

    @property
    def shapes(self) -> int:
        """Number of captured micro-batch shapes."""
        return len(self.graphs)

    def update(self, group: Sequence[Batch], n_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
        """One optimizer update over the micro-batches ``group`` (on the host; copied in here)
        holding ``n_tokens`` target tokens; returns the summed loss and NLL (device scalars)."""
        with self.backend.side_stream():
            self.scale.fill_(1.0 / n_tokens)
            sums = accumulate(group, lambda _k, batch: self._micro_batch(batch), self.device)
            self._step()
        return sums

    def _forward_backward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        loss, nll = self.loss_fn(self.model, batch)
        self.ops.backward(loss, self.scale)
        return loss.detach(), nll

    def _micro_batch(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        key = _shape_key(batch)
        captured = self.graphs.get(key)
        if captured is None:
            self.seen[key] += 1
            if self.seen[key] == 1 or len(self.graphs) >= self.max_graphs:
                # the first time eagerly: lazy initialisations (cuBLAS, kernels) stay out of
                # the capture
                return self._forward_backward(batch.to(self.device))
            captured = self._capture(key, _own(batch.to(self.device)))
        else:
            captured.load(batch)
        captured.graph.replay()
        return captured.loss, captured.nll

    def _capture(self, key: tuple, batch: Batch) -> _Captured:
        loss, nll = torch.zeros((), device=self.device), torch.zeros((), device=self.device)

        def forward_backward() -> None:  # its outputs land in the static loss and nll
            out = self._forward_backward(batch)
            loss.copy_(out[0])
            nll.copy_(out[1])

        try:
            graph = self.backend.capture(forward_backward)
        except RuntimeError as e:
            raise WordorderError(
                f"this model cannot be captured in a CUDA graph ({str(e).splitlines()[0]})",
                hint="an operator in its update waits for the device; set train.cuda_graphs: false",
            ) from e
        captured = _Captured(graph, batch, loss, nll)
        self.graphs[key] = captured
        return captured

    def _step_ops(self) -> None:
        self.ops.step()
        torch._foreach_zero_(self.grads)  # in place: the graphs add into these tensors

    def _step(self) -> None:
        if self.step_graph is not None:
            self.step_graph.replay()
        elif self.eager_steps == 0:  # creates Adam's state, which the graph then updates
            self._step_ops()
            self.eager_steps += 1
        else:
            self.step_graph = self.backend.capture(self._step_ops)
            self.step_graph.replay()
