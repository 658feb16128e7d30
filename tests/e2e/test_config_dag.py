"""Silent wrong configuration is refused when Snakemake builds the DAG (a dry run), naming the
config file, line and key: Snakemake's own YAML loader would keep the last of two equal keys,
and a repeated seed would fail only at the report. The same cases through `wordorder
check-config` are in tests/unit/test_bad_inputs.py. And the plan of preorder cross-fitting."""

from __future__ import annotations

import re

import pytest
from dag import snakemake, tiny_config

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    "case, old, new, must",
    [
        (
            "test set defined twice",
            "      held: {holdout: 30}\n",
            "      held: {holdout: 30}\n      held: {holdout: 20}\n",
            "duplicate key 'held' in data.en-de.test (first at line {first})",
        ),
        ("seeds: [1, 1]", "seeds: [1]", "seeds: [1, 1]", "seeds: 1 is listed twice"),
        (
            "variant listed twice",
            "variants: [transformer_tiny,",
            "variants: [transformer_tiny, transformer_tiny,",
            "variants: 'transformer_tiny' is listed twice",
        ),
    ],
)
def test_dry_run_refuses_with_file_line_and_key(case, old, new, must, repo, shared_data, tmp_path):
    path = tiny_config(repo, shared_data, tmp_path)
    text = path.read_text(encoding="utf-8")
    assert old in text
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines, 1) if line.startswith(old.rstrip("\n")))
    line = first + 1 if case == "test set defined twice" else first
    path.write_text(text.replace(old, new), encoding="utf-8")
    run = snakemake(repo, "-n", "--configfile", str(path), timeout=120)
    out = run.stdout + run.stderr
    assert run.returncode != 0
    assert f"{path}:{line}: {must.format(first=first)}" in out, out[-3000:]


def _jobs(out: str) -> set[tuple[str, str]]:
    """(rule, output) of every job a dry run plans."""
    blocks = re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    output: (.*)$", out, flags=re.M)
    return set(blocks)


def _btg_apply_models(out: str) -> dict[str, list[str]]:
    """{split: the --model arguments} of every btg-apply command."""
    found = {}
    for line in out.splitlines():
        m = re.search(r"btg-apply --model (.*?) --tok .* --output \S+/btg/(\w+)\.perm", line)
        if m:
            found[m.group(2)] = m.group(1).split()
    return found


def test_cross_fit_adds_fold_models_for_the_training_split_only(repo, shared_data, tmp_path):
    """preorder.btg.cross_fit 3 and rvnn.cross_fit 2: the train preorders take the fold models
    (fold0..K-1, in order), dev and the test sets the full model; K = 1 (the tiny config's)
    plans exactly the jobs and commands of before (no fold model, the options without
    cross_fit); the defaults cross-fit BTG in 5 folds and not RvNN (issue 49, case 6)."""
    path = tiny_config(repo, shared_data, tmp_path)
    default = snakemake(repo, "-n", "-p", "--configfile", str(path), timeout=180)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("hash_bits: 16, cross_fit: 1}", "hash_bits: 16}"), "utf-8")
    unset = snakemake(repo, "-n", "-p", "--configfile", str(path), timeout=180)
    assert unset.returncode == 0, (unset.stdout + unset.stderr)[-3000:]
    unset_folds = {job for job in _jobs(unset.stdout + unset.stderr) if "_train_fold" in job[0]}
    assert sorted(rule for rule, _ in unset_folds) == ["btg_train_fold"] * 5
    for old, new in [
        ("hash_bits: 16, cross_fit: 1}", "hash_bits: 16, cross_fit: 3}"),
        ("hidden: 16}", "hidden: 16, cross_fit: 2}"),
    ]:
        assert old in text
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    crossed = snakemake(repo, "-n", "-p", "--configfile", str(path), timeout=180)
    for run in (default, crossed):
        assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    plan, crossed_plan = default.stdout + default.stderr, crossed.stdout + crossed.stderr
    assert "--fold" not in plan and "_train_fold" not in plan and '"cross_fit"' not in plan
    btg = tmp_path / "results" / "tiny" / "preorder" / "en-de" / "btg"
    models = _btg_apply_models(crossed_plan)
    assert models["train"] == [str(btg / f"fold{k}" / "model.npz") for k in range(3)]
    assert set(models) == {"train", "dev", "held", "flickr2016"}
    assert all(models[s] == [str(btg / "model.npz")] for s in ("dev", "held", "flickr2016"))
    assert _btg_apply_models(plan) == {s: [str(btg / "model.npz")] for s in models}
    rvnn_train = re.search(r"wordorder rvnn-apply --model (.*?) --tok .*/train\.perm", crossed_plan)
    assert rvnn_train and rvnn_train.group(1).split() == [
        str(btg.parent / "rvnn" / f"fold{k}" / "model.pt") for k in range(2)
    ]
    assert len(_jobs(plan)) > 100  # every job of the plan was read
    folds = {job for job in _jobs(crossed_plan) if job[0].endswith("_train_fold")}
    assert {rule for rule, _ in folds} == {"btg_train_fold", "rvnn_train_fold"} and len(folds) == 5
    assert _jobs(crossed_plan) - folds == _jobs(plan)
    assert "--fold 2 --folds 3" in crossed_plan and "--fold 1 --folds 2" in crossed_plan
    assert '"cross_fit"' not in crossed_plan  # not a training option: K = 1 outputs stay valid
