"""Token-budget batches of training pairs, and padding them into tensors.

Examples are sorted by length so that a batch holds sentences of similar length (little
padding), cut into batches whose padded size fits the token budget, and the batches are
visited in a seeded random order (a different order per epoch when the seed changes).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import torch
from torch import Tensor

from wordorder.model_io.features import EOS as FEATURE_EOS
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID

Pair = tuple[Sequence[int], Sequence[int]]


def example_length(pair: Pair) -> int:
    """Padded width an example needs: source + EOS, or target + BOS/EOS, whichever is longer."""
    return max(len(pair[0]), len(pair[1])) + 1


def make_batches(
    pairs: Sequence[Pair], batch_tokens: int, seed: int, shuffle: bool = True
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
    Returns:
        Lists of indices into ``pairs``.
    """
    rng = random.Random(seed)
    order = list(range(len(pairs)))
    if shuffle:
        rng.shuffle(order)  # random order among equal lengths (the sort below is stable)
    lengths = [example_length(pairs[i]) for i in range(len(pairs))]
    # Within one padded width, sources of similar length sit together: the width is set by the
    # longer side (the target, mostly), and sorting by target length next left a quarter of the
    # encoder's input as padding on en→ja (27 % → 6 %).
    order.sort(key=lambda i: (lengths[i], len(pairs[i][0]), len(pairs[i][1])))
    batches: list[list[int]] = []
    current: list[int] = []
    width = 0
    for i in order:
        # Sorted ascending: the newest example sets the batch's padded width.
        new_width = max(width, lengths[i])
        if current and new_width * (len(current) + 1) > batch_tokens:
            batches.append(current)
            current, new_width = [], lengths[i]
        current.append(i)
        width = new_width
    if current:
        batches.append(current)
    if shuffle:
        rng.shuffle(batches)
    return batches


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
        def move(t: Tensor) -> Tensor:
            return t.to(device, non_blocking=True)

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
) -> Batch:
    """Pad the examples ``pairs[i] for i in indices`` (all of them by default) into a Batch.

    ``feats``: per-feature id lists aligned with ``pairs`` (one item per source subword).
    """
    idx = range(len(pairs)) if indices is None else indices
    chosen = [pairs[i] for i in idx]
    src = pad([list(s) + [EOS_ID] for s, _ in chosen])
    batch_feats = (
        {
            name: pad_feature(name, [values[i] for i in idx], src.size(1))
            for name, values in feats.items()
        }
        if feats
        else None
    )
    return Batch(
        src=src,
        tgt_in=pad([[BOS_ID] + list(t) for _, t in chosen]),
        tgt_out=pad([list(t) + [EOS_ID] for _, t in chosen]),
        feats=batch_feats,
    )
