"""Findings with the training run as the unit: per-run BLEU as sacreBLEU scores it, each
system's own mean and sd, the permutation p, the two-level bootstrap CI, Holm over the table and
the verdicts; one run of each system falls back to sacreBLEU's paired bootstrap, labelled so; the
CLI writes the table and the per-run scores; Holm within each family of claims, and a claim
judged on the long-source subset of the test set. Real sentences: the Multi30k test2016 German
references, with systems made by deleting words."""

from __future__ import annotations

import gzip
import json
import random

import pytest
from cli_checks import run
from sacrebleu.metrics import BLEU

from wordorder.errors import WordorderError
from wordorder.evaluate.findings import (
    compare_runs,
    findings_markdown,
    judge,
    keep_lines,
    long_sentences,
)
from wordorder.evaluate.power import mde_welch
from wordorder.evaluate.seed_stats import permutation_test, pooled_sd, welch
from wordorder.evaluate.significance import bleu_paired_bootstrap


@pytest.fixture(scope="module")
def refs(shared_data):
    with gzip.open(
        shared_data / "multi30k_task1_en-de-cs" / "test_2016_flickr.de.gz", "rt", encoding="utf-8"
    ) as f:
        return [line.rstrip("\n") for line in f][:300]


def damaged(refs, share, seed):
    """Each reference with about ``share`` of its words deleted."""
    rng = random.Random(seed)
    return [" ".join(w for w in r.split() if rng.random() >= share) or r.split()[0] for r in refs]


def bleu(hyps, refs):
    return BLEU().corpus_score(hyps, [refs]).score


def test_runs_are_the_unit(refs):
    # three runs of a system against two of its baseline: no pairing of runs
    system = [damaged(refs, share, s) for share, s in ((0.05, 1), (0.08, 2), (0.06, 3))]
    baseline = [damaged(refs, share, s) for share, s in ((0.30, 4), (0.25, 5))]
    out = compare_runs(system, baseline, [refs], samples=200)
    a, b = [bleu(h, refs) for h in system], [bleu(h, refs) for h in baseline]
    assert out["system_scores"] == pytest.approx(a, abs=1e-9)
    assert out["baseline_scores"] == pytest.approx(b, abs=1e-9)
    assert (out["system_runs"], out["baseline_runs"]) == (3, 2)
    assert out["system_mean"] == pytest.approx(sum(a) / 3)
    assert out["delta"] == pytest.approx(sum(a) / 3 - sum(b) / 2)
    assert out["system_sd"] > 0 and out["baseline_sd"] > 0
    # the claim's test: Welch's t with Hsu's df (1 here); the permutation test of Welch's t is
    # reported beside it (5 runs fully separated: 1/C(5, 2) = 0.1)
    assert out["test"] == "Welch" and out["seed_level"]
    assert out["p"] == pytest.approx(welch(a, b, "min").p)
    assert out["p_permutation"] == pytest.approx(0.1)
    assert out["p_welch"] == pytest.approx(welch(a, b).p)  # Satterthwaite's, reported
    assert out["pooled_sd"] == pytest.approx(pooled_sd(a, b))
    assert out["mde"] > 0
    lo, hi = out["ci"]
    assert lo < out["delta"] < hi and out["ci_method"] == "Welch + sentences"
    blo, bhi = out["ci_bootstrap"]
    assert blo < out["delta"] < bhi and blo > 5  # a fifth of the words fewer: far from 0
    assert out["p_floor"] == 0.0  # Welch's p is continuous
    judged = judge([{"paper_delta": 1.0, **out}])[0]
    assert judged["ratio"] == pytest.approx(out["delta"])
    # 2 baseline runs: Hsu's df is 1, so even this Δ of ~20 BLEU is below the MDE
    assert judged["verdict"].startswith("not detected (MDE ") and judged["mde"] > out["delta"]
    # the other way round: the same p, the opposite Δ and CI
    back = compare_runs(baseline, system, [refs], samples=200)
    assert back["p"] == out["p"] and back["delta"] == pytest.approx(-out["delta"])


