"""A stand-in for CUDA graphs on the CPU, injected into the graphed update route
(:class:`wordorder.train.graphs.GraphedRoute`'s ``backend``) so that its bookkeeping runs in CI:
eager the first time a shape is seen, captured the second, replayed after; the step captured
after one eager step; accumulation into static gradients. A capture records the function and
runs nothing; a replay runs it again on the same tensors, as a CUDA graph reruns its kernels."""

from __future__ import annotations

import contextlib
from collections.abc import Callable


class _Replay:
    def __init__(self, fn: Callable[[], None], owner: ReplayedCalls) -> None:
        self.fn, self.owner = fn, owner

    def replay(self) -> None:
        self.owner.replays += 1
        self.fn()


class ReplayedCalls:
    """The interface of :class:`wordorder.train.graphs.CudaGraphs`, counting what it does."""

    def __init__(self, device: object = None) -> None:
        self.captures = 0
        self.replays = 0

    def side_stream(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def capture(self, fn: Callable[[], None]) -> _Replay:
        self.captures += 1
        return _Replay(fn, self)
