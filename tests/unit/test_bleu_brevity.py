"""evaluation.bleu_brevity: BLEU's brevity penalty from the closest reference length
(sacreBLEU, multi-bleu.perl) or from the shortest (NIST's mteval-v11b; mteval-v13a
``--brevity-penalty shortest``), the n-gram statistics sacreBLEU's either way."""

from __future__ import annotations

import gzip
import math

import pytest

from wordorder.errors import WordorderError
from wordorder.evaluate.bleu import bleu_metric, signature

# Two segments, four references each, pre-tokenized (tokenize "none").
HYPS = ["a b c d e f", "p q r s"]
REFS = [
    ["a b c d", "p q z s"],  # 4, 4 tokens
    ["a b c d e f g", "p q r"],  # 7, 3
    ["x a b c d e f g", "u v w x y z"],  # 8, 6
    ["a b x d e f g h y", "p q r t s"],  # 9, 5
]


def test_hand_computed_four_references():
    """Segment 1 matches every n-gram of r2 (6/6, 5/5, 4/4, 3/3); segment 2 has p q r s in
    r1/r2 (4/4), "p q" and "q r" (2/3), "p q r" (1/2), no 4-gram (0/1): corpus precisions
    10/10, 7/8, 5/6, 3/4, geometric mean (35/64)^(1/4). Hypothesis length c = 6 + 4 = 10.
    closest: r = 7 + 4 = 11 (segment 1: |6 − 7| = 1 beats 4, 8, 9; segment 2: 4 itself), so
    BP = exp(1 − 11/10). shortest: r = 4 + 3 = 7 < c, so BP = 1."""
    geo = (35 / 64) ** 0.25
    closest = bleu_metric("none", brevity="closest").corpus_score(HYPS, REFS)
    shortest = bleu_metric("none", brevity="shortest").corpus_score(HYPS, REFS)
    assert (closest.sys_len, closest.ref_len, shortest.ref_len) == (10, 11, 7)
    assert closest.counts == shortest.counts == [10, 7, 5, 3]
    assert closest.totals == shortest.totals == [10, 8, 6, 4]
    assert closest.score == pytest.approx(100 * math.exp(1 - 11 / 10) * geo, abs=1e-9)
    assert shortest.score == pytest.approx(100 * geo, abs=1e-9)  # 85.9948...
    assert round(closest.score, 4) == 77.8113 and round(shortest.score, 4) == 85.9948
    # one reference: the two rules are the same
    one = [REFS[2]]
    assert (
        bleu_metric("none", brevity="shortest").corpus_score(HYPS, one).score
        == bleu_metric("none").corpus_score(HYPS, one).score
    )


def test_signature_names_the_rule_and_unknown_rules_are_refused():
    shortest, closest = bleu_metric("none", brevity="shortest"), bleu_metric("none")
    shortest.corpus_score(HYPS, REFS), closest.corpus_score(HYPS, REFS)  # sets nrefs
    assert (
        signature(shortest)
        == "nrefs:4|case:mixed|eff:no|tok:none|smooth:exp|version:2.6.0|bp:shortest"
    )
    assert "bp:" not in signature(closest)
    with pytest.raises(WordorderError, match="unknown BLEU brevity rule 'average'"):
        bleu_metric("13a", brevity="average")


