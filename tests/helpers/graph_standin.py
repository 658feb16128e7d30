"""A stand-in for CUDA graphs on the CPU, injected into the graphed update route
(:class:`wordorder.train.graphs.GraphedRoute`'s ``backend``) and the graphed beam search
(:class:`wordorder.decode.graph_buckets.DecodeGraphs`) so that their bookkeeping runs in CI:
eager the first time a shape is seen, captured the second, replayed after; the step captured
after one eager step; accumulation into static gradients; one graph per decoding bucket. A capture
records the function and runs nothing; a replay runs it again on the same tensors, as a CUDA graph
reruns its kernels.

What a real graph adds is that a replay reads and writes the very buffers of its capture, whatever
Python objects the caller holds since. ``ReplayedCalls(same_buffers=True)`` checks that: each
replay logs every operator with the addresses of the tensors it reads or writes that the replay
did not create (parameters, the captured state), and every replay of a graph must log what its
first did. A caller that re-allocated a buffer, or swapped a captured tensor for a new one, would
have a real graph read stale memory; here it fails the check.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class _BufferLog(TorchDispatchMode):
    """(operator, addresses of the tensors it used that came from outside the replay), in order."""

    def __init__(self) -> None:
        super().__init__()
        self.made: set[int] = set()  # storages created during the replay
        self.log: list[tuple[str, tuple[int, ...]]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # lift_fresh: a constant from Python (``x[:, i] = -inf``), a kernel argument on CUDA
        fresh = func is torch.ops.aten.lift_fresh.default
        used = [
            t.data_ptr()
            for t in tree_leaves((args, kwargs or {}))
            if isinstance(t, torch.Tensor)
            and t.numel()
            and not fresh
            and t.untyped_storage().data_ptr() not in self.made
        ]
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.numel():
                self.made.add(t.untyped_storage().data_ptr())
        self.log.append((str(func), tuple(used)))
        return out


class _Replay:
    def __init__(self, fn: Callable[[], None], owner: ReplayedCalls) -> None:
        self.fn, self.owner = fn, owner
        self.first: list[tuple[str, tuple[int, ...]]] | None = None

    def replay(self) -> None:
        self.owner.replays += 1
        if not self.owner.same_buffers:
            self.fn()
            return
        with _BufferLog() as log:
            self.fn()
        if self.first is None:
            self.first = log.log
        elif log.log != self.first:
            diff = next(
                (i for i, (a, b) in enumerate(zip(log.log, self.first)) if a != b),
                min(len(log.log), len(self.first)),
            )
            raise AssertionError(
                f"replay {self.owner.replays} of a graph used other buffers than its first: "
                f"operator {diff} {log.log[diff : diff + 1]} against {self.first[diff : diff + 1]}"
            )


class ReplayedCalls:
    """The interface of :class:`wordorder.cuda_graphs.CudaGraphs`, counting what it does;
    ``same_buffers``: every replay of a graph must use the buffers its first replay used."""

    def __init__(self, device: object = None, same_buffers: bool = False) -> None:
        self.captures = 0
        self.replays = 0
        self.same_buffers = same_buffers

    def side_stream(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def capture(self, fn: Callable[[], None]) -> Any:
        self.captures += 1
        return _Replay(fn, self)
