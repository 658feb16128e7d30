"""The CUDA graph backend shared by the graphed training updates (:mod:`wordorder.train.graphs`)
and the graphed beam search (:mod:`wordorder.decode.graph_buckets`).

Graphs are captured on a side stream into one memory pool: they never run at the same time, and
each writes what it produces into tensors allocated outside the capture (static gradients, loss
scalars, search buffers), so nothing allocated inside one capture is read after it ends, and the
graphs may replay in any order (the training's replay in its shuffled batch order). The callers
take any object with this interface (``side_stream``, ``capture``), so their bookkeeping runs in
CI with a stand-in (tests/helpers/graph_standin.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch

from wordorder.errors import WordorderError


class CudaGraphs:
    """The graphs of a CUDA device; ``option`` names the setting that asked for them (for the
    error on another device)."""

    def __init__(self, device: torch.device, option: str = "train.cuda_graphs") -> None:
        if device.type != "cuda":
            raise WordorderError(
                f"{option} needs a CUDA device, but this runs on {device}",
                hint=f"set {option}: false (or auto), or run on a GPU",
            )
        self.device = device
        self.stream = torch.cuda.Stream(device)
        self.pool = torch.cuda.graph_pool_handle()

    @contextlib.contextmanager
    def side_stream(self) -> Iterator[None]:
        """Work queued on the capture stream behind the main stream's (eager warm-up steps run
        there, as ``torch.cuda.graph`` asks)."""
        main = torch.cuda.current_stream(self.device)
        self.stream.wait_stream(main)
        with torch.cuda.stream(self.stream):
            yield
        main.wait_stream(self.stream)

    def capture(self, fn: Callable[[], None]) -> Any:
        """A graph of the kernels ``fn`` issues (run by its ``replay()``, not now)."""
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self.pool, stream=self.stream):
            fn()
        return graph
