"""Issue 49, cases 7 and 12: settings that contradict each other are refused when the config is
validated (``wordorder check-config``, and every DAG build through the same function), naming
the keys, instead of being ignored (step-decay options under another schedule trained weights
bitwise equal to a run without them) or refused after preprocessing or training."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from cli_checks import check, check_config

REPO = Path(__file__).resolve().parents[2]


def load(name: str = "default") -> dict:
    return yaml.safe_load((REPO / "configs" / f"{name}.yaml").read_text(encoding="utf-8"))


def check_changed(tmp_path: Path, capsys, changes: dict) -> tuple[int, list[str]]:
    """check-config on the demo config with ``changes`` ({"train.lr": 0.5, ...}) applied."""
    config = load()
    for dotted, value in changes.items():
        *parents, key = dotted.split(".")
        node = config
        for name in parents:
            node = node.setdefault(name, {})
        node[key] = value
    return check_config(tmp_path, capsys, config)


def readme(tmp_path: Path, text: str) -> str:
    path = tmp_path / "README.md"
    path.write_text(text, encoding="utf-8")
    return str(path)


CASES = [
    (
        "decay_start without step_decay",
        {"train.decay_start": 5000},
        "train.decay_start is set, but train.schedule is inverse_sqrt: only step_decay reads it",
    ),
    (
        "decay_factor under noam",
        {"train.schedule": "noam", "train.decay_factor": 0.5},
        "train.decay_factor is set, but train.schedule is noam",
    ),
    (
        "train.cuda_graphs on a CPU",
        {"train.cuda_graphs": True, "train.device": "cpu"},
        "train.cuda_graphs: true needs a CUDA device, but train.device is cpu",
    ),
    (
        "decode.cuda_graphs on a CPU",
        {"decode.cuda_graphs": True, "decode.device": "cpu"},
        "decode.cuda_graphs: true needs a CUDA device, but decode.device is cpu",
    ),
    (
        "stack_parameters with two processes",
        {"train.stack_parameters": True, "train_processes": 2, "train.accum_steps": 2},
        "train.stack_parameters: true needs one process's eager updates, but train_processes is 2",
    ),
    (
        "stack_parameters with compile",
        {"train.stack_parameters": True, "train.compile": True},
        "but train.compile compiles the per-parameter update",
    ),
    (
        "unsorted length_bins",
        {"evaluation.length_bins": [10, 30, 20]},
        "evaluation.length_bins must rise, got [10, 30, 20]",
    ),
    (
        "a README without the markers",
        {"evaluation.readme": "{README}"},
        "evaluation.readme: {README}: the marker line '<!-- wordorder:demo:begin -->' appears "
        "0 times",
    ),
    (
        "a README that does not exist",
        {"evaluation.readme": "{MISSING}"},
        "evaluation.readme names {MISSING}, which is not a file",
    ),
]


@pytest.mark.parametrize("case, changes, must", CASES, ids=[c[0] for c in CASES])
def test_refused_when_the_config_is_validated(case, changes, must, tmp_path, capsys):
    names = {"{README}": readme(tmp_path, "# A README\n"), "{MISSING}": str(tmp_path / "no.md")}
    for name, value in names.items():
        changes = {k: value if v == name else v for k, v in changes.items()}
        must = must.replace(name, value)
    code, errors = check_changed(tmp_path, capsys, changes)
    check(case, code, errors, must)


def test_consistent_settings_pass(tmp_path, capsys):
    text = "# A README\n<!-- wordorder:demo:begin -->\n<!-- wordorder:demo:end -->\n"
    changes = {
        "train.schedule": "step_decay",
        "train.decay_start": 5000,
        "train.stack_parameters": True,
        "train.cuda_graphs": "auto",
        "decode.cuda_graphs": True,
        "decode.device": "cuda",
        "evaluation.length_bins": [5, 10, 40],
        "evaluation.readme": readme(tmp_path, text),
    }
    assert check_changed(tmp_path, capsys, changes) == (0, [])


@pytest.mark.parametrize("split", ["dev", "test.held"])
def test_a_holdout_with_a_source_of_its_own(split, tmp_path, capsys):
    """Issue 49, case 4: ``dev: {holdout: 20, kind: local, src, tgt}`` passed check-config; the
    run drew dev from train and never read the given files."""
    config = load()
    pair = config["pairs"][0]
    spec = {"holdout": 20, "kind": "local", "src": "dev.src", "tgt": "dev.tgt"}
    if split == "dev":
        config["data"][pair]["dev"] = spec
    else:
        config["data"][pair]["test"]["held"] = spec
    code, errors = check_config(tmp_path, capsys, config)
    check(
        "a holdout with a source of its own",
        code,
        errors,
        f"data.{pair}.{split}: holdout draws the set from the training corpus, so kind, src, tgt "
        "would be ignored",
    )


def test_a_claim_of_a_system_against_itself(tmp_path, capsys):
    """Issue 49, case 7: such a claim got a verdict."""
    config = load("effects_long")
    claim = config["evaluation"]["findings"][0]
    claim["baseline"] = claim["system"]
    code, errors = check_config(tmp_path, capsys, config)
    check(
        "a findings claim of a system against itself",
        code,
        errors,
        "evaluation.findings[0] compares kawara2021_relative_btg with itself",
    )


@pytest.mark.parametrize("option", ["--baseline-runs", "--runs"])
def test_power_with_zero_runs(option, capsys):
    """Issue 49, case 7: ``power --baseline-runs 0`` was read as "the same as --runs"."""
    from wordorder.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["power", "--sd", "0.8", "--delta", "1.34", "--runs", "8", option, "0"])
    assert exit_.value.code == 2
    assert f"argument {option}: expected 1 or more, got 0" in capsys.readouterr().err
