"""Findings: the seed-paired bootstrap is sacreBLEU's paired bootstrap for one seed, and the
verdicts follow the paper's sign and p < 0.05; the CLI writes the table. Real sentences: the
Multi30k test2016 German references, with systems made by deleting words."""

from __future__ import annotations

import gzip
import json
import random

import pytest
from sacrebleu.metrics import BLEU
from sacrebleu.significance import PairedTest
from test_bad_inputs import run

from wordorder.evaluate.findings import findings_markdown, seed_paired_bootstrap, verdict


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


def test_one_seed_equals_sacrebleus_paired_bootstrap(refs):
    system, baseline = damaged(refs, 0.10, 1), damaged(refs, 0.13, 2)
    ours = seed_paired_bootstrap([system], [baseline], [refs], samples=200, seed=12345)
    test = PairedTest(
        [("baseline", baseline), ("system", system)],
        {"BLEU": BLEU()},
        [refs],
        test_type="bs",
        n_samples=200,
    )
    import os

    os.environ["SACREBLEU_SEED"] = "12345"
    _, results = test()
    assert ours["p"] == results["BLEU"][1].p_value
    assert ours["delta"] == pytest.approx(
        BLEU().corpus_score(system, [refs]).score - BLEU().corpus_score(baseline, [refs]).score,
        abs=1e-4,
    )
    assert ours["sd"] == 0.0 and len(ours["per_seed"]) == 1


def test_several_seeds_mean_sd_and_symmetry(refs):
    system = [damaged(refs, 0.05, s) for s in (1, 2, 3)]
    baseline = [damaged(refs, 0.30, s) for s in (4, 5, 6)]
    out = seed_paired_bootstrap(system, baseline, [refs], samples=100)
    per_seed = [
        BLEU().corpus_score(s, [refs]).score - BLEU().corpus_score(b, [refs]).score
        for s, b in zip(system, baseline)
    ]
    assert out["per_seed"] == pytest.approx(per_seed, abs=1e-4)
    assert out["delta"] == pytest.approx(sum(per_seed) / 3, abs=1e-4) and out["sd"] > 0
    assert out["p"] < 0.05  # a quarter of the words fewer is far beyond sampling noise
    back = seed_paired_bootstrap(baseline, system, [refs], samples=100)
    assert back["p"] == out["p"] and back["delta"] == pytest.approx(-out["delta"])
    # the same outputs cannot differ: p is the largest possible
    assert seed_paired_bootstrap(system, system, [refs], samples=100)["p"] == 1.0
    # different outputs with no overlap at all score BLEU 0 in every draw: no difference, p = 1
    nothing = [["xyzzy"] * len(refs)], [["plugh"] * len(refs)]
    assert seed_paired_bootstrap(*nothing, [refs], samples=50) == {
        "delta": 0.0,
        "sd": 0.0,
        "per_seed": [0.0],
        "p": 1.0,
        "samples": 50,
    }


def test_verdicts():
    assert verdict(+1.3, +0.8, 0.01) == "reproduced"
    assert verdict(+1.3, -0.8, 0.01) == "opposite"
    assert verdict(-1.8, -0.2, 0.30) == "not significant"
    assert verdict(+1.3, +0.8, 0.05) == "not significant"  # p < 0.05, strictly


def test_markdown_row():
    md = findings_markdown(
        [
            {
                "paper": "Kawara 2021",
                "pair": "ja-en",
                "testset": "test",
                "system": "rel_btg",
                "baseline": "base",
                "paper_delta": 1.34,
                "delta": 0.512,
                "sd": 0.2,
                "seeds": 3,
                "p": 0.0123,
                "verdict": "reproduced",
                "samples": 1000,
            }
        ],
        "Findings",
    )
    assert (
        "| Kawara 2021 | ja-en / test | rel_btg vs base | +1.34 | +0.51 ± 0.20 "
        "| 3 | 0.012 | reproduced |"
    ) in md


def test_findings_cli(tmp_path, capsys, refs):
    paths = {}
    for name, lines in (
        ("ref", refs),
        ("s1", damaged(refs, 0.05, 1)),
        ("b1", damaged(refs, 0.3, 2)),
    ):
        paths[name] = str(tmp_path / name)
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = {
        "title": "Findings",
        "claims": [
            {
                "paper": "Chen 2019",
                "pair": "en-de",
                "testset": "test2016",
                "system": "both_res",
                "baseline": "transformer",
                "paper_delta": 0.98,
                "system_hyps": [paths["s1"]],
                "baseline_hyps": [paths["b1"]],
                "refs": [paths["ref"]],
                "lang": "de",
            }
        ],
    }
    code, errors = run(
        [
            "findings",
            "--spec",
            json.dumps(spec),
            "--md",
            tmp_path / "f.md",
            "--json",
            tmp_path / "f.json",
            "--samples",
            "100",
        ],
        capsys,
    )
    assert code == 0, errors
    row = json.loads((tmp_path / "f.json").read_text())["findings"][0]
    assert row["verdict"] == "reproduced" and row["seeds"] == 1 and row["delta"] > 5
    assert (
        "| Chen 2019 | en-de / test2016 | both_res vs transformer | +0.98 |"
        in (tmp_path / "f.md").read_text()
    )


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
