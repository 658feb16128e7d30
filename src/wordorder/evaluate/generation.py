"""Under- and over-generation from the edits of TER (Takebayashi et al. 2018; Kawara et al. 2021).

TER rewrites the hypothesis into the reference with shifts, then insertions, deletions and
substitutions. After the shifts:

* a **deletion** removes a hypothesis word that has no counterpart: **over-generation**;
* an **insertion** adds a reference word the hypothesis lacks: **under-generation**;
* substitutions and shifts count toward neither.

sacreBLEU's TER computes this edit trace but returns only the edit count, so the shift loop of
``sacrebleu.metrics.lib_ter.translation_edit_rate`` is repeated here around its own ``_shift`` and
``BeamEditDistance`` (nothing of TER is re-implemented) and the final trace is kept. In that trace
``d`` consumes a hypothesis word and ``i`` a reference word (docs/algorithms.md §TER). The private
names are those of sacrebleu 2.6.0, the version ``pyproject.toml`` pins.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sacrebleu.metrics import lib_ter

from wordorder.errors import WordorderError


@dataclass(frozen=True)
class Edits:
    """TER edits of one sentence (hypothesis → reference)."""

    insertions: int  # under-generation
    deletions: int  # over-generation
    substitutions: int
    shifts: int
    ref_len: int


def ter_edits(hyp: Sequence[str], ref: Sequence[str]) -> Edits:
    """The TER edits turning the tokenised ``hyp`` into ``ref``."""
    hyp, ref = list(hyp), list(ref)
    if not ref:  # sacrebleu's special case: every hypothesis word is deleted
        return Edits(0, len(hyp), 0, 0, 0)
    cached = lib_ter.BeamEditDistance(ref)
    shifts, checked, words = 0, 0, hyp
    while True:  # the loop of translation_edit_rate: shift while it pays
        delta, shifted, checked = lib_ter._shift(words, ref, cached, checked)
        if checked >= lib_ter._MAX_SHIFT_CANDIDATES or delta <= 0:
            break
        shifts += 1
        words = shifted
    _, trace = cached(words)
    return Edits(
        trace.count(lib_ter._OP_INS),
        trace.count(lib_ter._OP_DEL),
        trace.count(lib_ter._OP_SUB),
        shifts,
        len(ref),
    )


def generation_errors(hyps: Sequence[str], refs: Sequence[str]) -> dict:
    """Under/over-generation of tokenised lines (space-separated, case-sensitive)
    against one reference each.

    Returns:
        ``{"under_generation", "over_generation"}`` as corpus sums, their means per sentence
        (``*_per_sentence``), ``ter`` (edits incl. shifts / reference words, in %), and the
        per-sentence lists ``under`` / ``over``.
    """
    if len(hyps) != len(refs):
        raise WordorderError(f"{len(hyps)} hypotheses but {len(refs)} references")
    if not hyps:
        raise WordorderError("nothing to score: no hypotheses")
    under, over, edits, ref_words = [], [], 0, 0
    for hyp, ref in zip(hyps, refs):
        e = ter_edits(hyp.split(), ref.split())
        under.append(e.insertions)
        over.append(e.deletions)
        edits += e.insertions + e.deletions + e.substitutions + e.shifts
        ref_words += e.ref_len
    n = len(hyps)
    return {
        "under_generation": sum(under),
        "over_generation": sum(over),
        "under_per_sentence": sum(under) / n,
        "over_per_sentence": sum(over) / n,
        "ter": 100.0 * edits / ref_words if ref_words else 0.0,
        "under": under,
        "over": over,
    }
