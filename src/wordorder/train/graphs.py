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
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from wordorder.errors import WordorderError
from wordorder.model_io.batching import Batch
from wordorder.models.base import Seq2SeqModel


@dataclass
class _Captured:
    """A graph of one micro-batch shape: its static inputs and the outputs of its replays."""

    graph: torch.cuda.CUDAGraph
    batch: Batch  # the static input tensors, on the device
    loss: torch.Tensor
    nll: torch.Tensor

    def load(self, batch: Batch) -> None:
        # From page-locked memory the copy is queued behind the running graph and the host goes
        # on (a copy from pageable memory waits for the device: measured 36 ms an update at
        # 25k tokens on an H100, time the host could have spent on the next batch).
        for static, new in zip(_tensors(self.batch), _tensors(batch)):
            static.copy_(new.pin_memory() if new.is_cpu else new, non_blocking=True)


def _tensors(batch: Batch) -> list[torch.Tensor]:
    feats = [batch.feats[k] for k in sorted(batch.feats)] if batch.feats else []
    return [batch.src, batch.tgt_in, batch.tgt_out, *feats]


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
    update never reads the device (``model.capture_blocker`` is None; every model today). ``auto``
    lets one config run on any device: graphs on a GPU, eager updates on a CPU."""
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


class GraphedUpdates:
    """Runs training updates of ``model`` through CUDA graphs (see the module docstring).

    ``loss_fn(model, batch)`` → (summed loss, summed NLL) of a batch on the device, as
    :func:`wordorder.train.update.batch_loss`; ``optimizer`` must be a capturable Adam whose
    learning rate is a device tensor (:func:`wordorder.train.update.make_optimizer`).
    """

    def __init__(
        self,
        model: Seq2SeqModel,
        optimizer: torch.optim.Optimizer,
        loss_fn,
        clip_norm: float,
        device: torch.device,
        max_graphs: int = 32,
    ) -> None:
        if device.type != "cuda":
            raise WordorderError(
                f"train.cuda_graphs needs a CUDA device, but this run trains on {device}",
                hint="set train.cuda_graphs: false, or train on a GPU",
            )
        self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
        self.clip_norm, self.device, self.max_graphs = clip_norm, device, max_graphs
        self.params = [p for p in model.parameters() if p.requires_grad]
        # the static gradients every graph adds into
        self.grads: list[torch.Tensor] = [torch.zeros_like(p) for p in self.params]
        for p, g in zip(self.params, self.grads):
            p.grad = g
        self.scale = torch.zeros((), device=device)
        self.stream = torch.cuda.Stream(device)
        self.pool = torch.cuda.graph_pool_handle()
        self.graphs: dict[tuple, _Captured] = {}
        self.seen: Counter[tuple] = Counter()
        self.step_graph: torch.cuda.CUDAGraph | None = None
        self.eager_steps = 0

    @property
    def shapes(self) -> int:
        """Number of captured micro-batch shapes."""
        return len(self.graphs)

    def update(self, group: Sequence[Batch], n_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
        """One optimizer update over the micro-batches ``group`` (on the host; copied in here)
        holding ``n_tokens`` target tokens; returns the summed loss and NLL (device scalars)."""
        main = torch.cuda.current_stream(self.device)
        self.stream.wait_stream(main)
        with torch.cuda.stream(self.stream):
            self.scale.fill_(1.0 / n_tokens)
            loss_sum = torch.zeros((), device=self.device)
            nll_sum = torch.zeros((), device=self.device)
            for batch in group:
                loss, nll = self._micro_batch(batch)
                loss_sum, nll_sum = loss_sum + loss, nll_sum + nll
            self._step()
        main.wait_stream(self.stream)
        return loss_sum, nll_sum

    def _forward_backward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        loss, nll = self.loss_fn(self.model, batch)
        (loss * self.scale).backward()
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
            captured = self._capture(key, batch.to(self.device))
        else:
            captured.load(batch)
        captured.graph.replay()
        return captured.loss, captured.nll

    def _capture(self, key: tuple, batch: Batch) -> _Captured:
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph, pool=self.pool, stream=self.stream):
                loss, nll = self._forward_backward(batch)
        except RuntimeError as e:
            raise WordorderError(
                f"this model cannot be captured in a CUDA graph ({str(e).splitlines()[0]})",
                hint="an operator in its update waits for the device; set train.cuda_graphs: false",
            ) from e
        captured = _Captured(graph, batch, loss, nll)
        self.graphs[key] = captured
        return captured

    def _step_ops(self) -> None:
        if self.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(self.params, self.clip_norm, foreach=True)
        self.optimizer.step()
        torch._foreach_zero_(self.grads)

    def _step(self) -> None:
        if self.step_graph is not None:
            self.step_graph.replay()
        elif self.eager_steps == 0:  # creates Adam's state, which the graph then updates
            self._step_ops()
            self.eager_steps += 1
        else:
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=self.pool, stream=self.stream):
                self._step_ops()
            self.step_graph = graph
            graph.replay()
