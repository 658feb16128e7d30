"""Results tables from hand-made scores JSON files, and the training-curve plot."""

from __future__ import annotations

import json
import math
import statistics

import pandas as pd
import pytest

from wordorder.errors import WordorderError
from wordorder.evaluate.plots import plot_training_curves, read_metric_log
from wordorder.evaluate.scores import read_scores, write_scores
from wordorder.evaluate.table_render import write_table
from wordorder.evaluate.tables import collect_scores, results_table

SIG = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
SIG_JA = "nrefs:1|case:mixed|eff:no|tok:ja-mecab-0.996-IPA|smooth:exp|version:2.6.0"
CHRF_SIG = "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0"


def _write(tmp_path, name, variant, pair, testset, seed, bleu, chrf, sig=SIG):
    path = tmp_path / f"{name}.json"
    scores = {
        "bleu": bleu,
        "bleu_signature": sig,
        "chrf": chrf,
        "chrf_signature": CHRF_SIG,
        "bleu_tok": None,
        "bleu_tok_signature": None,
        "n_sentences": 10,
        "bleu_detail": {"precisions": [1, 2, 3, 4], "bp": 1.0, "sys_len": 5, "ref_len": 5},
    }
    meta = {
        "pair": pair,
        "variant": variant,
        "seed": seed,
        "testset": testset,
        "checkpoint": "best.pt",
    }
    write_scores(path, scores, meta)
    return path


@pytest.fixture
def score_files(tmp_path):
    return [
        _write(tmp_path, "r1", "reordered", "en-ja", "test", 1, 20.0, 40.0, SIG_JA),
        _write(tmp_path, "b1", "baseline", "en-ja", "test", 1, 10.0, 30.0, SIG_JA),
        _write(tmp_path, "b2", "baseline", "en-ja", "test", 2, 14.0, 33.0, SIG_JA),
        _write(tmp_path, "r2", "reordered", "en-ja", "test", 2, 21.0, 41.0, SIG_JA),
        _write(tmp_path, "b3", "baseline", "en-de", "newstest2014", 1, 25.0, 55.0),
    ]


def test_collect_scores(score_files):
    df = collect_scores(score_files)
    assert len(df) == 5
    for col in (
        "pair",
        "variant",
        "seed",
        "testset",
        "checkpoint",
        "bleu",
        "chrf",
        "bleu_signature",
        "bleu_detail.bp",
        "path",
    ):
        assert col in df.columns
    assert list(df["variant"]) == ["reordered", "baseline", "baseline", "reordered", "baseline"]
    assert df.loc[1, "bleu"] == 10.0


def test_results_table_mean_and_sd(score_files):
    table = results_table(collect_scores(score_files))
    # rows in order of first appearance
    assert list(table.index) == ["reordered", "baseline"]
    assert list(table.columns.names) == ["pair", "testset", "metric", "stat"]
    b = table.loc["baseline"]
    assert b[("en-ja", "test", "bleu", "mean")] == pytest.approx(12.0)
    # sample sd of 10 and 14: sqrt(((10-12)^2 + (14-12)^2) / (2-1)) = sqrt(8)
    assert b[("en-ja", "test", "bleu", "sd")] == pytest.approx(math.sqrt(8))
    assert b[("en-ja", "test", "bleu", "sd")] == pytest.approx(statistics.stdev([10.0, 14.0]))
    assert b[("en-ja", "test", "chrf", "mean")] == pytest.approx(31.5)
    assert b[("en-ja", "test", "chrf", "sd")] == pytest.approx(math.sqrt(4.5))
    assert b[("en-ja", "test", "bleu", "n")] == 2
    r = table.loc["reordered"]
    assert r[("en-ja", "test", "bleu", "mean")] == pytest.approx(20.5)
    assert r[("en-ja", "test", "bleu", "sd")] == pytest.approx(math.sqrt(0.5))
    # one seed: mean = value, sd undefined
    assert b[("en-de", "newstest2014", "bleu", "mean")] == 25.0
    assert b[("en-de", "newstest2014", "bleu", "n")] == 1
    assert math.isnan(b[("en-de", "newstest2014", "bleu", "sd")])
    assert math.isnan(r[("en-de", "newstest2014", "bleu", "mean")])
    assert table.attrs["signatures"]["bleu"] == [SIG_JA, SIG]


