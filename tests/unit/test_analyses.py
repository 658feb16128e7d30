"""Analyses: BLEU by source-length bin, swap-noise permutations, the systems
(params and speed) table."""

from __future__ import annotations

import math

import pytest
from sacrebleu.metrics import BLEU

from wordorder.errors import WordorderError
from wordorder.evaluate.length_bins import (
    bin_index,
    bin_labels,
    bleu_by_length,
    write_length_analysis,
)


def test_bins_are_half_open_with_an_open_last_bin():
    assert bin_labels([10, 20]) == ["1-10", "11-20", ">20"]
    assert [bin_index(n, [10, 20]) for n in (1, 10, 11, 20, 21, 99)] == [0, 0, 1, 1, 2, 2]
    with pytest.raises(WordorderError):
        bin_labels([10, 10])


def test_each_bin_is_the_corpus_bleu_of_its_sentences(tmp_path):
    sources = ["a b", "a b c d e", "a", "a b c d e f g"]
    refs = [
        "the cat sat on the mat",
        "a dog ran in the park today",
        "one two three four",
        "x y z w v u",
    ]
    good = list(refs)
    bad = ["the cat sat on a mat", "a dog", "one two three four", "z y x"]
    table = bleu_by_length(sources, {"good": good, "bad": bad}, refs, "13a", edges=[2, 5])
    assert list(table["bin"]) == ["1-2", "3-5", ">5"] and list(table["sentences"]) == [2, 1, 1]
    assert list(table["good"]) == pytest.approx([100.0, 100.0, 100.0])
    want = BLEU(tokenize="13a").corpus_score([bad[0], bad[2]], [[refs[0], refs[2]]]).score
    assert table["bad"][0] == pytest.approx(want) and table["bad"][0] < 100
    empty = bleu_by_length(sources, {"good": good}, refs, "13a", edges=[1, 2, 3, 4, 5, 6])
    assert math.isnan(empty["good"][3])  # no source of length 4
    write_length_analysis(table, tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "f.png", "T")
    assert "| 3-5 | 1 | 100.0 |" in (tmp_path / "t.md").read_text(encoding="utf-8")
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"


def test_tau_per_bin_is_the_mean_over_comparable_sentences(tmp_path):
    from wordorder.evaluate.length_bins import add_tau_by_length

    sources = ["a b", "a b c d e", "a", "a b c d e f g"]
    table = bleu_by_length(sources, {"s": ["x"] * 4}, ["x"] * 4, "13a", edges=[2, 5])
    nan = float("nan")
    out = add_tau_by_length(
        table,
        sources,
        {"identity": [0.5, 0.9, nan, 0.2], "btg": [1.0, nan, 0.8, 0.4]},
        edges=[2, 5],
    )
    # the NaN sentence is left out
    assert out["tau identity"].tolist() == pytest.approx([0.5, 0.9, 0.2])
    assert out["tau btg"][0] == pytest.approx(0.9) and math.isnan(out["tau btg"][1])
    write_length_analysis(out, tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "f.png", "T")
    md = (tmp_path / "t.md").read_text(encoding="utf-8")
    assert (
        "| source length | sentences | s | τ identity | τ btg |" in md
        and "| 3-5 | 1 | 0.0 | 0.900 | – |" in md
    )
    with pytest.raises(WordorderError, match="3 τ values for 4"):
        add_tau_by_length(table, sources, {"x": [1.0, 1.0, 1.0]}, edges=[2, 5])
    # Kawara's Eq. 7 scale beside the normalised one, not taken for a system's BLEU column
    from wordorder.evaluate.length_bins import TAU7

    both = add_tau_by_length(
        out, sources, {"identity": [0.0, 0.8, nan, -0.6]}, edges=[2, 5], prefix=TAU7
    )
    write_length_analysis(both, tmp_path / "t.csv", tmp_path / "t.md", tmp_path / "f.png", "T")
    md = (tmp_path / "t.md").read_text(encoding="utf-8")
    assert (
        "| s | τ identity | τ btg | τ Eq. 7 identity |" in md
        and "| 3-5 | 1 | 0.0 | 0.900 | – | 0.800 |" in md
    )


def test_misaligned_outputs_are_refused():
    with pytest.raises(WordorderError, match="2 hypotheses but 1 references"):
        bleu_by_length(["a"], {"s": ["x", "y"]}, ["x"], "13a")


