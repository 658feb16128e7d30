"""RIBES (Isozaki et al. 2010), computed as the official NTT ``RIBES.py`` v1.03.1 does.

Per sentence, ``RIBES = NKT · P^α · BP^β`` (α = 0.25, β = 0.10) where, over the list ``o`` of
reference positions of the aligned hypothesis words:

* NKT = (ascending pairs of ``o``) / C(n, 2), the normalised Kendall τ of the word order;
* P = n / |hyp|, the unigram precision of the aligned words;
* BP = min(1, exp(1 − |ref| / |hyp|)).

The word alignment is the official one, not nltk's (which differs in four ways and gives other
numbers, see docs/algorithms.md §RIBES): a hypothesis word found once in both sentences takes its
reference position; otherwise growing contexts are tried, at each size k the left context
``hyp[i−k..i]`` first and then the right one ``hyp[i..i+k]``, and the first n-gram that occurs
exactly once in both sentences (overlapping occurrences counted) fixes the position. Tokens are
lowercased unless ``case=True``. The corpus score is the mean over sentences of the best score over
the references (a macro average, unlike BLEU).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wordorder.errors import WordorderError

ALPHA, BETA = 0.25, 0.10


@dataclass(frozen=True)
class RibesStats:
    """One sentence: normalised Kendall τ, unigram precision, brevity penalty, aligned positions."""

    nkt: float
    precision: float
    bp: float
    order: tuple[int, ...]

    def score(self, alpha: float = ALPHA, beta: float = BETA) -> float:
        return self.nkt * self.precision**alpha * self.bp**beta


class _NgramIndex:
    """Overlapping counts and first start of every n-gram of one sentence, built per n on demand."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = tuple(words)
        self._by_n: dict[int, tuple[dict[tuple[str, ...], int], dict[tuple[str, ...], int]]] = {}

    def _tables(self, n: int):
        if n not in self._by_n:
            counts: dict[tuple[str, ...], int] = {}
            first: dict[tuple[str, ...], int] = {}
            for start in range(len(self.words) - n + 1):
                gram = self.words[start : start + n]
                counts[gram] = counts.get(gram, 0) + 1
                first.setdefault(gram, start)
            self._by_n[n] = (counts, first)
        return self._by_n[n]

    def count(self, gram: tuple[str, ...]) -> int:
        return self._tables(len(gram))[0].get(gram, 0)

    def first(self, gram: tuple[str, ...]) -> int:
        return self._tables(len(gram))[1][gram]


def align_words(ref: Sequence[str], hyp: Sequence[str]) -> list[int]:
    """Reference positions of the hypothesis words that can be aligned, in hypothesis order."""
    r, h = _NgramIndex(ref), _NgramIndex(hyp)
    order: list[int] = []
    for i, word in enumerate(hyp):
        gram: tuple[str, ...] = (word,)
        if r.count(gram) == 0:
            continue
        if r.count(gram) == 1 and h.count(gram) == 1:
            order.append(r.first(gram))
            continue
        for k in range(1, max(i + 1, len(hyp) - i + 1)):
            if k <= i:
                gram = tuple(hyp[i - k : i + 1])
                if r.count(gram) == 1 and h.count(gram) == 1:
                    order.append(r.first(gram) + k)
                    break
            if i + k < len(hyp):
                gram = tuple(hyp[i : i + k + 1])
                if r.count(gram) == 1 and h.count(gram) == 1:
                    order.append(r.first(gram))
                    break
    return order


def ascending_pairs(order: Sequence[int]) -> int:
    """#{a < b : o_a < o_b} (ties are not ascending), by one vectorised comparison."""
    o = np.asarray(order)
    return int(np.triu(o[:, None] < o[None, :], k=1).sum())


def sentence_stats(ref: Sequence[str], hyp: Sequence[str]) -> RibesStats:
    """The official ``kendall()`` of one tokenised sentence pair.

    Raises:
        ValueError: the reference has no words.
    """
    if not ref:
        raise ValueError("the reference has no words")
    if not hyp:
        return RibesStats(0.0, 0.0, 0.0, ())
    bp = min(1.0, math.exp(1.0 - len(ref) / len(hyp)))
    order = align_words(ref, hyp)
    n = len(order)
    if n == 1 and len(ref) == 1:
        return RibesStats(1.0, 1.0 / len(hyp), bp, tuple(order))
    if n < 2:
        return RibesStats(0.0, 0.0, bp, tuple(order))
    nkt = ascending_pairs(order) / (n * (n - 1) / 2)
    return RibesStats(nkt, n / len(hyp), bp, tuple(order))


def tokens(line: str, case: bool = False) -> list[str]:
    """Split on ASCII whitespace as the official reader does, lowercasing unless ``case``."""
    words = line.split()
    return words if case else [w.lower() for w in words]


def corpus_ribes(
    hyps: Sequence[str],
    refs: Sequence[Sequence[str]],
    *,
    case: bool = False,
    alpha: float = ALPHA,
    beta: float = BETA,
) -> dict:
    """Corpus RIBES of tokenised lines against one or more reference streams.

    Args:
        hyps: hypothesis lines (space-separated tokens).
        refs: reference streams, each as many lines as ``hyps``.
    Returns:
        ``{"ribes", "nkt", "precision", "bp", "sentences"}``: the corpus score (mean of the
        per-sentence best over references, in [0, 1]), the mean NKT / P / BP of the first
        reference, and the per-sentence best scores.
    Raises:
        WordorderError: a reference stream of another length, or an empty reference line.
    """
    for stream in refs:
        if len(stream) != len(hyps):
            raise WordorderError(
                f"{len(hyps)} hypotheses but a reference stream of {len(stream)} lines"
            )
    if not hyps:
        raise WordorderError("nothing to score: no hypotheses")
    best, first = [], []
    for i, line in enumerate(hyps):
        hyp = tokens(line, case)
        per_ref = []
        for stream in refs:
            ref = tokens(stream[i], case)
            if not ref:
                raise WordorderError(
                    f"reference line {i + 1} is empty; RIBES needs words to compare with"
                )
            per_ref.append(sentence_stats(ref, hyp))
        first.append(per_ref[0])
        best.append(max(s.score(alpha, beta) for s in per_ref))
    return {
        "ribes": float(np.mean(best)),
        "nkt": float(np.mean([s.nkt for s in first])),
        "precision": float(np.mean([s.precision for s in first])),
        "bp": float(np.mean([s.bp for s in first])),
        "sentences": [float(b) for b in best],
    }