def test_results_table_variant_order_and_single_seed(score_files):
    df = collect_scores(score_files)
    table = results_table(df, metrics=("bleu",), variants=["baseline", "reordered"])
    assert list(table.index) == ["baseline", "reordered"]
    assert set(table.columns.get_level_values("metric")) == {"bleu"}
    one = results_table(df[df["seed"] == 1])
    assert set(one.columns.get_level_values("stat")) == {"mean"}
    with pytest.raises(WordorderError, match="nope"):
        results_table(df, variants=["nope"])


def test_results_table_errors(score_files, tmp_path):
    df = collect_scores(score_files)
    with pytest.raises(WordorderError, match="more than one result"):
        results_table(pd.concat([df, df.iloc[[0]]], ignore_index=True))
    with pytest.raises(WordorderError, match="ter"):
        results_table(df, metrics=("ter",))
    with pytest.raises(WordorderError):
        results_table(df.drop(columns=["seed"]))
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(WordorderError):
        collect_scores([bad])


def test_write_table(score_files, tmp_path):
    table = results_table(collect_scores(score_files))
    csv_path, md_path = tmp_path / "t" / "results.csv", tmp_path / "t" / "results.md"
    write_table(table, csv_path, md_path, title="Word order results")

    csv = pd.read_csv(csv_path)
    assert list(csv.columns) == ["variant", "pair", "testset", "metric", "mean", "sd", "n"]
    row = csv[(csv.variant == "baseline") & (csv.pair == "en-ja") & (csv.metric == "bleu")].iloc[0]
    assert row["mean"] == pytest.approx(12.0) and row["sd"] == pytest.approx(math.sqrt(8))
    assert row["n"] == 2
    assert pd.api.types.is_float_dtype(csv["mean"])
    assert len(csv) == 6  # reordered has no en-de result: no row for it

    md = md_path.read_text(encoding="utf-8")
    assert md.startswith("# Word order results\n")
    assert "| variant | en-ja test BLEU | en-ja test chrF | en-de newstest2014 BLEU |" in md
    assert "| baseline | 12.0 ± 2.8 (n=2) | 31.5 ± 2.1 (n=2) | 25.0 (n=1) |" in md
    assert "| reordered | 20.5 ± 0.7 (n=2) | 40.5 ± 0.7 (n=2) | – |" in md
    assert SIG_JA in md and SIG in md and CHRF_SIG in md
    assert sorted(p.name for p in (tmp_path / "t").iterdir()) == ["results.csv", "results.md"]


def test_write_table_uniform_seeds(score_files, tmp_path):
    df = collect_scores(score_files[:4])
    write_table(results_table(df), tmp_path / "a.csv", tmp_path / "a.md", title="T")
    md = (tmp_path / "a.md").read_text(encoding="utf-8")
    assert "| baseline | 12.0 ± 2.8 | 31.5 ± 2.1 |" in md
    assert "over 2 seeds" in md


def _log(path, rows, summary=True):
    """A metric log as a finished training writes it: its records, then its summary."""
    rows = [*rows, {"summary": {"steps": 100, "stop_reason": "max_steps"}}] if summary else rows
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_plot_training_curves(tmp_path):
    a = _log(
        tmp_path / "a.jsonl",
        [
            {"step": 100 * i, "train_loss": 8.0 / i, "lr": 3e-4, "tokens_per_s": 5000.0}
            for i in range(1, 21)
        ]
        + [{"step": 500 * i, "dev_bleu": 3.0 * i, "dev_loss": 6.0 - i} for i in range(1, 5)],
    )
    b = _log(
        tmp_path / "b.jsonl",
        [{"step": 100, "train_loss": 7.0}, {}, {"step": 200, "train_loss": 6.5}],
    )
    out = tmp_path / "plots" / "curves.png"
    plot_training_curves({"en-ja transformer_small seed1": a, "en-ja reordered seed1": b}, out)
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert [p.name for p in out.parent.iterdir()] == ["curves.png"]


