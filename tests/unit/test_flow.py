"""The workflow layer (src/wordorder/flow): the files each rule reads, the runs, targets and
findings of a config, on the pre-registered long-sentence experiment (configs/effects_long.yaml:
a baseline, relative BTG and gold systems, BTG cross-fitted over 5 folds, a ledger)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from wordorder.config import load_config
from wordorder.errors import WordorderError
from wordorder.flow import Experiment, fill, one_of, run_of

BASE, BTG, GOLD = "kawara2021_baseline", "kawara2021_relative_btg", "kawara2021_relative_gold"


@pytest.fixture
def experiment(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)  # variants_file and the config's relative paths
    overrides = {"results": str(tmp_path / "results"), "ledger": str(tmp_path / "ledger")}
    return Experiment(load_config("configs/effects_long.yaml", overrides))


def test_fill_names_some_wildcards_and_leaves_the_others(experiment):
    p = experiment.paths
    assert p.R.endswith("/results/effects_long")
    assert fill(p.PERM, method="gold") == f"{p.R}/preorder/{{pair}}/gold/{{split}}.perm"
    assert one_of(["ja-en", "a.b"]) == r"ja\-en|a\.b"


def test_runs_follow_seeds_by_variant(experiment):
    runs = experiment.runs()
    per_variant = {v: [r["seed"] for r in runs if r["variant"] == v] for v in (BASE, BTG, GOLD)}
    assert per_variant == {BASE: list(range(1, 9)), BTG: list(range(1, 9)), GOLD: [1, 2, 3]}
    assert experiment.baseline_variant() == BASE


def test_relative_btg_reads_the_btg_positions_and_the_baseline_none(experiment):
    r = experiment.paths.R
    btg = experiment.variant_features(run_of("ja-en", BTG), "dev")
    assert btg == {"order": f"{r}/preorder/ja-en/btg/dev.positions.ja"}
    assert experiment.variant_features(run_of("ja-en", GOLD), "train") == {
        "order": f"{r}/preorder/ja-en/gold/train.positions.ja"
    }
    assert experiment.variant_features(run_of("ja-en", BASE), "dev") == {}
    # the original subwords for every one of them (relative positions, not a reordered source)
    inputs = experiment.model_inputs(run_of("ja-en", BTG, 1))
    assert inputs["train_src"] == f"{r}/data/ja-en/train.bpe.ja"
    assert inputs["features"] == [
        f"{r}/preorder/ja-en/btg/train.positions.ja",
        f"{r}/preorder/ja-en/btg/dev.positions.ja",
    ]


def test_cross_fitting_preorders_the_training_split_with_the_fold_models(experiment):
    r = experiment.paths.R
    train = experiment.btg_apply_models(run_of("ja-en", BTG, split="train"))
    assert train == [f"{r}/preorder/ja-en/btg/fold{k}/model.npz" for k in range(5)]
    assert experiment.btg_apply_models(run_of("ja-en", BTG, split="dev")) == (
        f"{r}/preorder/ja-en/btg/model.npz"
    )


def test_the_training_split_is_parsed_in_shards_and_the_others_in_eval_shards(experiment):
    r = experiment.paths.R
    experiment.config["syntax"].update(shards=3, eval_shards=1)
    train = experiment.parse_shards(run_of("ja-en", BASE, split="train", lang="ja"))
    assert train["shards"] == [f"{r}/data/ja-en/parse/train.ja.{k}-of-3.conllu" for k in (1, 2, 3)]
    assert train["stats"] == [f"{s}.json" for s in train["shards"]]
    dev = experiment.parse_shards(run_of("ja-en", BASE, split="dev", lang="ja"))
    assert dev["shards"] == [f"{r}/data/ja-en/parse/dev.ja.1-of-1.conllu"]
    experiment.config["syntax"]["eval_shards"] = 2
    held = experiment.parse_shards(run_of("ja-en", BASE, split="held", lang="ja"))["shards"]
    assert held == [f"{r}/data/ja-en/parse/held.ja.{k}-of-2.conllu" for k in (1, 2)]


def test_a_ledgered_run_is_not_trained_again_and_not_recorded_again(experiment, tmp_path):
    record = tmp_path / "ledger" / "runs" / f"ja-en.{BASE}.seed1" / "record.json"
    record.parent.mkdir(parents=True)
    record.write_text("{}", encoding="utf-8")
    ex = Experiment(experiment.config)
    ledgered = ex.train_inputs(run_of("ja-en", BASE, 1))
    assert list(ledgered) == ["ledger_run"] and "no checkpoint" in ledgered["ledger_run"]
    assert ex.train_inputs(run_of("ja-en", BASE, 2)) == ex.model_inputs(run_of("ja-en", BASE, 2))
    marks = [t for t in ex.all_targets() if "/ledger/" in t]
    assert len(marks) == 8 + 8 + 3 - 1
    assert f"{ex.paths.R}/ledger/ja-en.{BASE}.seed1.json" not in marks
    assert ex.ledger_record(run_of("ja-en", BASE, 1)) == str(record)


def test_findings_spec_names_each_claims_runs_and_references(experiment):
    spec = json.loads(experiment.findings_spec())
    primary = next(c for c in spec["claims"] if c["system"] == BTG and c["baseline"] == BASE)
    r = experiment.paths.R
    assert primary["system_seeds"] == list(range(1, 9))
    assert primary["system_hyps"][0] == f"{r}/translations/ja-en/{BTG}/seed1/bible.hyp"
    assert primary["refs"] == [f"{r}/data/ja-en/bible.en"]
    files = experiment.findings_inputs()
    assert files == sorted(set(files)) and primary["system_hyps"][7] in files


def test_a_claim_this_run_cannot_judge_is_listed_with_its_reason(repo, tmp_path, monkeypatch):
    """Issue 49, case 7: a findings claim on a variant not in the run was dropped without a
    word (and with no claim left, so was the table)."""
    monkeypatch.chdir(repo)
    overrides = {"results": str(tmp_path / "results"), "variants": [BASE, BTG]}
    overrides["seeds_by_variant"] = {}  # it names the gold variant
    experiment = Experiment(load_config("configs/effects_long.yaml", overrides))
    spec = json.loads(experiment.findings_spec())
    assert len(spec["claims"]) == 3
    [gold] = spec["unjudged"]
    assert gold["reason"] == "variant kawara2021_relative_gold not in this run"
    alone = Experiment(load_config("configs/effects_long.yaml", {**overrides, "variants": [BASE]}))
    assert alone.findings_claims() == [] and len(alone.findings_unjudged()) == 4
    assert alone.paths.FINDINGS_MD in alone.all_targets()


def test_all_targets_are_the_tables_the_config_asks_for(experiment):
    p = experiment.paths
    targets = experiment.all_targets()
    assert {p.BLEU_MD, p.FINDINGS_MD, p.CONVERGENCE_MD, fill(p.PREORDER_MD, pair="ja-en")} <= set(
        targets
    )
    assert len(targets) == len(set(targets))


def test_one_job_writes_every_swap_noise_level(repo, tmp_path, monkeypatch):
    """The swap-noise rules' outputs: the template at each configured level, in the config's
    order; with the analysis off, level 0 alone (a rule needs an output; nothing asks for it)."""
    monkeypatch.chdir(repo)
    overrides = {"results": str(tmp_path / "results"), "ledger": str(tmp_path / "ledger")}
    off = Experiment(load_config("configs/effects_long.yaml", overrides))
    assert off.swap_percents() == [0]
    overrides["evaluation"] = {"swap_noise": {"percents": [30, 0, 10]}}
    on = Experiment(load_config("configs/effects_long.yaml", overrides))
    assert on.swap_percents() == [30, 0, 10]
    template = on.paths.SWAP_HYP
    assert on.swap_levels(template) == [
        f"{on.paths.R}/noise/{{pair}}/swap{p}/{{variant}}/seed{{seed}}/{{testset}}.hyp"
        for p in (30, 0, 10)
    ]
    with pytest.raises(WordorderError, match="evaluation.swap_noise.percents"):
        overrides["evaluation"] = {"swap_noise": {"percents": [10, 10]}}
        load_config("configs/effects_long.yaml", overrides)


def test_building_the_dag_imports_no_torch(repo):
    """Every command a user types builds the DAG: torch (seconds to import) stays out."""
    code = (
        "import sys\n"
        "from wordorder.config import load_config\n"
        "from wordorder.flow import Experiment, run_of\n"
        "ex = Experiment(load_config('configs/effects_long.yaml'))\n"
        "ex.all_targets(); ex.findings_spec()\n"
        "ex.model_json(run_of('ja-en', 'kawara2021_relative_btg'))\n"
        "ex.variant_features(run_of('ja-en', 'kawara2021_relative_btg'), 'train')\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))[:3])\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.strip() == "[]"


def test_the_torch_free_family_names_are_the_registry_families():
    from wordorder.models.presets import FAMILY_NAMES
    from wordorder.models.registry import FAMILIES

    assert sorted(FAMILY_NAMES) == sorted(FAMILIES)


def test_the_rule_files_hold_no_functions(repo):
    """The workflow's Python lives in the package, under mypy, ruff and these tests."""
    files = [repo / "Snakefile", repo / "workflow" / "papers.smk"]
    files += sorted((repo / "workflow" / "rules").glob("*.smk"))
    defs = [
        f"{f.name}:{i}"
        for f in files
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1)
        if line.lstrip().startswith("def ")
    ]
    assert len(files) > 10 and defs == []


