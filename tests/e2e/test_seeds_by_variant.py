"""seeds_by_variant in a real dry run: each variant trains exactly its own seeds (the others the
global ones), everything downstream follows them without asking for another training, and a
key that is not a variant of the config is refused before the first job, naming file and line.
Also the findings job of a length-subset claim reads the tokenized test source."""

from __future__ import annotations

import json
import re
import shlex

import pytest
from dag import snakemake, tiny_config

pytestmark = pytest.mark.slow

PER_VARIANT = "seeds_by_variant: {transformer_tiny: [1, 2, 3], rnn_tiny: [4]}\n"
SUBSET_CLAIM = (
    "    - {paper: Chen 2018, pair: en-de, testset: flickr2016, system: rnn_tiny_sdatt,\n"
    "       baseline: rnn_tiny, paper_delta: 1.65, family: secondary, min_source_words: 12}\n"
)


def _wildcards(plan: str, rule: str) -> set[tuple[str, int]]:
    """(variant, seed) of every job of ``rule`` a dry run plans."""
    jobs = re.findall(rf"^rule {rule}:\n(?:    .*\n)*?    wildcards: (.*)$", plan, flags=re.M)
    found = set()
    for line in jobs:
        w = dict(part.split("=", 1) for part in line.split(", "))
        found.add((w["variant"], int(w["seed"])))
    return found


def test_each_variant_trains_its_own_seeds(repo, shared_data, tmp_path):
    path = tiny_config(repo, shared_data, tmp_path)
    text = path.read_text(encoding="utf-8") + PER_VARIANT
    last = "       paper_delta: 1.65}\n"
    assert text.count(last) == 1
    path.write_text(text.replace(last, last + SUBSET_CLAIM), encoding="utf-8")
    run = snakemake(repo, "-n", "-p", "--configfile", str(path), timeout=300)
    plan = run.stdout + run.stderr
    assert run.returncode == 0, plan[-3000:]
    expected = {
        ("transformer_tiny", 1),
        ("transformer_tiny", 2),
        ("transformer_tiny", 3),
        ("rnn_tiny", 4),
        ("rnn_tiny_sdatt", 1),
        ("transformer_tiny_composed", 1),
        ("transformer_tiny_preordered", 1),
    }
    assert _wildcards(plan, "train") == expected
    assert len(re.findall(r"^rule train:$", plan, flags=re.M)) == len(expected)
    # every run is translated (the baseline has no seed 4, and no training of one is planned);
    # no per-run significance job: the tables' markers test the runs as they are
    assert {v for v, _ in _wildcards(plan, "translate")} == {v for v, _ in expected}
    assert "rule significance:" not in plan and "wordorder significance" not in plan
    models = tmp_path / "results" / "tiny" / "translations" / "en-de"
    # the findings: each variant's own runs, and the subset claim with its tokenized source
    command = next(line for line in plan.splitlines() if "wordorder findings --spec" in line)
    words = shlex.split(command)
    spec = json.loads(words[words.index("--spec") + 1])
    by_system = {(c["system"], c.get("family")): c for c in spec["claims"]}
    composed = by_system[("transformer_tiny_composed", None)]
    assert composed["baseline_hyps"] == [
        str(models / "transformer_tiny" / f"seed{s}" / "flickr2016.hyp") for s in (1, 2, 3)
    ]
    assert by_system[("rnn_tiny_sdatt", None)]["baseline_hyps"] == [
        str(models / "rnn_tiny" / "seed4" / "flickr2016.hyp")
    ]
    assert "source" not in composed
    subset = by_system[("rnn_tiny_sdatt", "secondary")]
    source = tmp_path / "results" / "tiny" / "data" / "en-de" / "flickr2016.tok.en"
    assert subset["min_source_words"] == 12 and subset["source"] == str(source)
    findings_job = re.search(r"^rule findings:\n    input: (.*)$", plan, flags=re.M)
    assert findings_job and str(source) in findings_job.group(1).split(", ")


def test_unknown_variant_is_refused_with_file_and_line(repo, shared_data, tmp_path):
    path = tiny_config(repo, shared_data, tmp_path)
    text = path.read_text(encoding="utf-8")
    line = len(text.splitlines()) + 3  # of the key nope
    path.write_text(text + "seeds_by_variant:\n  transformer_tiny: [1, 2]\n  nope: [3]\n")
    run = snakemake(repo, "-n", "--configfile", str(path), timeout=120)
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert (
        f"{path}:{line}: seeds_by_variant: 'nope' is not one of the variants of this config"
    ) in out, out[-3000:]
