"""RIBES, TER under/over-generation and significance tests against the worked examples of
docs/algorithms.md §RIBES, §TER and §SIG."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from wordorder.errors import WordorderError
from wordorder.evaluate.generation import generation_errors, ter_edits
from wordorder.evaluate.ribes import ascending_pairs, corpus_ribes, sentence_stats, tokens
from wordorder.evaluate.significance import (
    bleu_paired_bootstrap,
    bleu_sign_test,
    marker,
    sign_test_p,
)

H0_REF = "he was interested in world history because he read the book"
H0_HYP = "he read the book because he was interested in world history"


@pytest.mark.parametrize(
    "ref, hyp, order, nkt, precision, ribes",
    [
        ("a b c d", "a c b d", (0, 2, 1, 3), 5 / 6, 1.0, 0.8333),
        # left context "because he" wins over the right one: the second "he" goes to 7, not 0
        (H0_REF, H0_HYP, (7, 8, 9, 10, 6, 7, 1, 2, 3, 4, 5), 0.3091, 1.0, 0.3091),
        ("a b a c", "a c b a x", (2, 3, 1, 2), 1 / 3, 0.8, 0.31525),
    ],
)
def test_ribes_matches_the_official_script(ref, hyp, order, nkt, precision, ribes):
    s = sentence_stats(tokens(ref), tokens(hyp))
    assert s.order == order
    assert s.nkt == pytest.approx(nkt, abs=5e-5)
    assert s.precision == pytest.approx(precision)
    assert s.score() == pytest.approx(ribes, abs=5e-5)


def test_ribes_brevity_penalty():
    s = sentence_stats(tokens("a b c d e"), tokens("a b c"))
    assert s.bp == pytest.approx(0.51342, abs=1e-5)
    assert s.score() == pytest.approx(0.93551, abs=1e-5)


def test_ribes_edge_cases():
    assert sentence_stats(["a"], []).score() == 0.0  # empty hypothesis
    one = sentence_stats(["a"], ["a", "b"])  # one aligned word, one-word reference
    assert (one.nkt, one.precision) == (1.0, 0.5)
    assert sentence_stats(["a", "b"], ["a", "x"]).score() == 0.0  # fewer than two links
    with pytest.raises(ValueError):
        sentence_stats([], ["a"])


def test_ribes_lowercases_unless_case_is_kept():
    assert corpus_ribes(["A B"], [["a b"]])["ribes"] == 1.0
    assert corpus_ribes(["A B"], [["a b"]], case=True)["ribes"] == 0.0


def test_corpus_ribes_is_the_mean_of_the_best_sentence_scores():
    hyps = ["a c b d", "a b c d"]
    got = corpus_ribes(hyps, [["a b c d", "x y z"], ["a c b d", "a b c d"]])
    assert got["sentences"] == pytest.approx([1.0, 1.0])  # best reference per sentence
    one = corpus_ribes(hyps, [["a b c d", "a b c d"]])
    assert one["ribes"] == pytest.approx((5 / 6 + 1) / 2)
    with pytest.raises(WordorderError, match="line 2 is empty"):
        corpus_ribes(hyps, [["a b", " "]])


def test_ascending_pairs_equals_the_double_loop():
    rng = random.Random(3)
    for _ in range(50):
        o = [rng.randrange(6) for _ in range(rng.randrange(2, 12))]
        slow = sum(o[a] < o[b] for a in range(len(o)) for b in range(a + 1, len(o)))
        assert ascending_pairs(o) == slow


@pytest.mark.parametrize(
    "hyp, ref, ins, dels, subs",
    [
        ("the cat sat on the mat today", "the cat sat on mat", 0, 2, 0),  # over-generation 2
        ("the cat sat", "the cat sat on the mat", 3, 0, 0),  # under-generation 3
        ("a b c d", "a x c", 0, 1, 1),
    ],
)
def test_ter_edits_worked_examples(hyp, ref, ins, dels, subs):
    e = ter_edits(hyp.split(), ref.split())
    assert (e.insertions, e.deletions, e.substitutions) == (ins, dels, subs)


def test_ter_edits_add_up_to_sacrebleus_ter():
    from sacrebleu.metrics import TER

    rng = random.Random(7)
    vocab = "a b c d e f g h".split()
    refs = [" ".join(rng.choices(vocab, k=rng.randrange(3, 12))) for _ in range(40)]
    hyps = []
    for r in refs:
        w = r.split()
        rng.shuffle(w)  # reorderings make TER shift
        hyps.append(
            " ".join(w[: rng.randrange(1, len(w) + 2)] + rng.choices(vocab, k=rng.randrange(0, 3)))
        )
    ours = generation_errors(hyps, refs)
    theirs = TER(case_sensitive=True).corpus_score(hyps, [refs]).score
    assert ours["ter"] == pytest.approx(theirs, abs=1e-9)
    assert ours["under_generation"] == sum(ours["under"]) and len(ours["over"]) == 40


def test_sign_test_p_values():
    assert sign_test_p(9, 3) == pytest.approx(0.14600, abs=5e-6)
    assert sign_test_p(60, 40) == pytest.approx(0.05689, abs=5e-6)
    assert sign_test_p(3, 9) == sign_test_p(9, 3)
    assert sign_test_p(0, 0) == 1.0


def _log_space_sign_p(n_plus: int, n_minus: int) -> float:
    # an independent reference: the binomial tail summed in log space
    n, m = n_plus + n_minus, min(n_plus, n_minus)
    logs = [math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) for k in range(m + 1)]
    top = max(logs)
    return min(1.0, 2 * math.exp(top - n * math.log(2)) * sum(math.exp(v - top) for v in logs))


@pytest.mark.parametrize("n_plus,n_minus", [(520, 520), (1600, 1403), (1403, 1600), (2000, 1003)])
def test_sign_test_p_at_the_size_of_newstest2014(n_plus, n_minus):
    # 2.0**N overflows a float from N = 1,024 (issue 49): newstest2014 has 3,003 sentences
    p = sign_test_p(n_plus, n_minus)
    assert p == pytest.approx(_log_space_sign_p(n_plus, n_minus), rel=1e-9)
    assert (p == 1.0) == (n_plus == n_minus)


def test_significance_cli_on_a_test_set_of_3003_sentences(tmp_path, capsys):
    # through the real CLI: 3,003 lines, well over 1,024 of them different between the systems
    from wordorder.cli import main

    refs, corrupt = _corpus(7, n=3003)
    files = {"ref": refs, "hyp": corrupt(0.2), "base": corrupt(0.4)}
    for name, lines in files.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "sig.json"
    argv = ["significance", "--hyp", tmp_path / "hyp", "--baseline-hyp", tmp_path / "base"]
    argv += ["--ref", tmp_path / "ref", "--lang", "en", "--output", out, "--pair", "x-en"]
    argv += ["--variant", "good", "--baseline", "bad", "--testset", "test", "--seed", "1"]
    assert main([str(a) for a in argv + ["--samples", "50"]]) == 0
    sign = json.loads(out.read_text())["sign"]
    assert sign["n_plus"] + sign["n_minus"] > 1024 and 0 <= sign["p"] < 0.01
    assert sign["p"] == pytest.approx(_log_space_sign_p(sign["n_plus"], sign["n_minus"]), rel=1e-9)
    assert "sign test p = 0.0000" in capsys.readouterr().out


def test_markers():
    assert [marker(p) for p in (0.001, 0.01, 0.049, 0.05, None)] == ["++", "+", "+", "", ""]
    assert [marker(p, -0.3) for p in (0.001, 0.03, 0.2)] == ["−−", "−", ""] and marker(
        0.001, 0.0
    ) == ""


def test_bootstrap_p_value_formula_of_the_pinned_sacrebleu():
    # the toy of docs/algorithms.md §SIG: d = [1, 2, 3, 6], observed 2.5 → stat = d − mean(d);
    # p = (1 + 1) / (4 + 1)
    from sacrebleu.significance import _compute_p_value

    d = np.array([1.0, 2.0, 3.0, 6.0])
    assert _compute_p_value(d - d.mean(), 2.5) == pytest.approx(0.4)


def _corpus(seed: int, n: int = 200):
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(30)]
    refs = [" ".join(rng.choices(vocab, k=rng.randrange(5, 15))) for _ in range(n)]

    def corrupt(rate):
        out = []
        for r in refs:
            out.append(" ".join(w if rng.random() > rate else rng.choice(vocab) for w in r.split()))
        return out

    return refs, corrupt


def test_a_clearly_better_system_is_significant_and_itself_is_not():
    refs, corrupt = _corpus(1)
    good, bad = corrupt(0.1), corrupt(0.6)
    sign = bleu_sign_test(good, bad, refs)
    assert sign["n_plus"] > 3 * sign["n_minus"] and sign["p"] < 0.01
    assert sign["n_plus"] + sign["n_minus"] + sign["ties"] == len(refs)
    assert sign["delta"] > 10  # BLEU of the good system minus the bad one's
    boot = bleu_paired_bootstrap(good, bad, refs, samples=200)
    assert boot["p"] < 0.01 and boot["ci"] > 0
    same = bleu_sign_test(bad, bad, refs)
    assert (same["n_plus"], same["n_minus"], same["p"]) == (0, 0, 1.0)
    assert bleu_paired_bootstrap(bad, list(bad), refs, samples=200)["p"] == 1.0  # not 1/(B + 1)


def test_significance_rejects_misaligned_outputs():
    with pytest.raises(WordorderError, match="line counts differ"):
        bleu_sign_test(["a"], ["a", "b"], ["a"])
    assert math.isfinite(sign_test_p(1, 0))