def test_snakemake_reads_each_helpers_parameters_without_inspecting_it(experiment):
    from snakemake.common import FUNC_OVERWRITE_PARAMS_ATTR, get_function_params

    from wordorder.flow.experiment import SNAKEMAKE_PARAMS_ATTR

    assert SNAKEMAKE_PARAMS_ATTR == FUNC_OVERWRITE_PARAMS_ATTR
    assert list(get_function_params(experiment.train_inputs)) == ["w"]
    assert list(get_function_params(experiment.extra_ref_args)) == ["w", "input"]
    assert list(get_function_params(experiment.findings_spec)) == ["wildcards"]


def test_the_table_overlay_asks_only_for_runs_in_the_ledger(repo, monkeypatch):
    """configs/effects_long_table.yaml, read over effects_long.yaml as Snakemake merges two
    config files: the blocks' seeds of both systems and the gold control's three (every claim
    judged), the README and docs/findings.md as the section's targets, and every run it asks for in
    the repository's ledger, so that the table trains nothing on a fresh clone."""
    import yaml
    from snakemake.utils import update_config

    monkeypatch.chdir(repo)
    read = lambda name: yaml.safe_load((repo / "configs" / name).read_text("utf-8"))  # noqa: E731
    merged = read("effects_long.yaml")
    update_config(merged, read("effects_long_table.yaml"))
    experiment = Experiment(load_config("configs/effects_long.yaml", merged))
    runs = {(r["variant"], r["seed"]) for r in experiment.runs()}
    assert runs == {(v, s) for v in (BASE, BTG) for s in range(1, 9)} | {
        (GOLD, s) for s in (1, 2, 3)
    }
    assert json.loads(experiment.findings_spec())["unjudged"] == []
    assert experiment.config["evaluation"]["readme_page"] == "docs/findings.md"
    kept = {p.name for p in (repo / "ledger/effects_long/runs").iterdir()}
    assert {f"ja-en.{v}.seed{s}" for v, s in runs} <= kept
