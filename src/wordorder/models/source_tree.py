"""The source dependency tree of a batch, from the ``word``/``head`` inputs, for the RNN models
that read syntax: syntax-distance masks (Chen et al. 2018) and dependency units (Chen et al.
2017).

Inputs (see :mod:`wordorder.model_io.features`), each (B, S) long and padded like the source:
``word`` = index of the word each subword belongs to (the source EOS is one more word),
``head`` = the 1-based head of that word (0 = root). The EOS "word" hangs under the root word
(its head input is 0; it is re-attached here), so every position has a finite distance to
every other and a context centred on EOS still has syntactic neighbours.

Subword-level tree (for dependency units): the first piece of a word hangs under the first piece
of its head word, and the other pieces of a word under its first piece.
"""

from __future__ import annotations

import torch
from torch import Tensor

from wordorder.device import cpu_kernels
from wordorder.syntax.distance import PAD_DISTANCE, batch_project_to_subwords, batch_tree_distances


def word_heads(word: Tensor, head: Tensor, valid: Tensor) -> tuple[Tensor, Tensor]:
    """Word-level heads of each sentence, the EOS word attached to the root.

    Args:
        word, head: (B, S) long inputs; valid: (B, S) bool, False at padding.
    Returns:
        heads: (B, J) long, 1-based (0 = root); lengths: (B,) number of words including EOS.
    """
    word = word.masked_fill(~valid, 0)
    lengths = torch.where(valid, word + 1, torch.zeros_like(word)).amax(dim=1)  # (B,)
    if cpu_kernels(word):
        j = max(int(lengths.max()), 1) if word.numel() else 1
    else:  # no more words than pieces: a width known without reading the device
        j = max(word.size(1), 1)
    heads = torch.zeros(word.size(0), j + 1, dtype=torch.long, device=word.device)
    # Every piece of a word carries the same head, so a scatter of any of them is exact;
    # padding goes to a spare last column (it must not overwrite word 0's head).
    heads.scatter_(1, word.masked_fill(~valid, j), head)
    heads = heads[:, :j]
    words = torch.arange(j, device=word.device)[None, :]
    real = words < (lengths - 1)[:, None]  # the words before EOS
    is_root = real & heads.eq(0)
    # (B,) first root word
    root = torch.where(is_root, words, torch.full_like(heads, j)).amin(dim=1)
    eos = (lengths - 1).clamp(min=0)
    eos_head = torch.where(root < j, root + 1, torch.zeros_like(root))  # no words: EOS is the root
    heads.scatter_(1, eos[:, None], eos_head[:, None])
    return heads.masked_fill(words >= lengths[:, None], 0), lengths


def subword_distances(word: Tensor, head: Tensor, valid: Tensor) -> Tensor:
    """(B, S, S) long syntax distances between subwords (pieces of a word share its row and
    column); ``PAD_DISTANCE`` where either side is padding."""
    heads, lengths = word_heads(word, head, valid)
    dist = batch_tree_distances(heads, lengths, sync_free=not cpu_kernels(word))
    sub = batch_project_to_subwords(dist, word.masked_fill(~valid, 0))
    pair = valid[:, :, None] & valid[:, None, :]
    return sub.masked_fill(~pair, PAD_DISTANCE)


def subword_parents(word: Tensor, head: Tensor, valid: Tensor) -> Tensor:
    """(B, S) long parent position of each subword in the subword-level tree; −1 for the root
    and at padding."""
    heads, _ = word_heads(word, head, valid)
    b, s = word.shape
    w = word.masked_fill(~valid, 0)
    pos = torch.arange(s, device=word.device).expand(b, s)
    # First piece of every word: the smallest position holding it.
    first = torch.full((b, heads.size(1)), s, dtype=torch.long, device=word.device)
    first.scatter_reduce_(1, w, torch.where(valid, pos, torch.full_like(pos, s)), reduce="amin")
    own_first = first.gather(1, w)  # (B, S)
    word_head = heads.gather(1, w)  # (B, S) 1-based head of the piece's word
    head_first = first.gather(1, (word_head - 1).clamp(min=0))
    parent = torch.where(pos.eq(own_first), torch.where(word_head > 0, head_first, -1), own_first)
    return parent.masked_fill(~valid, -1)


def dependency_units(parent: Tensor, valid: Tensor, size: int) -> Tensor:
    """Chen et al. 2017's unit ⟨parent, siblings, children⟩ of every position.

    Args:
        parent: (B, S) long parents (−1 = root); valid: (B, S) bool; size: M slots.
    Returns:
        (B, S, M) long positions: slot 0 the parent (−2 for the root: the ``<null>`` word),
        then siblings, then children, each in sentence order, truncated to M; −1 = empty slot.
        The source EOS (the last real position) has a unit but is nobody's sibling or child.
    """
    b, s = parent.shape
    pos = torch.arange(s, device=parent.device)
    pk, pj = parent[:, None, :], parent[:, :, None]  # parent of k (columns), of j (rows)
    member = valid & pos[None, :].ne(valid.sum(dim=1, keepdim=True) - 1)
    pair = valid[:, :, None] & member[:, None, :]
    sibling = pair & pk.eq(pj) & pj.ge(0) & ~torch.eye(s, dtype=torch.bool, device=parent.device)
    child = pair & pk.eq(pos[None, :, None])
    big = 3 * s  # sorts after every member
    # (B, S, S)
    key = torch.where(sibling, pos, torch.where(child, s + pos, torch.full_like(pos, big)))
    k = min(size - 1, s)
    order = key.topk(k, dim=-1, largest=False).values if k > 0 else key[..., :0]
    members = torch.where(order >= big, -1, order % s)
    slot0 = torch.where(parent >= 0, parent, torch.full_like(parent, -2))[..., None]
    units = torch.cat([slot0, members], dim=-1)
    if units.size(-1) < size:
        units = torch.cat([units, units.new_full((b, s, size - units.size(-1)), -1)], dim=-1)
    return units.masked_fill(~valid[..., None], -1)
