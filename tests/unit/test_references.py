"""Several references and case-insensitive BLEU (Chen et al. 2018 and Zhang et al. 2018 score NIST
zh-en on four references, case-insensitively): the scores equal sacreBLEU's own, and a test
set's extra reference files are checked like the first through the real CLI."""

from __future__ import annotations

import json

import pytest
from cli_checks import check, left_over, run
from sacrebleu.metrics import BLEU, CHRF

from wordorder.evaluate.scores import score_translations
from wordorder.evaluate.significance import bleu_paired_bootstrap, bleu_sign_test

HYPS = ["the cat sat on a mat .", "he reads the book quickly ."]
REF1 = ["a cat was sitting on the mat .", "he quickly reads a book ."]
REF2 = ["the cat sat on the mat .", "he is reading the book fast ."]


def test_bleu_on_several_references_equals_sacrebleus():
    one = score_translations(HYPS, REF1, "en")
    two = score_translations(HYPS, REF1, "en", extra_refs=[REF2])
    assert two["bleu"] == pytest.approx(BLEU().corpus_score(HYPS, [REF1, REF2]).score, abs=1e-9)
    assert two["chrf"] == pytest.approx(CHRF().corpus_score(HYPS, [REF1, REF2]).score, abs=1e-9)
    # the second reference shares the first sentence's 5-word run "the cat sat on ... mat ."
    assert two["bleu"] > one["bleu"] + 10
    assert (one["n_references"], two["n_references"]) == (1, 2)
    # a reference equal to the output makes it perfect whatever the others say
    assert score_translations(HYPS, REF1, "en", extra_refs=[REF2, HYPS])["bleu"] == pytest.approx(
        100.0
    )


def test_tokenized_bleu_uses_every_reference_too():
    s = score_translations(
        HYPS, REF1, "en", hyps_tok=HYPS, refs_tok=REF1, extra_refs=[REF2], extra_refs_tok=[REF2]
    )
    expected = (
        BLEU(tokenize="none", smooth_method="none", force=True)
        .corpus_score(HYPS, [REF1, REF2])
        .score
    )
    assert s["bleu_tok"] == pytest.approx(expected, abs=1e-9)


def test_case_insensitive_bleu():
    hyps = ["The Cat Sat On The Mat ."]
    refs = ["the cat sat on the mat ."]
    assert score_translations(hyps, refs, "en")["bleu"] < 30
    s = score_translations(hyps, refs, "en", hyps_tok=hyps, refs_tok=refs, lowercase=True)
    assert s["bleu"] == pytest.approx(100.0) and s["bleu_tok"] == pytest.approx(100.0)
    assert "case:lc" in s["bleu_signature"] and "case:lc" in s["bleu_tok_signature"]
    assert "case:mixed" in score_translations(hyps, refs, "en")["bleu_signature"]


def test_extra_reference_of_another_length_is_refused():
    from wordorder.errors import WordorderError

    with pytest.raises(WordorderError, match="reference 2 has 1 lines but the test set has 2"):
        score_translations(HYPS, REF1, "en", extra_refs=[REF2[:1]])


def test_significance_with_references_and_case():
    base = ["The Cat is on a mat .", "He reads a book ."]
    # case-insensitively the system gains on every sentence that the second reference explains
    sign = bleu_sign_test(HYPS, base, REF1, extra_refs=[REF2], lowercase=True)
    direct = BLEU(lowercase=True)
    delta = (
        direct.corpus_score(HYPS, [REF1, REF2]).score
        - direct.corpus_score(base, [REF1, REF2]).score
    )
    assert sign["delta"] == pytest.approx(delta, abs=1e-9)
    boot = bleu_paired_bootstrap(HYPS, base, REF1, samples=50, extra_refs=[REF2], lowercase=True)
    assert 0.0 <= boot["p"] <= 1.0


def _refs(tmp_path, lines2):
    first = tmp_path / "mt03.en"
    first.write_text("\n".join(REF1) + "\n", encoding="utf-8")
    extra = tmp_path / "mt03.en1"
    extra.write_text(lines2, encoding="utf-8")
    spec = {
        "kind": "manual",
        "name": "NIST 2003",
        "instructions": "from the LDC",
        "src": "x.zh",
        "tgt": "x.en",
        "extra_refs": [str(extra), str(tmp_path / "mt03.en2")],
    }
    return first, spec


def _reference(tmp_path, spec, first, index):
    return [
        "reference",
        "--spec",
        json.dumps(spec),
        "--pair",
        "zh-en",
        "--index",
        index,
        "--first",
        first,
        "--output",
        tmp_path / "out" / f"mt03.{index}.en",
    ]


def test_reference_step_checks_and_normalises(tmp_path, capsys):
    first, spec = _refs(tmp_path, "the  cat sat on the mat .\nhe is reading the book fast .\n")
    code, errors = run(_reference(tmp_path, spec, first, 1), capsys)
    assert code == 0, errors
    assert (tmp_path / "out" / "mt03.1.en").read_text(encoding="utf-8").splitlines()[1] == REF2[1]


@pytest.mark.parametrize(
    "name, text, index, must",
    [
        (
            "extra reference shorter than the test set",
            "one line\n",
            1,
            ["mt03.en1", "has 1 lines but the test set has 2"],
        ),
        ("extra reference with an empty line", "a\n\n", 1, ["mt03.en1:2", "empty reference line"]),
        (
            "extra reference with a control character",
            "a\x07b\nc\n",
            1,
            ["mt03.en1:1", "control character"],
        ),
        ("manual extra reference not in place", "a\nb\n", 2, ["mt03.en2", "not in place"]),
    ],
)
def test_bad_extra_references(tmp_path, capsys, name, text, index, must):
    first, spec = _refs(tmp_path, text)
    code, errors = run(_reference(tmp_path, spec, first, index), capsys)
    check(name, code, errors, *must)
    assert left_over(tmp_path / "out") == []


def test_score_cli_with_extra_reference_and_lowercase(tmp_path, capsys):
    paths = {}
    for name, lines in (("hyp", [h.upper() for h in HYPS]), ("ref", REF1), ("ref2", REF2)):
        paths[name] = tmp_path / name
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "s.json"
    base = [
        "score",
        "--hyp",
        paths["hyp"],
        "--ref",
        paths["ref"],
        "--lang",
        "en",
        "--pair",
        "zh-en",
        "--variant",
        "v",
        "--seed",
        "1",
        "--testset",
        "mt03",
        "--output",
        out,
    ]
    assert run([*base, "--extra-ref", paths["ref2"], "--lowercase"], capsys)[0] == 0
    scores = json.loads(out.read_text())
    assert scores["bleu"] == pytest.approx(
        BLEU(lowercase=True).corpus_score([h.upper() for h in HYPS], [REF1, REF2]).score
    )
    assert scores["n_references"] == 2
    code, errors = run([*base, "--extra-ref", paths["hyp"].with_name("nothing")], capsys)
    check("score: extra reference missing", code, errors, "nothing")