def test_one_run_each_is_sacrebleus_paired_bootstrap(refs):
    system, baseline = damaged(refs, 0.10, 1), damaged(refs, 0.13, 2)
    out = compare_runs([system], [baseline], [refs], samples=200)
    ours = bleu_paired_bootstrap(system, baseline, refs, samples=200)
    assert out["p"] == ours["p"] and out["test"] == "paired bootstrap, one run"
    assert not out["seed_level"] and out["mde"] is None and out["p_welch"] is None
    assert out["system_sd"] is None and out["pooled_sd"] is None
    assert out["delta"] == pytest.approx(bleu(system, refs) - bleu(baseline, refs))
    # the permutation test of one run against one says nothing: p = 1
    assert out["p_permutation"] == 1.0 == permutation_test([1.0], [2.0]).p


def test_refuses_mismatched_outputs(refs):
    with pytest.raises(WordorderError, match="different numbers of lines"):
        compare_runs([refs], [refs[:-1]], [refs])
    with pytest.raises(WordorderError, match="at least one run"):
        compare_runs([], [refs], [refs])


def row(**kw):
    base = {
        "paper": "Kawara 2021",
        "pair": "ja-en",
        "testset": "test",
        "system": "rel_btg",
        "baseline": "base",
        "paper_delta": 1.34,
        "what": "",
        "system_scores": [26.03, 27.19, 25.06],
        "baseline_scores": [26.29, 26.35, 25.81],
        "system_mean": 26.093,
        "system_sd": 1.066,
        "system_runs": 3,
        "baseline_mean": 26.15,
        "baseline_sd": 0.59,
        "baseline_runs": 3,
        "delta": 0.512,
        "ci": [-0.61, 1.7],
        "p": 0.2,
        "test": "exact permutation",
        "seed_level": True,
        "mde": 2.0814,  # at α 0.05 for one claim, from pooled_sd
        "pooled_sd": 0.91,
        "samples": 1000,
    }
    return {**base, **kw}


def test_judge_applies_holm_over_the_table():
    rows = judge(
        [
            row(p=0.01, delta=1.0, ci=[0.5, 1.5], paper_delta=1.3),
            row(p=0.04, delta=-1.0, ci=[-1.5, -0.5], paper_delta=1.3),
            row(p=0.03, delta=0.5, ci=[0.2, 0.8], paper_delta=0.0),
        ]
    )
    assert [r["p_holm"] for r in rows] == pytest.approx([0.03, 0.06, 0.06])
    # the MDE at α/3, Holm's first step, of Welch's t with Hsu's df 2 and each system's sd
    m3 = round(mde_welch(1.066, 3, 0.59, 3, claims=3), 2)
    assert [r["verdict"] for r in rows] == [
        "reproduced (same sign, significant after Holm)",
        "paper's Δ excluded (not significant)",  # the other sign at raw p 0.04, not after Holm
        f"no difference detected (MDE {m3:.2f})",
    ]
    assert [r["claims"] for r in rows] == [3, 3, 3]
    # a family of its own: a secondary row is corrected alone, its MDE at α
    mixed = judge([row(p=0.2), row(p=0.2), row(p=0.2, family="secondary")])
    m1, m2 = (round(mde_welch(1.066, 3, 0.59, 3, claims=c), 2) for c in (1, 2))
    assert [round(r["mde"], 2) for r in mixed] == [m2, m2, m1]
    single = judge([row(p=0.001, seed_level=False, mde=None, delta=1.0, ci=[0.5, 1.5])])[0]
    assert single["verdict"] == "one run: same sign (sentence sampling only)"


def test_markdown_row_and_footnote():
    md = findings_markdown(judge([row()]), "Findings")
    assert (
        "| paper | pair / test set | comparison | paper Δ | system BLEU (mean ± sd, n) "
        "| baseline BLEU (mean ± sd, n) | our Δ | 95 % CI | our Δ / paper Δ | p | Holm p | MDE "
        "| verdict |"
    ) in md
    m = mde_welch(1.066, 3, 0.59, 3)
    assert (
        "| Kawara 2021 | ja-en / test | rel_btg vs base | +1.34 | 26.09 ± 1.07 (3) "
        "| 26.15 ± 0.59 (3) | +0.51 | [-0.61, +1.70] | 0.38 [-0.46, 1.27] | 0.200 (perm.) "
        f"| 0.200 | {m:.2f} | not detected (MDE {m:.2f}) |"
    ) in md
    assert "The training run (seed) is the unit" in md and "Holm–Bonferroni" in md
    single = row(
        system_sd=None,
        baseline_sd=None,
        system_runs=1,
        baseline_runs=1,
        seed_level=False,
        mde=None,
        test="paired bootstrap, one run",
        p=0.004,
    )
    md = findings_markdown(judge([single]), "Findings")
    assert "| 26.09 (1) | 26.15 (1) |" in md and "| 0.004 (1-run bootstrap) | 0.004 | — |" in md
    assert "Hsu's df" in md and "added once" in md


