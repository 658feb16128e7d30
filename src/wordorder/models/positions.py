"""Sinusoidal absolute position encodings (Vaswani et al. 2017, section 3.5).

``PE[pos, 2i] = sin(pos / 10000^(2i/d))`` and ``PE[pos, 2i+1] = cos(pos / 10000^(2i/d))``:
sines and cosines interleaved, as in the paper (fairseq concatenates the two halves instead;
the two layouts are equivalent up to a fixed permutation of the dimensions).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def sinusoidal_table(length: int, dim: int) -> Tensor:
    """(length, dim) float32 table of position encodings for positions 0..length-1.

    ``dim`` must be even.
    """
    if dim % 2:
        raise ValueError(f"sinusoidal positions need an even dimension, got {dim}")
    # Computed in float64 so that entries for large positions are exact to float32 precision.
    pos = torch.arange(length, dtype=torch.float64)[:, None]
    inv_freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))
    angles = pos * inv_freq[None, :]  # (length, dim/2)
    table = torch.empty(length, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()


class SinusoidalPositions(nn.Module):
    """Looks up rows of the sinusoidal table; grows it on demand.

    The table is a non-persistent buffer: it is not stored in checkpoints (it is a pure
    function of ``dim``) and follows the module to its device. ``max_positions`` is only the
    initial size; longer inputs (e.g. long decoding) extend the table instead of failing.
    """

    table: Tensor  # the buffer registered in __init__

    def __init__(self, dim: int, max_positions: int = 1024) -> None:
        super().__init__()
        self.dim = dim
        self.register_buffer("table", sinusoidal_table(max_positions, dim), persistent=False)

    def forward(self, length: int, offset: int = 0) -> Tensor:
        """(length, dim) encodings of positions ``offset .. offset+length-1``.

        ``offset`` is the number of target positions already decoded in incremental
        decoding, so ``forward(1, offset=t)`` equals ``forward(t+1)[t:]``.
        """
        end = offset + length
        if end > self.table.size(0):
            size = max(end, 2 * self.table.size(0))
            self.table = sinusoidal_table(size, self.dim).to(self.table.device)
        return self.table[offset:end]

    def lookup(self, positions: Tensor, bound: int | None = None) -> Tensor:
        """Encodings of arbitrary positions: (...) LongTensor → (..., dim) (e.g. the preordered
        position of every source token). ``bound``: a known bound on the positions (e.g. the
        batch's width), to which the table grows without reading the positions back from the
        device (a sync, which a CUDA graph cannot capture)."""
        if bound is not None:
            needed = bound
        else:
            needed = int(positions.max()) + 1 if positions.numel() else 0
        if needed > self.table.size(0):
            self.forward(needed)  # grows the table
        return self.table[positions]
