"""Alignment error rate (Och & Ney 2003) and the awesome-align gold format.

With hypothesis links A, sure links S and possible links P (S ⊆ P; S is added to P here),
counted over the whole corpus before dividing:

- precision = |A∩P| / |A|
- recall    = |A∩S| / |S|
- AER       = 1 − (|A∩S| + |A∩P|) / (|A| + |S|)

Links are sets per sentence: duplicates count once.

Gold files (awesome-align ``*.gold``) are 1-based, ``i-j`` sure and ``ipj`` possible; the
``*.src-tgt`` files hold ``source ||| target`` per line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wordorder.align.pharaoh import check_ranges, flatten, read_pharaoh, unflatten
from wordorder.errors import WordorderError
from wordorder.io import iter_lines

_SHIFT = 1 << 21  # word indices stay below this: a link (s, i, j) becomes one int64 key


def _keys(links: Sequence[np.ndarray]) -> np.ndarray:
    """Unique int64 keys ``[K]`` for the (sentence, i, j) triples of a
    corpus of ``[L, 2]`` arrays."""
    flat, offsets = flatten(links)
    if len(flat) and (flat.min() < 0 or flat.max() >= _SHIFT):
        raise ValueError("alignment indices must be in [0, 2**21)")
    sent = np.repeat(np.arange(len(links), dtype=np.int64), np.diff(offsets))
    return np.unique((sent * _SHIFT + flat[:, 0]) * _SHIFT + flat[:, 1])


def aer(
    predicted: Sequence[np.ndarray], sure: Sequence[np.ndarray], possible: Sequence[np.ndarray]
) -> dict:
    """Corpus-level precision, recall and AER.

    Args:
        predicted, sure, possible: one ``[L, 2]`` int array of 0-based ``(i, j)`` links per
            sentence; ``possible`` may or may not include the sure links.

    Returns:
        ``{"precision", "recall", "aer", "f1", "predicted", "sure", "possible", "a_and_s",
        "a_and_p", "sentences"}`` (counts are link counts, ``possible`` including the sure links).
    """
    if not (len(predicted) == len(sure) == len(possible)):
        raise WordorderError(
            f"AER needs as many predicted ({len(predicted)}), sure ({len(sure)}) and "
            f"possible ({len(possible)}) alignment lines",
            hint="the hypothesis must be line-aligned with the gold alignments",
        )
    a = _keys(predicted)
    s = _keys(sure)
    p = np.union1d(_keys(possible), s)
    a_s = int(np.isin(a, s, assume_unique=True).sum())
    a_p = int(np.isin(a, p, assume_unique=True).sum())
    precision = a_p / len(a) if len(a) else 0.0
    recall = a_s / len(s) if len(s) else 0.0
    denominator = len(a) + len(s)
    return {
        "precision": precision,
        "recall": recall,
        "aer": 1.0 - (a_s + a_p) / denominator if denominator else 0.0,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "predicted": len(a),
        "sure": len(s),
        "possible": len(p),
        "a_and_s": a_s,
        "a_and_p": a_p,
        "sentences": len(predicted),
    }


@dataclass
class Gold:
    """Gold alignments: per sentence ``[L, 2]`` 0-based sure links and possible-only links."""

    sure: list[np.ndarray]
    possible: list[np.ndarray]
    out_of_range_links: int  # links past the sentence end, dropped or clipped
    out_of_range_lines: list[int]  # their 1-based line numbers


def read_src_tgt(path: str | Path) -> tuple[list[list[str]], list[list[str]]]:
    """The source and target tokens of an awesome-align ``*.src-tgt`` file (``source ||| target``).

    Tokens are separated by ASCII spaces only, as in the gold indices: the KFTT ja-en set has
    ideographic-space (U+3000) tokens that ``str.split()`` would drop, shifting every later
    index of those lines (before the fix, lines 351, 354-356 seemed to point past the end).
    """
    src, tgt = [], []
    for k, line in enumerate(iter_lines(path), start=1):
        parts = line.split(" ||| ")
        if len(parts) != 2:
            raise WordorderError(
                "expected 'source ||| target'",
                path=path,
                line=k,
                hint="each line must hold exactly one ' ||| ' separator",
            )
        src.append([t for t in parts[0].split(" ") if t])
        tgt.append([t for t in parts[1].split(" ") if t])
    return src, tgt


def read_gold(
    path: str | Path,
    src_lens: Sequence[int] | np.ndarray,
    tgt_lens: Sequence[int] | np.ndarray,
    one_based: bool = True,
    out_of_range: str = "drop",
) -> Gold:
    """Read a gold file (``i-j`` sure, ``ipj`` possible) against the sentence lengths.

    Args:
        out_of_range: what to do with links past the end of a sentence (the KFTT ja-en gold
            has four such lines): ``"drop"`` them (default: an annotation we cannot place is
            not evidence), ``"clip"`` them onto the last word, or ``"error"``.
    """
    path = Path(path)
    flat, poss, offsets = read_pharaoh(path, one_based=one_based, possible=True)
    n_sent = len(offsets) - 1
    if len(src_lens) != n_sent or len(tgt_lens) != n_sent:
        raise WordorderError(
            f"{n_sent} gold lines for {len(src_lens)} sentence pairs",
            path=path,
            hint="the gold file must be line-aligned with its sentences",
        )
    sent = np.repeat(np.arange(n_sent), np.diff(offsets))
    sl, tl = np.asarray(src_lens, np.int64), np.asarray(tgt_lens, np.int64)
    n_bad = int(((flat[:, 0] >= sl[sent]) | (flat[:, 1] >= tl[sent])).sum())
    parts, bad_lines = [], []
    for mask in (~poss, poss):
        sub_offsets = np.zeros_like(offsets)
        np.cumsum(np.bincount(sent[mask], minlength=n_sent), out=sub_offsets[1:])
        links, sub_offsets, bad = check_ranges(flat[mask], sub_offsets, sl, tl, path, out_of_range)
        parts.append(unflatten(links, sub_offsets))
        bad_lines += [int(x) + 1 for x in bad]
    return Gold(parts[0], parts[1], n_bad, sorted(set(bad_lines)))