def test_free_text_with_a_bar_or_a_line_break_stays_in_its_cell():
    """Issue 49, case 7: a "|" or a newline in a claim's paper or what broke the table."""
    md = findings_markdown(judge([row(paper="Kawara | 2021\nTable III", what="a|b")]), "F")
    line = next(x for x in md.splitlines() if x.startswith("| Kawara"))
    assert line.startswith("| Kawara \\| 2021 Table III | ja-en / test | rel_btg vs base (a\\|b) |")
    assert line.replace("\\|", "").count("|") == 14  # 13 cells


def test_claims_the_run_cannot_judge_are_listed():
    claim = {"paper": "Kawara 2021", "pair": "ja-en", "testset": "bible", "paper_delta": 12.51}
    claim |= {"system": "gold", "baseline": "base", "reason": "variant gold not in this run"}
    md = findings_markdown(judge([row()]), "F", [claim])
    assert md.rstrip().endswith(
        "- Kawara 2021: gold vs base on ja-en / bible, paper Δ +12.51: variant gold not in this run"
    )
    assert "No claim of the config can be judged by this run." in findings_markdown(
        [], "F", [claim]
    )


def test_findings_cli(tmp_path, capsys, refs):
    paths = {}
    for name, lines in (
        ("ref", refs),
        ("s1", damaged(refs, 0.05, 1)),
        ("s2", damaged(refs, 0.07, 2)),
        ("s3", damaged(refs, 0.06, 3)),
        ("s4", damaged(refs, 0.05, 4)),
        ("b1", damaged(refs, 0.3, 5)),
        ("b2", damaged(refs, 0.28, 6)),
        ("b3", damaged(refs, 0.31, 7)),
        ("b4", damaged(refs, 0.29, 8)),
    ):
        paths[name] = str(tmp_path / name)
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    claim = {
        "paper": "Chen 2019",
        "pair": "en-de",
        "testset": "test2016",
        "system": "both_res",
        "baseline": "transformer",
        "refs": [paths["ref"]],
        "lang": "de",
    }
    spec = {
        "title": "Findings",
        "claims": [
            {
                **claim,
                "paper_delta": 0.98,
                "system_hyps": [paths[f"s{i}"] for i in (1, 2, 3, 4)],
                "baseline_hyps": [paths[f"b{i}"] for i in (1, 2, 3, 4)],
            },
            {
                **claim,
                "paper_delta": 0.0,
                "system_hyps": [paths["s1"]],
                "baseline_hyps": [paths["b1"]],
            },
        ],
    }
    argv = ["findings", "--spec", json.dumps(spec), "--md", tmp_path / "f.md"]
    code, errors = run([*argv, "--json", tmp_path / "f.json", "--samples", "100"], capsys)
    assert code == 0, errors
    seeds, single = json.loads((tmp_path / "f.json").read_text())["findings"]
    # four runs each, completely separated: Welch's p (df 3) is far below the single-run
    # row's 1/101, so Holm doubles the smaller; the permutation test is reported, 2/70
    assert seeds["test"] == "Welch" and seeds["p"] < 1 / 101
    assert seeds["p_permutation"] == pytest.approx(2 / 70)
    assert seeds["p_holm"] == pytest.approx(2 * seeds["p"])
    assert single["p"] == pytest.approx(1 / 101) and single["p_holm"] == pytest.approx(1 / 101)
    assert len(seeds["system_scores"]) == len(seeds["baseline_scores"]) == 4
    assert seeds["delta"] > 5 and seeds["ci"][0] > 0.98
    assert seeds["verdict"] == "reproduced (same sign, significant after Holm)"
    assert seeds["ratio"] > 5  # the size, beside: our Δ is many times the paper's +0.98
    assert single["test"] == "paired bootstrap, one run" and single["system_scores"] == [
        pytest.approx(bleu(damaged(refs, 0.05, 1), refs))
    ]
    assert single["verdict"] == "one run: difference found (sentence sampling only)"
    md = (tmp_path / "f.md").read_text()
    assert "| Chen 2019 | en-de / test2016 | both_res vs transformer | +0.98 |" in md
    assert "(1-run bootstrap)" in md and "(Welch)" in md