def test_a_log_cut_at_a_line_boundary_is_refused(tmp_path):
    """Issue 49, case 7: a metrics.jsonl cut after 2 of its 5 lines (no summary) built tables
    of part of a run without a word."""
    cut = _log(tmp_path / "m.jsonl", [{"step": 50, "train_loss": 7.0}, {"step": 100}], False)
    with pytest.raises(WordorderError) as e:
        read_metric_log(cut)
    assert str(e.value).startswith(
        f"{cut}: no summary line after 2 records: the training did not finish, or the file was cut"
    )


def test_plot_bad_log(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"step": 1}\nnot json\n', encoding="utf-8")
    with pytest.raises(WordorderError) as e:
        read_metric_log(bad)
    assert e.value.line == 2
    with pytest.raises(WordorderError):
        plot_training_curves({"x": tmp_path / "missing.jsonl"}, tmp_path / "o.png")
    assert not (tmp_path / "o.png").exists()


# Run-level markers: per-run corpus BLEU of a 5-run baseline and systems built around it. Welch's
# t with Hsu's df (min(n_A, n_B) − 1 = 4) gives CLEAR p = 0.0016, EDGE p = 0.033 (Satterthwaite's
# df 7.9: 0.013), BARELY (3 runs) p = 0.34, NULL p = 0.58.
BASE = [20.0, 20.5, 21.0, 20.2, 20.8]
CLEAR = [22.0, 22.5, 23.0, 22.2, 22.8]
WORSE = [18.0, 18.5, 19.0, 18.2, 18.8]
BARELY = [20.3, 21.6, 21.2]
EDGE = [21.2, 22.0, 20.9, 21.9, 21.1]
NULL = [20.0, 21.5, 20.8, 21.0, 20.2]


def _runs(systems, testset="test"):
    """Scores rows as collect_scores gives them: one per (variant, seed) on en-ja/``testset``."""
    return pd.DataFrame(
        [
            {"variant": v, "pair": "en-ja", "testset": testset, "seed": seed, "bleu": bleu}
            for v, bleus in systems.items()
            for seed, bleu in enumerate(bleus, start=1)
        ]
    )


def test_run_level_markers_from_welch_hsu_over_the_runs():
    """5 runs clearly above a 5-run baseline: "++"; clearly below: "−−"; 3 runs barely above:
    none; one run: no test, no marker, and the note says so; Holm over the 3 tested rows."""
    from wordorder.evaluate.tables import run_level_markers

    df = _runs({"base": BASE, "clear": CLEAR, "worse": WORSE, "barely": BARELY, "single": [25.0]})
    marked = run_level_markers(df, "base")
    assert marked.markers == {
        ("clear", "en-ja", "test"): "++",
        ("worse", "en-ja", "test"): "−−",
        ("barely", "en-ja", "test"): "",
        ("single", "en-ja", "test"): "",
    }
    assert marked.p[("clear", "en-ja", "test")] == pytest.approx(0.0015537, rel=1e-4)
    assert marked.p[("barely", "en-ja", "test")] == pytest.approx(0.33746, rel=1e-4)
    # Holm over 3 rows: the two smallest p (equal) become 3 · 0.00155
    assert marked.p_holm[("clear", "en-ja", "test")] == pytest.approx(3 * 0.0015537, rel=1e-4)
    assert marked.untested == [("single", "en-ja", "test")]
    assert marked.note() == (
        "BLEU +/++ (−/−−): better (worse) than base at Holm-adjusted p < 0.05 / 0.01; run-level "
        "Welch t (Hsu df) against base, Holm over the 3 rows; one run: no run-level test "
        "(1 row unmarked, not among Holm's rows)."
    )
    # the table's systems only: the others are neither marked nor among Holm's rows
    assert run_level_markers(df, "base", ["base", "barely"]).markers == {
        ("barely", "en-ja", "test"): ""
    }
    # a baseline with one run: nothing is tested; no baseline in the scores: no markers at all
    alone = run_level_markers(_runs({"base": [20.0], "clear": CLEAR}), "base")
    assert alone.markers == {("clear", "en-ja", "test"): ""} and alone.note() == (
        "No BLEU markers: one run: no run-level test against base (1 row)."
    )
    assert (
        run_level_markers(df, "absent").markers == {} and not run_level_markers(df, "absent").note()
    )


