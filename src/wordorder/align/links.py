"""Word alignments of a corpus in memory, and their check against it.

A corpus of alignments is either a list of ``[L, 2]`` int64 arrays (one per sentence, links
``(i, j)`` of source word i and target word j, 0-based) or, for the kernels, the flat form
``(links [N, 2] int64, offsets [S + 1] int64)`` where sentence ``s`` owns
``links[offsets[s]:offsets[s + 1]]``. Reading and writing them as Pharaoh files is
:mod:`wordorder.align.pharaoh` (which re-exports these functions).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from wordorder.errors import WordorderError


def flatten(links: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """List of ``[L, 2]`` arrays -> ``(links [N, 2], offsets [S + 1])``."""
    counts = np.fromiter((len(a) for a in links), dtype=np.int64, count=len(links))
    offsets = np.zeros(len(links) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    flat = (
        np.concatenate([np.asarray(a, np.int64).reshape(-1, 2) for a in links])
        if len(links)
        else None
    )
    return (flat if flat is not None else np.empty((0, 2), np.int64)), offsets


def unflatten(flat: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    """``(links [N, 2], offsets [S + 1])`` -> list of ``[L, 2]`` int64 arrays (views)."""
    if len(offsets) <= 1:
        return []
    return np.split(np.asarray(flat, np.int64).reshape(-1, 2), offsets[1:-1])


def check_ranges(
    flat: np.ndarray,
    offsets: np.ndarray,
    src_lens: Sequence[int] | np.ndarray,
    tgt_lens: Sequence[int] | np.ndarray,
    path: str | Path | None = None,
    on_error: str = "error",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check every link against its sentence's lengths.

    Args:
        on_error: ``"error"`` raises; ``"drop"`` removes out-of-range links; ``"clip"`` moves
            them onto the last word.

    Returns:
        ``(flat, offsets, bad_lines)``: the links (fixed when asked) and the 0-based lines
        that had out-of-range links.
    """
    n_sent = len(offsets) - 1
    if len(src_lens) != n_sent or len(tgt_lens) != n_sent:
        raise WordorderError(
            (
                f"{n_sent} alignment lines for {len(src_lens)} source and "
                f"{len(tgt_lens)} target sentences"
            ),
            path=path,
            hint=(
                "the alignment file must be line-aligned with the corpus; rerun the alignment step"
            ),
        )
    sl = np.asarray(src_lens, np.int64)
    tl = np.asarray(tgt_lens, np.int64)
    sent = np.repeat(np.arange(n_sent), np.diff(offsets))
    bad = (flat[:, 0] >= sl[sent]) | (flat[:, 1] >= tl[sent])
    if not bad.any():
        return flat, offsets, np.empty(0, np.int64)
    bad_lines = np.unique(sent[bad])
    if on_error == "error":
        k = int(np.flatnonzero(bad)[0])
        s = int(sent[k])
        raise WordorderError(
            f"link {flat[k, 0]}-{flat[k, 1]} (0-based) is out of range for a sentence pair of "
            f"{sl[s]} source"
            + (f" and {tl[s]} target words" if tl[s] < np.iinfo(np.int64).max else " words"),
            path=path,
            line=s + 1,
            hint=(
                "the alignment file does not match the corpus (another "
                "file, or another tokenization)"
            ),
        )
    if on_error == "clip":
        flat = np.stack(
            [np.minimum(flat[:, 0], sl[sent] - 1), np.minimum(flat[:, 1], tl[sent] - 1)], axis=1
        )
        return flat, offsets, bad_lines
    if on_error != "drop":
        raise ValueError(f"on_error must be error, drop or clip, not {on_error!r}")
    keep = ~bad
    new_offsets = np.zeros_like(offsets)
    np.cumsum(np.bincount(sent[keep], minlength=n_sent), out=new_offsets[1:])
    return flat[keep], new_offsets, bad_lines
