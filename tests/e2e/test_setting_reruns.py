"""Issue 49, case 1 and its guard: every evaluation, decode and train setting reruns the jobs
whose outputs depend on it, and no others.

Snakemake reruns a finished job when its recorded params change, and it records only params
not computed from the job's input: ``evaluation.case_insensitive`` and ``bleu_brevity`` reached
the score step inside the argument list of its further references, so changing them after a
complete run rebuilt nothing and the scores kept the old rule. This test changes each key of the
schema's three sections on the tiny config, builds the DAG in-process (``tests/helpers/plans.py``:
the params Snakemake records, the inputs, the new jobs) and compares the rules it would plan
with ``workflow/schemas/reruns.yaml``, which names them for every key."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from dag import tiny_config

REPO = Path(__file__).resolve().parents[2]
SECTIONS = ("evaluation", "decode", "train")


def schema_keys() -> dict[str, dict]:
    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text("utf-8"))
    return {
        f"{section}.{key}": spec
        for section in SECTIONS
        for key, spec in schema["properties"][section]["properties"].items()
    }


def declared() -> dict[str, list[str]]:
    return yaml.safe_load((REPO / "workflow/schemas/reruns.yaml").read_text("utf-8"))


def another_value(spec: dict, current):
    """A schema-valid value other than ``current`` for a scalar setting."""
    kinds = spec.get("type", [])
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "enum" in spec:
        return next(v for v in spec["enum"] if v != current)
    if "boolean" in kinds:
        return not current
    if "integer" in kinds:
        return (current or spec.get("minimum", 1)) + 1
    if "number" in kinds:
        return (current or 1.0) / 2
    raise AssertionError(f"no rule for a value of {spec}: list it in CHANGES")


def test_every_setting_is_declared():
    assert sorted(declared()) == sorted(schema_keys())


@pytest.fixture(scope="module")
def walked(shared_data, tmp_path_factory) -> dict[str, list[str]]:
    from wordorder.config import load_config

    tmp = tmp_path_factory.mktemp("reruns")
    config = tiny_config(REPO, shared_data, tmp)
    current = load_config(config)
    text = config.read_text(encoding="utf-8")
    base = yaml.safe_load(text)
    readme = tmp / "gold" / "README2.md"
    readme.write_text((tmp / "gold" / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    page = tmp / "gold" / "page.md"
    page.write_text((tmp / "gold" / "README.md").read_text(encoding="utf-8"), encoding="utf-8")
    # settings whose values are not scalars, or which only count beside another setting
    explicit = {
        "evaluation.baseline": {"value": "rnn_tiny"},
        "evaluation.swap_noise": {"value": {"percents": [0, 25], "testsets": ["held"]}},
        "evaluation.findings": {"value": base["evaluation"]["findings"][:1]},
        "evaluation.readme": {"value": str(readme)},
        "evaluation.readme_page": {"value": str(page)},
        "evaluation.case_insensitive": {"value": ["en-de"]},
        "evaluation.length_bins": {"value": [5, 15]},
        "evaluation.significance": {"value": {"samples": 200}},
        "decode.device": {"value": "cpu"},
        "train.device": {"value": "cpu"},
        "train.betas": {"value": [0.8, 0.99]},
        **{
            f"train.{key}": {"value": value, "base": {"train.schedule": "step_decay"}}
            for key, value in (("decay_start", 7), ("decay_every", 3), ("decay_factor", 0.7))
        },
    }
    changes = []
    for key, spec in schema_keys().items():
        section, name = key.split(".")
        change = explicit.get(key) or {"value": another_value(spec, current[section].get(name))}
        changes.append({"key": key, **change})
    spec_file = tmp / "walk.json"
    spec_file.write_text(json.dumps({"config": str(config), "changes": changes}), "utf-8")
    done = subprocess.run(
        [sys.executable, str(REPO / "tests/helpers/plans.py"), str(spec_file)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("key", sorted(declared()))
def test_a_changed_setting_reruns_the_jobs_that_depend_on_it(walked, key):
    print(f"{key}: reruns {', '.join(walked[key]) or 'nothing'}")
    assert walked[key] == sorted(declared()[key]), key