def test_run_level_markers_use_hsu_df_not_satterthwaite():
    """EDGE alone: Hsu's df 4 gives p = 0.033, "+"; Satterthwaite's df (7.9) would give 0.013
    and a z-test less still, both "++" (the liberal tests the claim's test replaced)."""
    from wordorder.evaluate.tables import run_level_markers

    marked = run_level_markers(_runs({"base": BASE, "edge": EDGE}), "base")
    assert marked.markers == {("edge", "en-ja", "test"): "+"}
    assert marked.p[("edge", "en-ja", "test")] == pytest.approx(0.033353, rel=1e-4)


def test_run_level_markers_are_holm_adjusted_over_the_tables_rows():
    """EDGE is "+" alone (p = 0.033) but not beside a second row (NULL, p = 0.58): Holm over the 2
    rows doubles its p to 0.067. The family is the table's rows, across test sets too."""
    from wordorder.evaluate.tables import run_level_markers

    two = run_level_markers(_runs({"base": BASE, "edge": EDGE, "null": NULL}), "base")
    assert two.markers == {("edge", "en-ja", "test"): "", ("null", "en-ja", "test"): ""}
    assert two.p_holm[("edge", "en-ja", "test")] == pytest.approx(2 * 0.033353, rel=1e-4)
    assert "Holm over the 2 rows." in two.note()
    # the second row on another test set of the same table: still 2 rows, still no marker
    testsets = pd.concat(
        [_runs({"base": BASE, "edge": EDGE}), _runs({"base": BASE, "edge": NULL}, "other")]
    )
    assert run_level_markers(testsets, "base").markers == {
        ("edge", "en-ja", "test"): "",
        ("edge", "en-ja", "other"): "",
    }


def test_markers_reach_the_markdown_and_latex(score_files, tmp_path):
    markers = {("reordered", "en-ja", "test"): "++"}
    md, csv = tmp_path / "t.md", tmp_path / "t.csv"
    tex = tmp_path / "t.tex"
    write_table(
        results_table(collect_scores(score_files)),
        csv,
        md,
        "T",
        markers=markers,
        marker_note="NOTE",
        tex_path=tex,
    )
    latex = tex.read_text(encoding="utf-8")
    assert r"reordered & 20.5 $\pm$ 0.7$^{++}$ (n=2) & 40.5 $\pm$ 0.7 (n=2) & -- & -- \\" in latex
    assert latex.startswith(r"\begin{table}") and r"\caption{T Mean $\pm$ sample" in latex
    text = md.read_text(encoding="utf-8")
    assert (
        "| reordered | 20.5 ± 0.7++ (n=2) |" in text
        and "| baseline | 12.0 ± 2.8 (n=2) |" in text
        and "NOTE" in text
    )


def test_report_command_writes_its_tables_and_curves(score_files, tmp_path):
    """The ``report`` subcommand as the rule calls it (no significance files: the markers come
    from the scores' runs): results table with the run-level markers and their note, the n-gram
    table, no generation table without RIBES, the curves."""
    from wordorder.cli import main

    (tmp_path / "en-ja" / "baseline" / "1").mkdir(parents=True)
    log = _log(
        tmp_path / "en-ja" / "baseline" / "1" / "metrics.jsonl", [{"step": 100, "train_loss": 7.0}]
    )
    runs = [
        _write(tmp_path, f"{v}{seed}", v, "en-ja", "test", seed, bleu, 40.0, SIG_JA)
        for v, bleus in (("baseline", BASE), ("reordered", CLEAR), ("barely", BARELY))
        for seed, bleu in enumerate(bleus, start=1)
    ]
    out = tmp_path / "out"
    rc = main(
        [
            "report",
            "--scores",
            *map(str, runs),
            "--metrics",
            str(log),
            "--variants",
            "baseline",
            "reordered",
            "barely",
            "--title",
            "exp: results",
            "--csv",
            str(out / "r.csv"),
            "--md",
            str(out / "r.md"),
            "--curves",
            str(out / "curves.png"),
            "--baseline",
            "baseline",
            "--generation-csv",
            str(out / "g.csv"),
            "--generation-md",
            str(out / "g.md"),
            "--ngram-csv",
            str(out / "n.csv"),
            "--ngram-md",
            str(out / "n.md"),
        ]
    )
    assert rc == 0
    assert sorted(p.name for p in out.iterdir()) == ["curves.png", "n.csv", "n.md", "r.csv", "r.md"]
    md = (out / "r.md").read_text(encoding="utf-8")
    assert "| reordered | 22.5 ± 0.4++ (n=5) |" in md and "| barely | 21.0 ± 0.7 (n=3) |" in md
    assert (
        "BLEU +/++ (−/−−): better (worse) than baseline at Holm-adjusted p < 0.05 / 0.01; "
        "run-level Welch t (Hsu df) against baseline, Holm over the 2 rows." in md
    )
    assert md.startswith("# exp: results\n")
    assert md.index("| baseline |") < md.index("| reordered |")
    ngram = (out / "n.md").read_text(encoding="utf-8")
    assert ngram.startswith("# exp: n-gram precisions of BLEU (%)\n")
    assert (
        "| baseline | 1.0 ± 0.0 (n=5) | 2.0 ± 0.0 (n=5) | 3.0 ± 0.0 (n=5) | 4.0 ± 0.0 (n=5) |"
        in ngram
    )


