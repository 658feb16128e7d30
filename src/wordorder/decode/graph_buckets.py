"""CUDA graphs of the static beam search, one per shape bucket, reused by every batch of the
bucket (``decode.cuda_graphs``).

A graph replays its kernels on the buffers it was captured on, so the graph of one batch serves
another only if the other has the same shapes and its values are copied into those buffers.
Batches are therefore cut to a few shapes (:class:`Buckets`): the source width rounded up to a
ladder of ``WIDTH_STEPS`` values per doubling (:func:`~wordorder.model_io.batching.round_width`,
as the graphed training's batches; padding, masked as all padding is), as many rows as the
bucket's fullest batch (empty sentences fill the rest; their translations are dropped), and the
search's width from the bucket's source width. The first batch of a bucket runs ``warmup`` steps
eagerly, captures one step and replays it; the next batches of the bucket copy their encoder state
and a fresh search state into the captured buffers (:func:`copy_into`) and replay from the first
step. Each capture synchronises the device and empties the caching allocator; once per bucket
instead of once per batch is what this saves. (Counted on newstest2014 de, 3,003 lines in 8k BPE
pieces: 28 batches of 4,000 tokens, 13 buckets at 1.07× the padded source tokens; at 1,000
tokens 109 batches, 16 buckets. A multiple of 8 instead: 1.31× on Tanaka's short sentences.)

Batches come longest first (:func:`wordorder.decode.batches.length_batches`), so a bucket never
returns once the next has started: its graph and buffers are freed then, and one bucket's memory
is alive at a time. (This also keeps a graph from outliving a tensor it read that a wider batch
re-allocates, such as the Transformer's position table.)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from wordorder.errors import WordorderError
from wordorder.model_io.batching import round_width

#: Source widths are rounded up to a ladder of this many values per doubling.
WIDTH_STEPS = 4


def copy_into(dst: Any, src: Any) -> None:
    """Copy the tensors of ``src`` into those of ``dst`` in place: the same structure
    (dataclasses, lists, tuples, dicts of tensors) of the same shapes. Other values are the
    captured state's own bookkeeping (e.g. the names of the fields a step replaces) and stay."""
    if isinstance(dst, torch.Tensor):
        if not isinstance(src, torch.Tensor) or src.shape != dst.shape:
            raise WordorderError(
                f"a graphed search's buffer of shape {tuple(dst.shape)} cannot take "
                f"{tuple(src.shape) if isinstance(src, torch.Tensor) else type(src).__name__}",
                hint="set decode.cuda_graphs: false and report this",
            )
        dst.copy_(src)
    elif dataclasses.is_dataclass(dst) and not isinstance(dst, type):
        for f in dataclasses.fields(dst):
            copy_into(getattr(dst, f.name), getattr(src, f.name))
    elif isinstance(dst, (list, tuple)) and not all(isinstance(d, str) for d in dst):
        if len(dst) != len(src):
            raise WordorderError(
                f"a graphed search's state holds {len(dst)} items where the batch has {len(src)}",
                hint="set decode.cuda_graphs: false and report this",
            )
        for d, s in zip(dst, src):
            copy_into(d, s)
    elif isinstance(dst, dict):
        for k in dst:
            copy_into(dst[k], src[k])


@dataclass(frozen=True)
class Buckets:
    """The batch shapes of a graphed translation.

    ``width(n)`` rounds a source width (ids + EOS) up to its bucket (4, 5, 6, 7, 8, 10, ..., 16,
    20, ... for ``WIDTH_STEPS`` = 4); after the batches are cut on
    those widths, ``rows`` maps each bucket width to the rows of its fullest batch (every batch
    of the bucket is padded to them) and ``steps(width)`` is the search's width for a bucket:
    the length limit of a source filling it, plus one (t = 0 .. limit)."""

    rows: dict[int, int]
    max_len_a: float
    max_len_b: int

    @staticmethod
    def width(n: int, steps: int = WIDTH_STEPS) -> int:
        return round_width(n, steps)

    @classmethod
    def of(
        cls,
        batches: Sequence[Sequence[int]],
        widths: Sequence[int],
        max_len_a: float,
        max_len_b: int,
    ) -> Buckets:
        """``batches`` (indices, longest first) cut on the bucket ``widths`` of the sentences."""
        rows: dict[int, int] = {}
        for batch in batches:
            w = widths[batch[0]]
            rows[w] = max(rows.get(w, 0), len(batch))
        return cls(rows, max_len_a, max_len_b)

    def steps(self, width: int) -> int:
        # as beam.max_lengths: floor(a · n + b) target tokens for n source tokens (EOS aside)
        return max(math.floor(self.max_len_a * (width - 1) + self.max_len_b), 0) + 1


@dataclass
class _Bucket:
    key: Hashable
    state: Any  # the model's static decoder state: the captured buffers
    search: Any  # the search's state (static_beam.SearchState): the captured buffers
    graph: Any = None


class DecodeGraphs:
    """The graph of one search step per shape bucket, kept while batches of the bucket come.

    ``backend``: :class:`wordorder.cuda_graphs.CudaGraphs` of the device, or a stand-in with its
    interface (tests). ``captures`` and ``replays`` count what it did."""

    def __init__(self, backend: Any, warmup: int = 2) -> None:
        self.backend, self.warmup = backend, warmup
        self.captures = 0
        self.replays = 0
        self._bucket: _Bucket | None = None

    def search(
        self,
        key: Hashable,
        state: Any,
        search: Any,
        step: Callable[[Any, Any], None],
        steps: int,
        check_every: int,
    ) -> Any:
        """Run the search of a batch: ``state`` and ``search`` its fresh states, ``step(state,
        search)`` one step of it in place, ``key`` everything the captured step depends on
        (shapes, beam size, n-best, length penalty). Returns the search state holding the
        result (the bucket's buffers, not ``search``, when the bucket's graph was reused)."""
        bucket = self._bucket
        start = 0
        if bucket is not None and bucket.key == key and bucket.graph is not None:
            copy_into(bucket.state, state)
            copy_into(bucket.search, search)
        else:
            self._bucket = None  # the last bucket's graph and buffers go before the capture
            bucket = _Bucket(key, state, search)
            with self.backend.side_stream():
                # eager steps first (lazy initialisations stay out of the graph); they are real
                # steps of this batch's search
                start = min(self.warmup, steps)
                for _ in range(start):
                    step(state, search)
                if start < steps:
                    bucket.graph = self.backend.capture(lambda: step(state, search))
                    self.captures += 1
            self._bucket = bucket
        for t in range(start, steps):
            bucket.graph.replay()
            self.replays += 1
            if (t + 1) % check_every == 0 and bool(bucket.search.done.all()):
                break
        return bucket.search
