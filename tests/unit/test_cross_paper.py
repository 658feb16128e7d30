"""The cross-paper table: systems sorted by mean BLEU per test set, sd over seeds,
markers, size and speed."""

from __future__ import annotations

import pandas as pd
import pytest

from wordorder.errors import WordorderError
from wordorder.evaluate.cross_paper import cross_paper_markdown, cross_paper_table


def scores():
    rows = []
    for variant, bleus in (
        ("base", [20.0, 22.0]),
        ("both_res", [23.0, 25.0]),
        ("sdatt", [18.0, 18.5]),
    ):
        for seed, bleu in enumerate(bleus, start=1):
            rows.append(
                {
                    "pair": "ja-en",
                    "testset": "test",
                    "variant": variant,
                    "seed": seed,
                    "bleu": bleu,
                    "ribes": 70 + bleu / 10,
                    "chrf": 40 + bleu,
                    "nkt": 80.0,
                }
            )
    return pd.DataFrame(rows)


def systems():
    return pd.DataFrame(
        [
            {"pair": "ja-en", "variant": v, "seed": s, "params": p, "train_tok_s": t}
            for v, p, t in (("base", 2e6, 900.0), ("both_res", 2.5e6, 700.0), ("sdatt", 3e6, 500.0))
            for s in (1, 2)
        ]
    )


def test_sorted_by_bleu_with_sd_size_and_speed():
    table = cross_paper_table(scores(), systems())
    assert [v for _, _, v in table.index] == ["both_res", "base", "sdatt"]
    assert table.loc[("ja-en", "test", "both_res"), "bleu"] == pytest.approx(24.0)
    assert table.loc[("ja-en", "test", "both_res"), "bleu_sd"] == pytest.approx(2**0.5)
    assert table.loc[("ja-en", "test", "sdatt"), "params"] == 3e6
    md = cross_paper_markdown(table, {("both_res", "ja-en", "test"): "+"}, "base", "T")
    assert "| 1 | both_res | 24.00 ± 1.41+ | 72.40 | 64.00 | 80.00 | 2.50M | 700 |" in md
    assert "| 2 | **base** | 21.00 ± 1.41 |" in md and "| 3 | sdatt | 18.25 ± 0.35 |" in md


def test_needs_word_order_scores():
    with pytest.raises(WordorderError, match="ribes, nkt"):
        cross_paper_table(scores().drop(columns=["ribes", "nkt"]), systems())
