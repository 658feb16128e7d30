"""The training pairs packed into flat arrays, so that a batch is padded with a few vectorised
gathers instead of Python loops over its rows.

:func:`wordorder.model_io.batching.collate` builds each batch from lists of ints row by row:
37 ms for a batch of 8,192 tokens (~600 Tanaka pairs) on this machine's CPU, per update. On a GPU
that is host time the device waits through (eole prepares batches in worker processes). Packed
once, a batch costs a fancy index per tensor; the tensors are exactly ``collate``'s (a property
test pins it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import torch

from wordorder.model_io.batching import Batch, Pair, _eos_value, round_width
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID


class _Packed:
    """Variable-length rows of ints in one flat array: row i is ``flat[start[i]:start[i] +
    length[i]]``."""

    def __init__(self, rows: Sequence[Sequence[int]]) -> None:
        self.length = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        self.start = np.zeros(len(rows), dtype=np.int64)
        np.cumsum(self.length[:-1], out=self.start[1:])
        total = int(self.length.sum())
        # one empty slot at the end, so that positions past a row's end index something valid
        self.flat = np.zeros(total + 1, dtype=np.int64)
        if total:
            self.flat[:total] = np.fromiter(
                (x for r in rows for x in r), dtype=np.int64, count=total
            )

    def gather(
        self, idx: np.ndarray, width: int, rows: int, shift: int = 0, trim: int = 0
    ) -> torch.Tensor:
        """(rows, width) LongTensor of the rows ``idx`` (each from ``shift`` on, ``trim`` shorter),
        padded with PAD; rows beyond ``len(idx)`` are PAD only."""
        starts = self.start[idx] + shift
        lengths = self.length[idx] - shift - trim
        cols = np.arange(width)
        pos = np.minimum(starts[:, None] + cols[None, :], len(self.flat) - 1)
        out = np.full((rows, width), PAD_ID, dtype=np.int64)
        out[: len(idx)] = np.where(cols[None, :] < lengths[:, None], self.flat[pos], PAD_ID)
        return torch.from_numpy(out)


class PackedPairs:
    """``pairs`` (and their source ``feats``) packed for :meth:`batch`.

    Sources are stored with their EOS, targets as BOS + target + EOS (the decoder input is all but
    the last, the output all but the first), each feature with its EOS value.
    """

    def __init__(
        self,
        pairs: Sequence[Pair],
        feats: Mapping[str, Sequence[Sequence[int]]] | None = None,
    ) -> None:
        self.src = _Packed([[*s, EOS_ID] for s, _ in pairs])
        self.tgt = _Packed([[BOS_ID, *t, EOS_ID] for _, t in pairs])
        self.feats = {
            name: _Packed([[*v, _eos_value(name, v)] for v in values])
            for name, values in (feats or {}).items()
        }

    def __len__(self) -> int:
        return len(self.src.length)

    def target_tokens(self, indices: Sequence[int]) -> int:
        """Target tokens of the examples ``indices`` (EOS included): the loss's unit."""
        return int(self.tgt.length[np.asarray(indices, dtype=np.int64)].sum()) - len(indices)

    def static_shape(
        self, indices: Sequence[int], batch_tokens: int, width_steps: int
    ) -> tuple[int, int, int]:
        """:func:`~wordorder.model_io.batching.static_shape` of the examples ``indices``."""
        idx = np.asarray(indices, dtype=np.int64)
        src = round_width(int(self.src.length[idx].max()), width_steps)
        tgt = round_width(int(self.tgt.length[idx].max()) - 1, width_steps)
        return max(len(idx), batch_tokens // max(src, tgt)), src, tgt

    def batch(self, indices: Sequence[int], shape: tuple[int, int, int] | None = None) -> Batch:
        """The examples ``indices`` padded into a :class:`Batch`, equal to
        ``collate(pairs, indices, feats, shape)``."""
        idx = np.asarray(indices, dtype=np.int64)
        if shape is None:
            rows = len(idx)
            src_width = int(self.src.length[idx].max()) if len(idx) else 0
            tgt_width = int(self.tgt.length[idx].max()) - 1 if len(idx) else 0
        else:
            rows, src_width, tgt_width = shape
            if len(idx) and (
                rows < len(idx)
                or src_width < self.src.length[idx].max()
                or tgt_width < self.tgt.length[idx].max() - 1
            ):
                raise ValueError(f"the batch does not fit the shape {shape}")
        feats = {name: packed.gather(idx, src_width, rows) for name, packed in self.feats.items()}
        return Batch(
            src=self.src.gather(idx, src_width, rows),
            tgt_in=self.tgt.gather(idx, tgt_width, rows, trim=1),
            tgt_out=self.tgt.gather(idx, tgt_width, rows, shift=1),
            feats=feats or None,
        )
