"""Decoding with static shapes for a family whose decoder state never changes shape (the RNNs):
the step that a CUDA graph can capture.

An RNN decoder carries its hidden state and its attention's last weights from step to step,
each of a fixed size; only the rows change (beams are reordered, finished sentences dropped).
Here the state is expanded to K rows per sentence once, each step's new tensors are copied into
the same buffers, and a reorder gathers the rows of the tensors a step changes (the source side
is the same for all a sentence's rows, so it stays). With the step number on the device, one
step is the same kernels on the same buffers at every t (:mod:`wordorder.decode.static_beam`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from wordorder.models.base import EncoderOut, select_rows


@dataclass
class FixedState:
    """A family's own decoder state (N = B·K rows) held in fixed buffers.

    Attributes:
        inner: the family's state; its tensors are the buffers, updated in place.
        t: (1,) long, the step the next call decodes.
        moving: which fields of ``inner`` the last step replaced: the ones a reorder
            gathers.
    """

    inner: Any
    t: Tensor
    moving: list[str] = dataclasses.field(default_factory=list)

    def advance(self) -> None:
        self.t.add_(1)


class FixedStateDecoding:
    """The static-shape step of a family with fixed-size decoder states (mixed into the model
    class; ``init_state`` and ``step`` are the model's)."""

    static_decoding = True

    def init_state(self, enc: Any) -> Any:
        raise NotImplementedError

    def step(self, prev: Tensor, state: Any) -> tuple[Tensor, Any]:
        raise NotImplementedError

    def static_state(self, enc: EncoderOut, beams: int, width: int) -> FixedState:
        """The state of ``beams`` rows per encoded sentence (``width``: unused, the state does
        not grow)."""
        b, dev = enc.memory.size(0), enc.memory.device
        rows = torch.arange(b, device=dev)[:, None].expand(b, beams).reshape(-1)
        inner = select_rows(self.init_state(enc), rows)
        return FixedState(inner=inner, t=torch.zeros(1, dtype=torch.long, device=dev))

    def static_step(self, prev: Tensor, state: FixedState) -> Tensor:
        """prev: (N,) ids → (N, V) float32 log-probs; the new state is copied into the buffers."""
        lp, new = self.step(prev, state.inner)
        moving = []
        for f in dataclasses.fields(new):
            old, value = getattr(state.inner, f.name), getattr(new, f.name)
            if value is not old and value is not None:
                old.copy_(value)
                moving.append(f.name)
        state.moving = moving
        return lp

    def static_reorder(self, state: FixedState, rows: Tensor) -> None:
        """Rows ``rows`` ((N,) long, each within its own sentence's beams) of what a step
        changes become rows 0..N-1, in place."""
        for name in state.moving:
            buffer = getattr(state.inner, name)
            buffer.copy_(buffer.index_select(0, rows))