def test_cost_sums_the_jobs_cpu_footers(tmp_path):
    from wordorder.evaluate.cost import cost_markdown, cost_summary

    (tmp_path / "train").mkdir()
    (tmp_path / "train" / "a.log").write_text(
        (
            "2026-01-01 INFO wordorder: train finished in 7200.0 s; peak "
            "memory 900 MB; cpu 12600.0 s\n"
        ),
        encoding="utf-8",
    )
    (tmp_path / "b.log").write_text(
        "x\n2026 INFO wordorder: translate finished in 10.0 s; peak memory 9 MB; cpu 1800.0 s\n",
        encoding="utf-8",
    )
    (tmp_path / "failed.log").write_text("error: something\n", encoding="utf-8")
    cost = cost_summary(tmp_path)
    assert cost["jobs"] == 2 and cost["cpu_hours"] == pytest.approx(4.0)
    assert cost["wall_hours"] == pytest.approx(7210 / 3600)
    assert list(cost["by_command"]) == ["train", "translate"]
    assert "4.00 CPU-hours over 2 jobs" in cost_markdown(cost)
    assert cost["gpu_jobs"] == 0 and "GPU" not in cost_markdown(cost)
    # A decoding on a GPU machine (its speed record names the device): counted apart as well
    (tmp_path / "c.log").write_text(
        '{\n "sentences": 500,\n "device": "cuda"\n}\n'
        "2026 INFO wordorder: translate finished in 4.0 s; peak memory 9 MB; cpu 360.0 s\n",
        encoding="utf-8",
    )
    cost = cost_summary(tmp_path)
    assert cost["jobs"] == 3 and cost["cpu_hours"] == pytest.approx(4.1)
    assert cost["gpu_jobs"] == 1 and cost["gpu_host_cpu_hours"] == pytest.approx(0.1)
    assert "1 of the jobs ran on a GPU machine: 0.10 of those CPU-hours" in cost_markdown(cost)


# --- claim families and the length subset


def test_holm_within_each_family():
    """Holm over the rows of one family: the secondary rows do not enlarge the primary's m."""
    rows = judge(
        [
            row(p=0.01, family="primary"),
            row(p=0.02, family="secondary"),
            row(p=0.04, family="primary"),
            row(p=0.01, family="secondary"),
            row(p=0.03),  # no family: primary
        ]
    )
    # primary [0.01, 0.04, 0.03] -> [0.03, 0.06, 0.06]; secondary [0.02, 0.01] -> [0.02, 0.02]
    assert [r["p_holm"] for r in rows] == pytest.approx([0.03, 0.02, 0.06, 0.02, 0.06])
    # one family of all five would have given 0.05 for the first row
    assert judge([row(p=p) for p in (0.01, 0.02, 0.04, 0.01, 0.03)])[0]["p_holm"] == 0.05


@pytest.fixture(scope="module")
def sources(shared_data):
    with gzip.open(
        shared_data / "multi30k_task1_en-de-cs" / "test_2016_flickr.en.gz", "rt", encoding="utf-8"
    ) as f:
        return [line.rstrip("\n") for line in f][:300]


def test_length_subset_is_scored_on_the_long_sentences(refs, sources):
    keep = long_sentences(sources, 15, len(refs))
    assert keep == [i for i, s in enumerate(sources) if len(s.split()) >= 15]
    assert 10 < len(keep) < 150  # a real subset of the 300
    system = [damaged(refs, share, s) for share, s in ((0.05, 1), (0.08, 2), (0.06, 3))]
    baseline = [damaged(refs, share, s) for share, s in ((0.30, 4), (0.25, 5))]
    out = compare_runs(*(keep_lines(x, keep) for x in (system, baseline, [refs])), samples=100)
    by_hand = [bleu([h[i] for i in keep], [refs[i] for i in keep]) for h in system]
    assert out["system_scores"] == pytest.approx(by_hand, abs=1e-9)
    assert out["sentences"] == len(keep)
    assert out["system_scores"] != pytest.approx([bleu(h, refs) for h in system], abs=1e-3)


