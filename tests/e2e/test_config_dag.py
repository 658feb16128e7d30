"""Silent wrong configuration is refused when Snakemake builds the DAG (a dry run), naming the
config file, line and key: Snakemake's own YAML loader would keep the last of two equal keys,
and a repeated seed would fail only at the report. The same cases through `wordorder
check-config` are in tests/unit/test_bad_inputs.py."""

from __future__ import annotations

import pytest
from test_pipeline import snakemake, tiny_config

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