def test_scores_significance_and_findings_follow_the_rule():
    from wordorder.evaluate.findings import compare_runs
    from wordorder.evaluate.scores import score_translations
    from wordorder.evaluate.significance import bleu_paired_bootstrap, bleu_sign_test

    refs, extra = REFS[0], REFS[1:]
    short = score_translations(HYPS, refs, "en", extra_refs=extra, brevity="shortest")
    close = score_translations(HYPS, refs, "en", extra_refs=extra)
    assert short["bleu_signature"].endswith("|bp:shortest")
    assert (short["bleu_detail"]["ref_len"], close["bleu_detail"]["ref_len"]) == (7, 11)
    assert short["bleu"] == pytest.approx(100 * (35 / 64) ** 0.25)
    # the shortest rule reports the closest reading beside it (Chen 2018's unversioned NIST BLEU)
    assert short["bleu_closest"] == close["bleu"] and "bleu_closest" not in close
    assert short["bleu_closest_signature"] == close["bleu_signature"]
    tok = score_translations(
        HYPS, refs, "en", HYPS, refs, extra_refs=extra, extra_refs_tok=extra, brevity="shortest"
    )
    assert tok["bleu_tok_detail"]["ref_len"] == 7 and tok["bleu_tok_signature"].endswith("shortest")
    # a baseline that scores the same under both rules: the system's gain is the rule's
    baseline = ["a b c d e f g", "p q r s"]  # 7 + 4 = 11 tokens, no penalty either way
    for rule, bleu in (("shortest", short["bleu"]), ("closest", close["bleu"])):
        base = bleu_metric("13a", brevity=rule).corpus_score(baseline, REFS).score
        sign = bleu_sign_test(HYPS, baseline, refs, "13a", extra, brevity=rule)
        assert sign["delta"] == pytest.approx(bleu - base)
        found = compare_runs([HYPS], [baseline], REFS, "13a", samples=20, brevity=rule)
        assert found["delta"] == pytest.approx(bleu - base)
    boot = bleu_paired_bootstrap(HYPS, baseline, refs, "13a", 20, extra, brevity="shortest")
    assert 0 < boot["p"] <= 1


def mteval_set(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """A hypothesis and four references of different lengths from real English sentences
    (words split at spaces, detokenized as they are): r1 the sentence, r2 without every 10th
    word, r3 with "indeed" after every 6th, r4 its first half; the hypothesis drops every 5th
    word and swaps the words of every 11th pair. Its closest reference is mostly r2, longer than
    it (a penalty), its shortest r4, shorter (none). Written as SGML for mteval-v13a.pl
    (``scripts/mteval_sgm`` in the test below's comment), scored here by sacreBLEU."""
    hyps: list[str] = []
    refs: list[list[str]] = [[], [], [], []]
    for line in lines:
        w = line.split()
        refs[0].append(" ".join(w))
        refs[1].append(" ".join(x for i, x in enumerate(w) if i % 10 != 9))
        refs[2].append(" ".join(x + (" indeed" if i % 6 == 5 else "") for i, x in enumerate(w)))
        refs[3].append(" ".join(w[: max(1, len(w) // 2)]))
        h = [x for i, x in enumerate(w) if i % 5 != 4]
        for i in range(10, len(h) - 1, 11):
            h[i], h[i + 1] = h[i + 1], h[i]
        hyps.append(" ".join(h))
    return hyps, refs


# mteval-v13a.pl (github.com/moses-smt/mosesdecoder, scripts/generic/mteval-v13a.pl at commit
# 34452895f350bf097b21ee514a529a1dc542243c, Perl 5.36 with XML::Twig 3.52) on mteval_set of
# the first 300 lines of newstest2014.en (de-en, ../shared/data/wmt_newstest_plaintext) written
# as SGML: one document, four references, the script's own tokenization and, without -c, its
# lowercasing. Its "BLEU score" x 100 as a copy of the script printing 8 decimals gives it (the
# stock script prints 0.6928, 0.6928, 0.6146, 0.6146); run once on 2026-11-27, not by the tests:
MTEVAL = {
    ("shortest", "lowercase"): 69.281921,  # mteval-v13a.pl -b --brevity-penalty shortest
    ("shortest", "cased"): 69.277739,  # ... shortest -c
    ("closest", "lowercase"): 61.460523,  # mteval-v13a.pl -b --brevity-penalty closest
    ("closest", "cased"): 61.456814,  # ... closest -c
}
# sacreBLEU's statistics (13a) give the same numbers to 1e-6: hypothesis 5,685 tokens, reference
# length 3,301 (shortest) or 6,366 (closest).


@pytest.mark.parametrize("rule, case", sorted(MTEVAL))
def test_sacrebleu_statistics_with_the_shortest_rule_give_mtevals_bleu(shared_data, rule, case):
    path = shared_data / "wmt_newstest_plaintext" / "de-en" / "newstest2014.en.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        lines = [next(f).rstrip("\n") for _ in range(300)]
    hyps, refs = mteval_set(lines)
    metric = bleu_metric("13a", lowercase=case == "lowercase", brevity=rule)
    # the figures have 6 decimals: within their rounding (≤ 5e-7; seen: 4.9e-7 at most)
    assert metric.corpus_score(hyps, refs).score == pytest.approx(MTEVAL[rule, case], abs=1e-6)
