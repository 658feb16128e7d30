"""The union of the five full-scale paper configs plans as one DAG (workflow/papers.smk), each
paper with its own options. How long that takes is measured in benchmarks/bench_dryrun.py."""

from __future__ import annotations

import re

import pytest
from dag import snakemake

pytestmark = pytest.mark.slow


def test_union_of_the_full_configs_plans_every_paper(repo):
    run = snakemake(repo, "-n", "-p", "-s", str(repo / "workflow" / "papers.smk"), timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    total = int(re.search(r"^total\s+(\d+)", out, flags=re.M).group(1))
    assert total > 2500  # 2,700 on 2026-11-30
    # Chen 2019's swap noise: one job per model and test set decodes its six noise levels
    swapped = [
        line for line in out.splitlines() if "/noise/" in line and "wordorder translate" in line
    ]
    assert swapped and all(
        len(re.search(r"--input (.*?) --lang", line).group(1).split()) == 6 for line in swapped
    )
    for paper in ("chen2018", "chen2019", "chen2020", "kawara2021", "zhang2018"):
        assert f"rule {paper}_train:" in out and f"results/{paper}_full/models/" in out
    # each module keeps its own config: the papers' beam sizes and model sizes
    beams: dict[str, set[str]] = {}
    for line in out.splitlines():
        if "wordorder translate " in line:
            paper = re.search(r"--checkpoint results/(\w+)_full/", line).group(1)
            beams.setdefault(paper, set()).add(re.search(r'"beam_size": (\d+)', line).group(1))
    assert beams == {
        "chen2018": {"12"},
        "chen2019": {"4"},
        "chen2020": {"4"},
        "kawara2021": {"5"},
        "zhang2018": {"10"},
    }
    assert (
        '"preset": "rnnsearch"' in out and '"preset": "rnmt"' in out and '"preset": "base"' in out
    )
    # a registry entry's per-pair options reach that pair's training only (Zhang
    # 2018's relation layers)
    rnmt = {}
    for line in out.splitlines():
        m = re.search(r"--output results/zhang2018_full/models/([a-z-]+)/zhang2018_rnmt/", line)
        if "wordorder train " in line and m:
            rnmt[m.group(1)] = re.search(
                r'"relation_convs": (\[\[[^"]*\]\]), "relation_layers"', line
            ).group(1)
    assert rnmt == {"en-de": "[[3, 96]]", "zh-en": "[[1, 128], [3, 256]]"}
    # NIST zh-en is scored on its four references and case-insensitively (Chen 2018, Zhang 2018);
    # Zhang 2018's WMT17 experiment (Table 2: newstest2015-2017) case-insensitively too (§5.1:
    # only the WMT16 dataset's comparison, Table 3, not configured, is cased); Chen 2018 en-de
    # case-insensitively, Chen 2019 cased
    scores = {}
    for line in out.splitlines():
        m = re.search(
            r"wordorder score .*--output results/(\w+)_full/scores/([a-z-]+)/\w+/seed1/(\w+)\.json",
            line,
        )
        if m:
            scores[m.groups()] = (line.count("--extra-ref "), "--lowercase" in line)
    assert scores[("zhang2018", "zh-en", "mt03")] == (3, True)
    assert scores[("chen2018", "zh-en", "mt05")] == (3, True)
    assert scores[("zhang2018", "en-de", "newstest2016")] == (0, True)
    assert scores[("chen2018", "en-de", "newstest2014")] == (0, True)
    assert scores[("chen2019", "en-de", "newstest2014")] == (0, False)
    # Kawara 2021: the eight directions train, and the preordered positions are
    # words (preorder.positions)
    kawara_pairs = set(re.findall(r"--output results/kawara2021_full/models/([a-z-]+)/", out))
    assert kawara_pairs == {"ja-en", "en-ja", "en-de", "de-en", "en-cs", "cs-en", "en-ru", "ru-en"}
    units = {
        re.search(r"--unit (\w+)", line).group(1)
        for line in out.splitlines()
        if "wordorder preorder-project " in line and "results/kawara2021_full/" in line
    }
    assert units == {"word"}


def test_kawara_table_one_sweep_plans(repo):
    """configs/full/kawara2021_clipping.yaml: eight systems (k = 1, 2, 4, 8) on
    en-ja, word positions."""
    run = snakemake(
        repo, "-n", "-p", "--configfile", "configs/full/kawara2021_clipping.yaml", timeout=300
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    trained = set(
        re.findall(r"--output results/kawara2021_clipping_full/models/en-ja/(\w+)/seed1/", out)
    )
    assert trained == {
        f"kawara2021_{s}{k}"
        for s in ("baseline", "relative_btg")
        for k in ("_k1", "_k2", "", "_k8")
    }
    assert "--unit word" in out and "aspec_dev.hyp" in out
