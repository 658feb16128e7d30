"""Token-budget batches of training pairs, and padding them into tensors.

Examples are sorted by length so that a batch holds sentences of similar length (little
padding), cut into batches whose padded size fits the token budget, and the batches are
visited in a seeded random order (a different order per epoch when the seed changes).

**Static shapes** (``width_steps`` > 0, for CUDA graphs, which need a bounded set of tensor
shapes): widths are counted rounded up to a ladder of ``width_steps`` values per doubling
(:func:`round_width`: exact below ``width_steps``, then steps of 1/``width_steps`` of the
octave, so at most that share of padding is added), and :func:`static_shape` gives the shape a
batch is padded to — its source and target widths rounded up, and as many rows as a batch of
its width holds, the missing rows all padding. The shapes are then one per pair of rounded
widths. A fixed multiple (of 8, say) would add far more: measured on Tanaka ja-en, +32 % padded
positions against +1 % for 8 steps per doubling (tests/system/test_static_shapes.py).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import torch
from torch import Tensor

from wordorder.model_io.features import EOS as FEATURE_EOS
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID

Pair = tuple[Sequence[int], Sequence[int]]


def example_length(pair: Pair) -> int:
    """Padded width an example needs: source + EOS, or target + BOS/EOS, whichever is longer."""
    return max(len(pair[0]), len(pair[1])) + 1


def round_width(width: int, steps: int) -> int:
    """``width`` rounded up to a ladder of ``steps`` values per doubling: unchanged up to
    ``steps``, then to a multiple of 2^(⌊log2 width⌋ − ⌊log2 steps⌋) (``steps`` = 8: 8, 9, ...,
    16, 18, ..., 32, 36, ...); 0 leaves every width as it is."""
    if steps <= 0 or width <= steps:
        return width
    step = 1 << max(width.bit_length() - steps.bit_length(), 0)
    return -(-width // step) * step


def make_batches(
    pairs: Sequence[Pair],
    batch_tokens: int,
    seed: int,
    shuffle: bool = True,
    width_steps: int = 0,
) -> list[list[int]]:
    """Split example indices into batches of at most ``batch_tokens`` padded tokens.

    The cost of a batch is ``max(example_length) * number of examples`` (padding included, on
    the longer of the two sides); an example whose length alone exceeds the budget gets a batch
    of its own. Every index appears in exactly one batch.

    Args:
        pairs: (source ids, target ids) without specials.
        batch_tokens: token budget per batch.
        seed: with ``shuffle``, decides the order of equal-length examples and of batches.
        shuffle: False gives batches in increasing length order (e.g. for evaluation).
        width_steps: widths are counted rounded up by :func:`round_width` (static shapes).
    Returns:
        Lists of indices into ``pairs``.
    """
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    if shuffle:
        rng.shuffle(order)  # random order among equal lengths (the sort below is stable)
    src = np.fromiter((len(s) for s, _ in pairs), dtype=np.int64, count=len(pairs))
    tgt = np.fromiter((len(t) for _, t in pairs), dtype=np.int64, count=len(pairs))
    exact = np.maximum(src, tgt) + 1  # example_length
    # Within one padded width, sources of similar length sit together: the width is set by the
    # longer side (the target, mostly), and sorting by target length next left a quarter of the
    # encoder's input as padding on en→ja (27 % → 6 %). Stable, so equal keys keep the shuffle.
    shuffled = np.asarray(order, dtype=np.int64)
    ranked = shuffled[np.lexsort((tgt[shuffled], src[shuffled], exact[shuffled]))]
    widths = {w: round_width(w, width_steps) for w in np.unique(exact).tolist()}
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for i, length in zip(ranked.tolist(), exact[ranked].tolist()):
        # Sorted ascending: the newest example sets the batch's padded width.
        new_width = max(width, widths[length])
        if current and new_width * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current, new_width = [], widths[length]
        current.append(i)
        width = new_width
    if current:
        batches.append(current)
    if shuffle:
        rng.shuffle(batches)
    return batches


def static_shape(
    pairs: Sequence[Pair], indices: Sequence[int], batch_tokens: int, width_steps: int
) -> tuple[int, int, int]:
    """(rows, source width, target width) the batch ``indices`` of :func:`make_batches` (with
    these ``width_steps``) is padded to: the widths (source + EOS, BOS + target) rounded by
    :func:`round_width`, and as many rows as the budget gives a batch of the larger width."""
    src = round_width(max(len(pairs[i][0]) for i in indices) + 1, width_steps)
    tgt = round_width(max(len(pairs[i][1]) for i in indices) + 1, width_steps)
    return max(len(indices), batch_tokens // max(src, tgt)), src, tgt


class Batch(NamedTuple):
    """Padded tensors of one batch (PAD = 0).

    Attributes:
        src: (B, S) source ids + EOS.
        tgt_in: (B, T) BOS + target ids (decoder input).
        tgt_out: (B, T) target ids + EOS (what the decoder must predict).
        feats: extra source inputs, each (B, S) (see :mod:`wordorder.model_io.features`).
    """

    src: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    feats: dict[str, Tensor] | None = None

    def to(self, device: torch.device | str) -> Batch:
        # To a GPU from page-locked memory: the copy queues behind the device's work and the host
        # goes on (from pageable memory it would wait for the device to finish first).
        pin = torch.device(device).type == "cuda"

        def move(t: Tensor) -> Tensor:
            return (t.pin_memory() if pin and t.is_cpu else t).to(device, non_blocking=True)

        feats = {k: move(v) for k, v in self.feats.items()} if self.feats else None
        return Batch(move(self.src), move(self.tgt_in), move(self.tgt_out), feats)

    @property
    def target_tokens(self) -> int:
        """Number of non-PAD target tokens (the unit of the loss and of tokens/s)."""
        return int(self.tgt_out.ne(PAD_ID).sum())


def pad(seqs: Sequence[Sequence[int]], width: int | None = None) -> Tensor:
    """Right-pad id lists with PAD into a (len(seqs), width) LongTensor (width: the longest)."""
    width = max((len(s) for s in seqs), default=0) if width is None else width
    if any(len(s) > width for s in seqs):
        raise ValueError(f"a sequence is longer than the padded width {width}")
    # One tensor from nested lists: far cheaper than a copy per row.
    return torch.tensor(
        [list(s) + [PAD_ID] * (width - len(s)) for s in seqs], dtype=torch.long
    ).view(len(seqs), width)


def pad_feature(name: str, seqs: Sequence[Sequence[int]], width: int | None = None) -> Tensor:
    """Pad one source feature of a batch like the source (ids + EOS): (B, width) LongTensor.

    The EOS position gets the feature EOS tag; for the integer inputs it is a position of its own:
    after the last for ``order``, one word more for ``word``, and 0 for ``head`` (the model hangs
    EOS under the root). Padding is 0.
    """
    return pad([list(s) + [_eos_value(name, s)] for s in seqs], width)


def _eos_value(name: str, seq: Sequence[int]) -> int:
    if name == "order":  # after the last position: n for subword positions, m for word positions
        return max(seq) + 1 if len(seq) else 0
    if name == "word":
        return seq[-1] + 1 if len(seq) else 0
    if name == "head":
        return 0
    return FEATURE_EOS


def collate(
    pairs: Sequence[Pair],
    indices: Sequence[int] | None = None,
    feats: Mapping[str, Sequence[Sequence[int]]] | None = None,
    shape: tuple[int, int, int] | None = None,
) -> Batch:
    """Pad the examples ``pairs[i] for i in indices`` (all of them by default) into a Batch.

    ``feats``: per-feature id lists aligned with ``pairs`` (one item per source subword).
    ``shape``: (rows, source width, target width) to pad to (:func:`static_shape`); the rows
    after the examples are padding only, which the loss and the attention masks ignore.
    """
    idx = range(len(pairs)) if indices is None else indices
    chosen = [pairs[i] for i in idx]
    rows, src_width, tgt_width = shape or (len(chosen), None, None)
    empty: list[list[int]] = [[] for _ in range(rows - len(chosen))]
    src = pad([list(s) + [EOS_ID] for s, _ in chosen] + empty, src_width)
    batch_feats = (
        {
            name: torch.cat(
                [
                    pad_feature(name, [values[i] for i in idx], src.size(1)),
                    torch.zeros(len(empty), src.size(1), dtype=torch.long),
                ]
            )
            for name, values in feats.items()
        }
        if feats
        else None
    )
    return Batch(
        src=src,
        tgt_in=pad([[BOS_ID] + list(t) for _, t in chosen] + empty, tgt_width),
        tgt_out=pad([list(t) + [EOS_ID] for _, t in chosen] + empty, tgt_width),
        feats=batch_feats,
    )
