"""sacreBLEU's BLEU with a choice of the reference length behind the brevity penalty.

With several references (the NIST MT sets have four) BLEU needs one reference length r per
segment; the corpus penalty is ``exp(1 − Σr / Σc)`` when the hypotheses are shorter. Two rules:

- ``closest``: the reference length closest to the hypothesis's, the shorter on a tie. IBM's
  BLEU, ``multi-bleu.perl``, sacreBLEU and mteval-v13a's default
  (``--brevity-penalty closest``).
- ``shortest``: the shortest reference length. NIST's ``mteval-v11b.pl``, the scorer of the
  NIST MT evaluations (and of "NIST BLEU" in the papers of those years; mteval-v13a keeps it as
  ``--brevity-penalty shortest``). Shorter r means a smaller penalty, so ``shortest`` scores a
  system at least as high as ``closest`` does.

Everything else stays sacreBLEU's: its tokenizers, n-gram counts (clipped by the maximum count
in any one reference), smoothing and corpus sums, so only the second of a segment's sufficient
statistics (its reference length) changes. With one reference both rules are the same.
Configs choose with ``evaluation.bleu_brevity``; the signature of a ``shortest`` score ends in
``|bp:shortest``.
"""

from __future__ import annotations

from typing import Any

from sacrebleu.metrics import BLEU

from wordorder.errors import WordorderError

BREVITY = ("closest", "shortest")


class ShortestRefBLEU(BLEU):
    """sacreBLEU's BLEU whose segment reference length is the shortest reference's."""

    def _get_closest_ref_len(self, hyp_len: int, ref_lens: list[int]) -> int:
        # sacreBLEU asks for "the closest" in one place (_compute_segment_statistics): the
        # length rule is this method alone
        return min(ref_lens)


def bleu_metric(
    tokenize: str = "13a", lowercase: bool = False, brevity: str = "closest", **kwargs: Any
) -> BLEU:
    """A sacreBLEU ``BLEU`` (``tokenize``, ``lowercase`` and any other of its arguments) with
    the reference-length rule ``brevity``: ``closest`` (sacreBLEU's own) or ``shortest``."""
    if brevity not in BREVITY:
        raise WordorderError(
            f"unknown BLEU brevity rule {brevity!r}",
            hint=f"use one of {', '.join(BREVITY)} (evaluation.bleu_brevity)",
        )
    cls = ShortestRefBLEU if brevity == "shortest" else BLEU
    return cls(tokenize=tokenize, lowercase=lowercase, **kwargs)


def signature(metric: BLEU) -> str:
    """sacreBLEU's signature of ``metric``, plus ``|bp:shortest`` for the shortest rule."""
    text = metric.get_signature().format()
    return text + "|bp:shortest" if isinstance(metric, ShortestRefBLEU) else text