def test_length_subset_refuses_a_wrong_source(sources):
    with pytest.raises(
        WordorderError, match="the tokenized source has 300 lines, the test set 299"
    ):
        long_sentences(sources, 15, 299)
    with pytest.raises(WordorderError, match="no test sentence has 1000 source words or more"):
        long_sentences(sources, 1000, 300)


def test_markdown_has_one_section_per_family():
    rows = judge(
        [
            row(paper="A"),
            row(paper="B", family="secondary", min_source_words=20, sentences=1512),
            row(paper="C"),
        ]
    )
    md = findings_markdown(rows, "Findings")
    primary = md.index("## Primary comparisons (pre-registered): Holm over its 2 rows")
    secondary = md.index("## Secondary analyses: Holm over its 1 row")
    assert primary < md.index("| A |") < md.index("| C |") < secondary < md.index("| B |")
    assert md.count("| paper | pair / test set |") == 2
    assert "| ja-en / test (source ≥ 20 words: 1,512 sentences) |" in md
    assert "Holm–Bonferroni within each family" in md and "source ≥ N words" in md
    # one family: one table, as before, and the footnote says which
    single = findings_markdown(judge([row()]), "Findings")
    assert "##" not in single and "(one family: primary)" in single
    assert "source ≥ N words" not in single


def test_findings_cli_with_families_and_a_length_subset(tmp_path, capsys, refs, sources):
    paths = {"ref": refs, "src": sources}
    for i, share in enumerate((0.05, 0.07, 0.06, 0.05), 1):
        paths[f"s{i}"] = damaged(refs, share, i)
        paths[f"b{i}"] = damaged(refs, share + 0.2, i + 4)
    for name, lines in list(paths.items()):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    claim = {
        "paper": "Kawara 2021",
        "pair": "en-de",
        "testset": "test2016",
        "system": "rel_btg",
        "baseline": "transformer",
        "paper_delta": 1.34,
        "refs": [str(tmp_path / "ref")],
        "lang": "de",
        "system_hyps": [str(tmp_path / f"s{i}") for i in (1, 2, 3, 4)],
        "baseline_hyps": [str(tmp_path / f"b{i}") for i in (1, 2, 3, 4)],
    }
    long = {
        **claim,
        "family": "secondary",
        "min_source_words": 15,
        "source": str(tmp_path / "src"),
    }
    spec = {"title": "Findings", "claims": [claim, long, {**claim, "paper": "Chen 2019"}]}
    argv = ["findings", "--spec", json.dumps(spec), "--md", tmp_path / "f.md"]
    code, errors = run([*argv, "--json", tmp_path / "f.json", "--samples", "100"], capsys)
    assert code == 0, errors
    whole, subset, again = json.loads((tmp_path / "f.json").read_text())["findings"]
    keep = [i for i, s in enumerate(sources) if len(s.split()) >= 15]
    assert (whole["sentences"], subset["sentences"]) == (300, len(keep))
    assert subset["system_scores"] == pytest.approx(
        [bleu([paths[f"s{i}"][j] for j in keep], [refs[j] for j in keep]) for i in (1, 2, 3, 4)]
    )
    # 4 + 4 separated runs: Holm doubles the p among the two primary rows only
    assert whole["p"] == again["p"] and whole["test"] == subset["test"] == "Welch"
    assert whole["p_holm"] == again["p_holm"] == pytest.approx(2 * whole["p"])
    assert subset["p_holm"] == pytest.approx(subset["p"]) and subset["family"] == "secondary"
    assert whole["family"] == "primary" and whole["min_source_words"] is None
    md = (tmp_path / "f.md").read_text()
    assert md.index("## Primary") < md.index("## Secondary")
    assert f"| en-de / test2016 (source ≥ 15 words: {len(keep)} sentences) |" in md