def test_a_score_that_is_nan_is_refused_by_the_report(score_files, tmp_path, capsys):
    """Issue 49, case 7: ``"bleu": NaN`` in a score file (no metric writes one: the file is
    broken) was shown as "–" in the table. The report names the file."""
    from wordorder.cli import main

    runs = [
        _write(tmp_path, f"b{s}", "baseline", "en-ja", "test", s, 12.0 + s, 40.0, SIG_JA)
        for s in (1, 2)
    ]
    runs[1].write_text(runs[1].read_text(encoding="utf-8").replace('"bleu": 14.0', '"bleu": NaN'))
    assert "NaN" in runs[1].read_text(encoding="utf-8")
    log = _log(tmp_path / "m.jsonl", [{"step": 100, "train_loss": 7.0}])
    out = tmp_path / "out"
    argv = ["report", "--scores", *map(str, runs), "--metrics", str(log), "--variants", "baseline"]
    argv += ["--title", "t", "--csv", str(out / "r.csv"), "--md", str(out / "r.md")]
    assert main([*argv, "--curves", str(out / "c.png")]) == 2
    err = capsys.readouterr().err
    assert f"error: {runs[1]}: a score is NaN, not a number" in err
    assert not out.exists() or list(out.iterdir()) == []


def test_shortest_brevity_scores_show_the_closest_reading_beside_them(tmp_path):
    """Scores made with ``bleu_brevity: shortest`` carry ``bleu_closest``: the report puts it in
    a column of its own next to BLEU; scores without it keep the plain columns."""
    from wordorder.evaluate.report import write_report
    from wordorder.evaluate.scores import score_translations

    hyps, refs = ["a b c d", "e f g h i"], ["a b c d x", "e f g h i y"]
    extra = [["a b", "e f"]]  # shorter than the hypotheses: no penalty by the shortest
    paths = []
    for variant, brevity in (("s", "shortest"), ("c", "closest")):
        scores = score_translations(hyps, refs, "en", extra_refs=extra, brevity=brevity)
        meta = {"pair": "zh-en", "variant": variant, "seed": 1, "testset": "mt03"}
        write_scores(tmp_path / f"{variant}.json", scores, meta)
        paths.append(tmp_path / f"{variant}.json")
    short, close = (read_scores(p) for p in paths)  # meta aside, the score dicts
    log = _log(tmp_path / "metrics.jsonl", [{"step": 100, "train_loss": 7.0}])
    assert short["bleu"] > short["bleu_closest"] == close["bleu"]
    write_report(
        paths[:1], [log], ["s"], "x: r", tmp_path / "r.csv", tmp_path / "r.md", tmp_path / "c.png"
    )
    md = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "BLEU (closest ref.)" in md and f"{short['bleu_closest']:.1f}" in md
    write_report(
        paths[1:], [log], ["c"], "x: r", tmp_path / "q.csv", tmp_path / "q.md", tmp_path / "d.png"
    )
    assert "closest ref." not in (tmp_path / "q.md").read_text(encoding="utf-8")
