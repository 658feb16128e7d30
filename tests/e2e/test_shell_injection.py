"""Shell commands planted in config values run nothing: the real Snakemake DAG, with
``$(touch MARK)`` and a backtick variant in every path of a tiny config, reaches the rules that
interpolate those paths (fetch, tokenize, split, select, align with a gold set, subword,
train, attention AER) and writes its outputs under the odd names; names that cannot hold such
text are refused when the DAG is built, naming the key."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from dag import snakemake, write_gold

pytestmark = pytest.mark.slow


def planted(tmp_path, key: str) -> str:
    """A path component that runs two commands if a shell ever reads it unquoted (the slashes
    inside only make it a few nested folders)."""
    return f"{key} $(touch {tmp_path}/MARK_{key}) `touch {tmp_path}/MARK_{key}_bt`"


def marks(tmp_path) -> list[str]:
    return sorted(p.name for p in tmp_path.glob("MARK_*"))


def small_config(repo, shared_data, tmp_path) -> dict:
    corpus = tmp_path / planted(tmp_path, "corpus")
    corpus.mkdir(parents=True)
    for lang in ("en", "de"):
        shutil.copy(
            shared_data / "multi30k_task1_en-de-cs" / f"train.{lang}.gz",
            corpus / f"train.{lang}.gz",
        )
    gold = tmp_path / planted(tmp_path, "gold")
    write_gold(shared_data, gold)
    registry = tmp_path / planted(tmp_path, "registry") / "variants.yaml"
    registry.parent.mkdir(parents=True)
    shutil.copy(repo / "configs" / "variants.yaml", registry)
    return {
        "experiment": "inject",
        "results": str(tmp_path / planted(tmp_path, "results")),
        "logs": str(tmp_path / planted(tmp_path, "logs")),
        "variants_file": str(registry),
        "pairs": ["en-de"],
        "variants": ["transformer_tiny"],
        "data": {
            "en-de": {
                "train": {
                    "kind": "local",
                    "src": f"{corpus}/train.{{src}}.gz",
                    "tgt": f"{corpus}/train.{{tgt}}.gz",
                    "max_lines": 200,
                },
                "dev": {"holdout": 20},
                "test": {"held": {"holdout": 10}},
                "align_gold": {
                    "pairs": str(gold / "gold.src-tgt"),
                    "links": str(gold / "gold.links"),
                },
            }
        },
        "subword": {"vocab_size": 200},
        "align": {"n_samplers": 1, "length": 0.2},
        "train": {
            "batch_tokens": 500,
            "max_steps": 2,
            "eval_every": 2,
            "eval_sentences": 4,
            "log_every": 1,
            "warmup": 1,
        },
        "decode": {"beam_size": 1},
        "threads": {"train": 1, "translate": 1, "align": 1},
    }


def test_planted_commands_in_paths_run_nothing(repo, shared_data, tmp_path):
    cfg = small_config(repo, shared_data, tmp_path)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    out = f"{cfg['results']}/inject"
    targets = [f"{out}/data/en-de/align/stats.json", f"{out}/aer/en-de/transformer_tiny/seed1.json"]
    run = snakemake(repo, *targets, "--cores", "2", "--configfile", str(config), timeout=300)
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    assert marks(tmp_path) == []
    stats = json.loads(Path(targets[0]).read_text(encoding="utf-8"))
    # the gold set was read from its planted path
    assert list(stats["splits"]) == ["train", "dev", "held"]
    assert 0.0 <= json.loads(Path(targets[1]).read_text(encoding="utf-8"))["aer"] <= 1.0
    assert Path(f"{cfg['logs']}/inject/align/en-de.log").is_file()


@pytest.mark.parametrize(
    "key, value, must",
    [
        ("experiment", "x$(touch {tmp}/MARK_experiment)", "'experiment'"),
        ("experiment", "x`touch {tmp}/MARK_experiment_bt`", "'experiment'"),
        ("experiment", "..", "'experiment'"),
        ("experiment", "nl\n", "'experiment'"),
        ("variants", ["$(touch {tmp}/MARK_variant)"], "'variants.0'"),
        ("results", "r\n$(touch {tmp}/MARK_results_nl)", "'results'"),
    ],
)
def test_names_with_shell_text_are_refused_when_the_dag_is_built(
    key, value, must, repo, shared_data, tmp_path
):
    cfg = small_config(repo, shared_data, tmp_path)
    cfg[key] = (
        [v.format(tmp=tmp_path) for v in value]
        if isinstance(value, list)
        else value.format(tmp=tmp_path)
    )
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    run = snakemake(repo, "-n", "--configfile", str(config), timeout=120)
    output = run.stdout + run.stderr  # snakemake prints workflow errors on stdout
    assert run.returncode != 0
    assert f"invalid config at {must}" in output and "is refused" in output, output[-2000:]
    assert marks(tmp_path) == []