def test_swap_permutation_moves_exactly_the_drawn_share():
    import random

    import numpy as np

    from wordorder.evaluate.swap_noise import swap_noise_table, swap_permutation, swap_permutations

    rng = random.Random(0)
    for n in range(0, 30):
        for rate in (0.0, 0.1, 0.3, 0.5, 1.0):
            perm = swap_permutation(n, rate, rng)
            assert sorted(perm.tolist()) == list(range(n))
            moved = int((perm != np.arange(n)).sum())
            k = round(rate * n)
            assert moved == (0 if n < 2 or k == 0 else max(k, 2) if k <= n else n)
    # reproducible per seed
    assert [p.tolist() for p in swap_permutations([5, 7], 40, 3)] == [
        p.tolist() for p in swap_permutations([5, 7], 40, 3)
    ]
    table = swap_noise_table({("a", 10): 20.0, ("a", 0): 30.0, ("b", 0): 31.0})
    assert (
        list(table.index) == [0, 10]
        and list(table.columns) == ["a", "b"]
        and math.isnan(table.loc[10, "b"])
    )


def test_swap_perm_writes_every_level_as_its_own_call_would(tmp_path, capsys):
    """``swap-perm`` with several ``--percent`` (the swap-noise rule's one job per test set):
    each level's file is what a call for that level alone writes (the same seed)."""
    from wordorder.cli import main

    tok = tmp_path / "s.tok"
    tok.write_text("".join(" ".join(f"w{j}" for j in range(i % 9)) + "\n" for i in range(40)))
    args = ["swap-perm", "--tok", str(tok), "--seed", "5"]
    outs = [tmp_path / f"all{p}.perm" for p in (0, 30, 50)]
    assert main([*args, "--percent", "0", "30", "50", "--output", *map(str, outs)]) == 0
    for percent, together in zip((0, 30, 50), outs):
        alone = tmp_path / f"one{percent}.perm"
        assert main([*args, "--percent", str(percent), "--output", str(alone)]) == 0
        assert together.read_text() == alone.read_text()
    assert outs[0].read_text() != outs[2].read_text()
    capsys.readouterr()
    assert main([*args, "--percent", "0", "30", "--output", str(tmp_path / "x.perm")]) == 2
    assert "2 --percent values but 1 --output files" in capsys.readouterr().err
    assert not (tmp_path / "x.perm").exists()


def test_systems_table_reads_parameters_speeds_and_benchmarks(tmp_path):
    from wordorder.evaluate.systems import (
        benchmark_seconds,
        count_parameters,
        logged_parameters,
        systems_markdown,
        training_speed,
    )
    from wordorder.model_io.checkpoint import save_checkpoint
    from wordorder.models import build_model

    log = tmp_path / "metrics.jsonl"
    log.write_text(
        '{"step": 1, "tokens_per_s": 10}\n{"step": 2, "dev_bleu": 3}\n'
        '{"step": 3, "tokens_per_s": 30}\n{"step": 4, "tokens_per_s": 20}\n',
        encoding="utf-8",
    )
    assert training_speed(log) == 20.0
    tsv = tmp_path / "b.tsv"
    tsv.write_text("s\th:m:s\tmax_rss\n4.5\t0:00:04\t700\n5.5\t0:00:05\t700\n", encoding="utf-8")
    assert benchmark_seconds(tsv) == 5.0
    model = build_model({"preset": "tiny"}, 50)
    ckpt = tmp_path / "m.pt"
    save_checkpoint(ckpt, model, model.options.to_dict(), {})
    assert count_parameters(ckpt) == sum(p.numel() for p in model.parameters())
    # The count comes from the summary record; an older log without it, from best.pt beside it
    log.write_text(log.read_text() + '{"summary": {"steps": 4, "params": 1234}}\n')
    assert logged_parameters(log) == 1234
    old = tmp_path / "old" / "metrics.jsonl"
    old.parent.mkdir()
    old.write_text('{"step": 1, "tokens_per_s": 10}\n{"summary": {"steps": 1}}\n')
    with pytest.raises(WordorderError, match="no parameter count"):
        logged_parameters(old)
    ckpt.rename(old.with_name("best.pt"))
    assert logged_parameters(old) == sum(p.numel() for p in model.parameters())
    import pandas as pd

    table = pd.DataFrame(
        [
            {
                "pair": "en-de",
                "variant": "base",
                "seed": 1,
                "params": 100,
                "train_tok_s": 10.0,
                "decode_sent_s": 2.0,
            },
            {
                "pair": "en-de",
                "variant": "res",
                "seed": 1,
                "params": 103,
                "train_tok_s": 9.0,
                "decode_sent_s": 1.5,
            },
        ]
    )
    md = systems_markdown(table, "base", "T")
    assert "| en-de | res | 103 | +3.00 % | 9 | 1.5 |" in md
