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


# Per-run BLEU; Welch's t with Hsu's df against BASE: CLEAR p = 0.0016, EDGE 0.033, NULL 0.58
BASE = [20.0, 20.5, 21.0, 20.2, 20.8]
CLEAR = [22.0, 22.5, 23.0, 22.2, 22.8]
EDGE = [21.2, 22.0, 20.9, 21.9, 21.1]
NULL = [20.0, 21.5, 20.8, 21.0, 20.2]


def _score_files(tmp_path, runs):
    from wordorder.evaluate.scores import write_scores

    paths = []
    for variant, bleus in runs.items():
        for seed, bleu in enumerate(bleus, start=1):
            path = tmp_path / "scores" / f"{variant}.{seed}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            meta = {"pair": "ja-en", "testset": "test", "variant": variant, "seed": seed}
            write_scores(path, {"bleu": bleu, "ribes": 70.0, "chrf": 50.0, "nkt": 80.0}, meta)
            paths.append(str(path))
    return paths


def _cross_paper(tmp_path, runs):
    """``wordorder cross-paper-table`` as the rule calls it (scores only, no significance files)."""
    from wordorder.cli import main

    tmp_path.mkdir(exist_ok=True)
    systems = tmp_path / "systems.csv"
    rows = [
        {"pair": "ja-en", "variant": v, "seed": 1, "params": 1e6, "train_tok_s": 100.0}
        for v in runs
    ]
    pd.DataFrame(rows).to_csv(systems, index=False)
    out = tmp_path / "out"
    args = ["--systems", str(systems), "--baseline", "base", "--title", "T"]
    args += ["--csv", str(out / "c.csv"), "--md", str(out / "c.md")]
    assert main(["cross-paper-table", "--scores", *_score_files(tmp_path, runs), *args]) == 0
    return (out / "c.md").read_text(encoding="utf-8")


def test_cross_paper_markers_are_run_level_and_holm_adjusted(tmp_path):
    """5 runs clearly above the 5-run base: "++"; EDGE "+" alone (p = 0.033), but not beside a
    second row (Holm over 2 rows: 0.067); a system with one run: no marker, and the note says so."""
    md = _cross_paper(tmp_path, {"base": BASE, "clear": CLEAR, "single": [30.0]})
    assert "| clear | 22.50 ± 0.41++ |" in md and "| single | 30.00 |" in md
    assert (
        "run-level Welch t (Hsu df) against base, Holm over the 1 row; one run: no run-level "
        "test (1 row unmarked, not among Holm's rows)." in md
    )
    assert "| edge | 21.42 ± 0.50+ |" in _cross_paper(tmp_path / "a", {"base": BASE, "edge": EDGE})
    md = _cross_paper(tmp_path / "b", {"base": BASE, "edge": EDGE, "null": NULL})
    assert "| edge | 21.42 ± 0.50 |" in md and "Holm over the 2 rows." in md
