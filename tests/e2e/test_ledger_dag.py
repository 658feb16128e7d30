"""The run ledger end to end, with the real DAG: a ledgered experiment trained on one "machine",
its ledger committed to a clone of the project, and the findings table rebuilt from that clone on
another checkout without any training; a tampered manifest refuses the next run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from dag import snakemake

pytestmark = pytest.mark.slow

CONFIG = """experiment: ledgered
pairs: [en-de]
variants: [transformer_tiny, transformer_tiny_relative]
seeds: [1, 2]
data:
  en-de:
    train:
      kind: local
      src: "{data}/multi30k_task1_en-de-cs/train.{{src}}.gz"
      tgt: "{data}/multi30k_task1_en-de-cs/train.{{tgt}}.gz"
      max_lines: 400
    dev: {{holdout: 40}}
    test:
      held: {{holdout: 30}}
clean: {{max_len: 40}}
syntax: {{parse: false}}
subword: {{vocab_size: 400}}
train: {{batch_tokens: 1000, lr: 0.001, warmup: 10, max_steps: {steps}, eval_every: 10,
         eval_sentences: 20, log_every: 5}}
decode: {{beam_size: 2}}
threads: {{train: 1, translate: 1}}
evaluation:
  cross_paper: true
  findings:
    - {{paper: Shaw 2018, pair: en-de, testset: held, system: transformer_tiny_relative,
       baseline: transformer_tiny, paper_delta: 0.5, what: relative positions}}
results: {home}/results
logs: {home}/logs
ledger: {ledger}
"""


def write_config(path: Path, data: Path, home: Path, ledger: Path, steps: int = 20) -> Path:
    path.write_text(
        CONFIG.format(data=data, home=home, ledger=ledger, steps=steps), encoding="utf-8"
    )
    return path


def git(cwd: Path, *args: str) -> str:
    env_args = ["-c", "user.name=test", "-c", "user.email=test@localhost"]
    out = subprocess.run(["git", *env_args, *args], cwd=cwd, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def findings_rows(home: Path) -> list[dict]:
    table = json.loads((home / "results/ledgered/tables/findings.json").read_text("utf-8"))
    return table["findings"]


def test_a_ledger_rebuilds_the_findings_on_another_checkout_without_training(
    repo, shared_data, tmp_path
):
    # Machine 1: train and decode every run; each is recorded in the project clone's ledger.
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q")
    ledger1 = project / "ledger" / "ledgered"
    config1 = write_config(tmp_path / "one.yaml", shared_data, tmp_path / "one", ledger1)
    run = snakemake(repo, "--cores", "2", "--configfile", str(config1))
    assert run.returncode == 0, run.stderr[-4000:]
    names = sorted(p.name for p in (ledger1 / "runs").iterdir())
    assert names == [
        f"en-de.{v}.seed{s}"
        for v in ("transformer_tiny", "transformer_tiny_relative")
        for s in (1, 2)
    ]
    size = sum(f.stat().st_size for f in ledger1.rglob("*") if f.is_file())
    assert size < 400_000 * len(names)  # no checkpoint: a few hundred KB a run at most
    git(project, "add", "ledger")
    git(project, "commit", "-q", "-m", "ledger: four runs")

    # Machine 2: a fresh clone; the findings table comes from the ledger alone.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    ledger2 = clone / "ledger" / "ledgered"
    config2 = write_config(tmp_path / "two.yaml", shared_data, tmp_path / "two", ledger2)
    target = str(tmp_path / "two/results/ledgered/tables/findings.md")
    plan = snakemake(repo, "-n", target, "--quiet", "rules", "--configfile", str(config2))
    assert plan.returncode == 0, plan.stderr[-4000:]
    planned = plan.stdout + plan.stderr
    assert "ledger_translation" in planned  # the findings need translations, not metrics
    assert "train " not in planned and "translate " not in planned, planned
    run = snakemake(repo, "--cores", "2", target, "--configfile", str(config2))
    assert run.returncode == 0, run.stderr[-4000:]
    assert not list((tmp_path / "two").rglob("*.pt"))  # nothing was trained
    assert findings_rows(tmp_path / "two") == findings_rows(tmp_path / "one")
    one, two = (tmp_path / x / "results/ledgered/translations" for x in ("one", "two"))
    hyps = sorted(p.relative_to(one) for p in one.rglob("*.hyp*"))
    assert len(hyps) == 8 and hyps == sorted(p.relative_to(two) for p in two.rglob("*.hyp*"))
    assert all((one / h).read_bytes() == (two / h).read_bytes() for h in hyps)
    assert git(clone, "status", "--porcelain") == ""  # restoring changed nothing in the ledger

    # A ledger run's checkpoint is not kept: asking for it is an error that says so, no training.
    model = str(tmp_path / "two/results/ledgered/models/en-de/transformer_tiny/seed1/best.pt")
    plan = snakemake(repo, "-n", model, "--configfile", str(config2))
    assert plan.returncode != 0
    assert "no checkpoint - a ledger run is never trained again" in plan.stdout + plan.stderr

    # A changed setting: the ledger's runs are refused, never retrained under the new one.
    config3 = write_config(tmp_path / "three.yaml", shared_data, tmp_path / "three", ledger2, 25)
    run = snakemake(
        repo, "--cores", "2", target.replace("two", "three"), "--configfile", str(config3)
    )
    assert run.returncode != 0 and not list((tmp_path / "three").rglob("*.pt"))
    logs = "".join(p.read_text("utf-8") for p in (tmp_path / "three/logs").rglob("*.log"))
    assert "train.max_steps: 20 -> 25" in logs

    # A tampered manifest: an input the ledger keeps is refused when it is restored, before any
    # training; one it does not keep (spm.model: subword_train makes it beside the vocabulary,
    # so it is rebuilt) is refused when the next run (seed 3) is recorded.
    manifest = ledger2 / "manifest.json"
    original = manifest.read_text("utf-8")
    text = config2.read_text("utf-8").replace("seeds: [1, 2]", "seeds: [1, 2, 3]")
    config2.write_text(text, encoding="utf-8")
    mark = tmp_path / "two/results/ledgered/ledger/en-de.transformer_tiny.seed3.json"
    logs = tmp_path / "two/logs/ledgered/ledger"
    for key, where, message in (
        ("train.bpe.en", "input/data/en-de/train.bpe.en.log", "differs from its digest"),
        ("spm.model", "add/en-de.transformer_tiny.seed3.log", "differs from the one the ledger"),
    ):
        data = json.loads(original)
        data["inputs"][f"data/en-de/{key}"] = "0" * 64
        manifest.write_text(json.dumps(data), encoding="utf-8")
        run = snakemake(repo, "--cores", "2", str(mark), "--configfile", str(config2))
        assert run.returncode != 0
        assert f"{key}: this input {message}" in (logs / where).read_text(encoding="utf-8") or (
            f"{key}.gz: this stored input {message}" in (logs / where).read_text(encoding="utf-8")
        )
        assert (
            not mark.exists() and not (ledger2 / "runs" / "en-de.transformer_tiny.seed3").exists()
        )
    manifest.write_text(original, encoding="utf-8")
