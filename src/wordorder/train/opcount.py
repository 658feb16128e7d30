"""How many operators one training update dispatches, and whether it waits for the device.

On a GPU every operator is a kernel launch issued by the host; when an update issues thousands
of them, the GPU idles while Python and the dispatcher catch up (host-bound training). This
counts them on any machine: a :class:`~torch.utils._python_dispatch.TorchDispatchMode` sees
every ATen operator below autograd and autocast (so the backward pass, the casts autocast
inserts and the optimizer's kernels are counted; a composite operator appears as the operators
it decomposes into), and inside :func:`wordorder.device.cuda_paths` the CPU takes the code paths
CUDA takes. View operators (``view``, ``t``, ``transpose``, ...) launch no kernel on a GPU and
are counted apart.

A **host sync** is an operator whose result the host must read before it can go on:
``aten._local_scalar_dense`` (``.item()``, ``int(t)``, ``bool(t)``, ``if t:``) and the operators
whose output size depends on tensor values (``nonzero``, ``masked_select``, ``unique``, ...). On
CUDA each one stalls the host until the device has finished everything queued before it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from wordorder.device import cuda_paths

# Operators that only change a tensor's metadata (no kernel on the GPU).
VIEW_OPS = frozenset(
    "view _unsafe_view _reshape_alias reshape t transpose permute expand expand_as unsqueeze "
    "squeeze slice select split split_with_sizes chunk unbind narrow as_strided alias detach "
    "lift_fresh view_as unflatten flatten diagonal".split()
)
# Operators whose result the host reads, or whose output size depends on the values.
SYNC_OPS = frozenset(
    "_local_scalar_dense item is_nonzero equal allclose nonzero nonzero_static masked_select "
    "unique _unique _unique2 unique_dim unique_consecutive repeat_interleave".split()
)


@dataclass
class OpCount:
    """The operators of one call: ``total`` = ``launches`` (kernels on a GPU) + views."""

    by_op: Counter[str] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.by_op.values())

    @property
    def views(self) -> int:
        return sum(n for op, n in self.by_op.items() if op in VIEW_OPS)

    @property
    def launches(self) -> int:
        return self.total - self.views

    @property
    def syncs(self) -> int:
        return sum(n for op, n in self.by_op.items() if op in SYNC_OPS)

    def summary(self, top: int = 12) -> str:
        common = ", ".join(f"{op} {n}" for op, n in self.by_op.most_common(top))
        return (
            f"{self.total} aten calls ({self.launches} kernels, {self.views} views), "
            f"{self.syncs} host syncs; most: {common}"
        )


class _Counter(TorchDispatchMode):
    def __init__(self, count: OpCount) -> None:
        super().__init__()
        self.count = count

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count.by_op[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))


def count_ops(fn: Callable[[], Any], as_on_cuda: bool = True) -> OpCount:
    """The ATen operators ``fn()`` dispatches (``as_on_cuda``: through CUDA's code paths)."""
    count = OpCount()
    with cuda_paths() if as_on_cuda else nullcontext(), _Counter(count):
        fn()
    return count


def count_update(
    model: torch.nn.Module,
    batch: Any,
    amp_dtype: torch.dtype | None = torch.bfloat16,
    as_on_cuda: bool = True,
    stack: bool = True,
    **train_options: Any,
) -> OpCount:
    """The operators of one training update of ``model`` on ``batch`` (forward, backward,
    clipping, Adam), as the trainer's route runs it (:mod:`wordorder.train.routes`; ``stack``:
    the ``stacked`` route, its parameters stacked by shape after the first update); the first
    update (which creates the optimizer's state and the stacks) runs uncounted before it."""
    from wordorder.train.options import TrainOptions
    from wordorder.train.routes import StackedRoute, make_route
    from wordorder.train.update import loss_function, make_optimizer

    opts = TrainOptions(device="cpu", **{"lr": 1e-4, "warmup": 1, **train_options})
    device = next(model.parameters()).device
    optimizer = make_optimizer(model, opts)  # type: ignore[arg-type]
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    loss_fn = loss_function(opts.label_smoothing, amp_dtype)
    route = make_route(
        "stacked" if stack else "eager",
        model,  # type: ignore[arg-type]
        optimizer,
        scaler,
        loss_fn,
        device,
        opts.clip_norm,
        amp_dtype=amp_dtype,
    )
    n_tokens = batch.target_tokens  # the trainer counts them from the id lists: no tensor read

    def step() -> None:
        route.update([batch], n_tokens)

    with cuda_paths() if as_on_cuda else nullcontext():
        step()
    if isinstance(route, StackedRoute):
        route.stack()  # as its next update would: stacking is not part of the counted update
    return count_ops(step, as_on_cuda)
