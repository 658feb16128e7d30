"""The run ledger's records: added whole with their provenance, restored byte for byte, and
refused when an input, a setting or a stored file differs (src/wordorder/ledger)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from wordorder.cli import main
from wordorder.errors import WordorderError
from wordorder.ledger import ledger_inputs, ledger_spec, ledgered_runs, run_settings
from wordorder.ledger.files import gzip_copy, sha256_file
from wordorder.ledger.record import Run, Translation, add_run, input_key
from wordorder.ledger.restore import config_difference, restore_training, restore_translation

SETTINGS = {"model": {"family": "transformer"}, "seed": 1, "train": {"max_steps": 2400}}


def make_run(tmp: Path, seed: int = 1, train_text: str = "a b c\n") -> Run:
    """A finished run's files as the DAG leaves them: inputs under the results folder, a
    metrics log ending in its summary, translations, a decoding benchmark and job logs."""
    root = tmp / "results" / "exp"
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    (data / "train.src").write_text(train_text, encoding="utf-8")
    (data / "test.src").write_text("x y\n", encoding="utf-8")
    (data / "test.ref").write_text("the ref\n", encoding="utf-8")
    run_dir = root / "runs" / f"seed{seed}"
    run_dir.mkdir(parents=True, exist_ok=True)
    summary = {
        "summary": {
            "steps": 2400,
            "wall_s": 10.0,
            "cpu_s": 9.5,
            "device": "cpu",
            "precision": "fp32",
            "params": 1000,
            "stop_reason": "max_steps",
        }
    }
    (run_dir / "metrics.jsonl").write_text(
        json.dumps({"step": 100, "dev_bleu": 1.0}) + "\n" + json.dumps(summary) + "\n",
        encoding="utf-8",
    )
    (run_dir / "test.hyp").write_text(f"hyp of seed {seed}\n", encoding="utf-8")
    (run_dir / "test.hyp.tok").write_text(f"hyp of seed {seed}\n", encoding="utf-8")
    (run_dir / "bench.tsv").write_text("s\th:m:s\n1.0\t0:00:01\n", encoding="utf-8")
    (run_dir / "train.log").write_text(
        "train finished in 12.5 s; peak memory 300 MB; cpu 11.0 s\n", encoding="utf-8"
    )
    return Run(
        pair="ja-en",
        variant="base",
        seed=seed,
        config={**SETTINGS, "seed": seed},
        inputs={
            "train_src": data / "train.src",
            "src": data / "test.src",
            "ref": data / "test.ref",
        },
        metrics=run_dir / "metrics.jsonl",
        train_log=run_dir / "train.log",
        translations={
            "test": Translation(
                run_dir / "test.hyp", run_dir / "test.hyp.tok", run_dir / "bench.tsv"
            )
        },
        threads={"train": 1},
    )


def test_a_run_is_recorded_with_its_provenance_and_restored_byte_for_byte(tmp_path):
    ledger, root = tmp_path / "ledger", tmp_path / "results" / "exp"
    run = make_run(tmp_path)
    record = add_run(ledger, "exp", root, run)
    assert ledgered_runs(ledger) == {"ja-en.base.seed1"}
    assert record["inputs"]["data/train.src"] == sha256_file(root / "data" / "train.src")
    prov = record["provenance"]
    assert prov["threads"] == {"train": 1} and prov["precision"] == "fp32"
    assert prov["train"]["steps"] == 2400 and prov["train"]["job"]["cpu_s"] == 11.0
    assert prov["torch"] and prov["cpu_model"] and prov["python"]
    manifest = json.loads((ledger / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["inputs"] == record["inputs"] and manifest["experiment"] == "exp"

    out = tmp_path / "restored"
    restore_training(ledger, "ja-en.base.seed1", run.config, out / "metrics.jsonl", out / "logs")
    restore_translation(
        ledger,
        "ja-en.base.seed1",
        run.config,
        "test",
        out / "h",
        out / "t",
        out / "b",
        out / "logs",
        {"ref": root / "data" / "test.ref"},
        root,
    )
    assert (out / "metrics.jsonl").read_bytes() == run.metrics.read_bytes()
    assert (out / "h").read_text(encoding="utf-8") == "hyp of seed 1\n"
    assert (out / "b").read_bytes() == (run.translations["test"].benchmark or Path()).read_bytes()
    assert "cpu 11.0 s" in (out / "logs" / "ja-en.base.seed1.train.log").read_text(encoding="utf-8")


def test_a_commit_told_by_the_environment_wins_over_a_git_of_the_copy(tmp_path, monkeypatch):
    """The GPU machine's copy of the tree held a stale .git (the previous day's HEAD, "changed"):
    WORDORDER_COMMIT, the commit the copy was made from, is recorded instead, and whether the
    tree had changes is not known there."""
    import subprocess

    from wordorder.ledger.record import provenance

    repo = tmp_path / "copy"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "stale"], check=True)
    stale = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    run = make_run(tmp_path)
    monkeypatch.chdir(repo)
    monkeypatch.delenv("WORDORDER_COMMIT", raising=False)
    assert provenance(run)["commit"] == stale.strip()
    monkeypatch.setenv("WORDORDER_COMMIT", "0e6b102" + "0" * 33)
    prov = provenance(run)
    assert prov["commit"] == "0e6b102" + "0" * 33 and prov["work_tree_changed"] is None


def test_an_input_that_differs_from_the_manifest_is_refused_naming_the_file(tmp_path):
    ledger, root = tmp_path / "ledger", tmp_path / "results" / "exp"
    add_run(ledger, "exp", root, make_run(tmp_path, seed=1))
    before = (ledger / "manifest.json").read_bytes()
    changed = make_run(tmp_path, seed=2, train_text="a b d\n")  # another training corpus
    with pytest.raises(WordorderError) as e:
        add_run(ledger, "exp", root, changed)
    assert e.value.path == str(root / "data" / "train.src") and "differs" in e.value.message
    assert ledgered_runs(ledger) == {"ja-en.base.seed1"}  # nothing added, no stray folder
    assert [p.name for p in (ledger / "runs").iterdir()] == ["ja-en.base.seed1"]
    assert (ledger / "manifest.json").read_bytes() == before
    # the same inputs add the second run, and the manifest stays as it was
    add_run(ledger, "exp", root, make_run(tmp_path, seed=2))
    assert ledgered_runs(ledger) == {"ja-en.base.seed1", "ja-en.base.seed2"}
    assert (ledger / "manifest.json").read_bytes() == before


def test_a_run_already_in_the_ledger_or_of_another_experiment_is_refused(tmp_path):
    ledger, root = tmp_path / "ledger", tmp_path / "results" / "exp"
    add_run(ledger, "exp", root, make_run(tmp_path))
    with pytest.raises(WordorderError, match="already in the ledger"):
        add_run(ledger, "exp", root, make_run(tmp_path))
    with pytest.raises(WordorderError, match="experiment 'exp'"):
        add_run(ledger, "other", root, make_run(tmp_path, seed=3))


def test_a_run_is_restored_only_under_its_own_settings(tmp_path):
    ledger, root = tmp_path / "ledger", tmp_path / "results" / "exp"
    run = make_run(tmp_path)
    add_run(ledger, "exp", root, run)
    changed = {**SETTINGS, "train": {"max_steps": 3000}}
    with pytest.raises(WordorderError, match=r"train\.max_steps: 2400 -> 3000"):
        restore_training(ledger, "ja-en.base.seed1", changed, tmp_path / "m", None)
    assert not (tmp_path / "m").exists()
    assert config_difference({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}}) == ["a.c: '(absent)' -> 2"]


def test_an_edited_ledger_file_or_another_reference_is_refused(tmp_path):
    ledger, root = tmp_path / "ledger", tmp_path / "results" / "exp"
    run = make_run(tmp_path)
    add_run(ledger, "exp", root, run)
    stored = ledger / "runs" / "ja-en.base.seed1" / "test.hyp.gz"
    gzip_copy(run.translations["test"].hyp_tok, tmp_path / "ok.gz")
    with gzip.open(stored, "wt", encoding="utf-8") as f:
        f.write("a better hypothesis\n")
    args = (ledger, "ja-en.base.seed1", run.config, "test", tmp_path / "h", tmp_path / "t", None)
    with pytest.raises(WordorderError, match="differs from the digest its record lists") as e:
        restore_translation(*args, None)
    assert e.value.path == str(stored) and not (tmp_path / "h").exists()
    (root / "data" / "test.ref").write_text("another ref\n", encoding="utf-8")
    with pytest.raises(WordorderError, match="differs from the one the ledger's runs read"):
        restore_translation(*args, None, {"ref": root / "data" / "test.ref"}, root)


def test_gzip_copies_are_the_same_bytes_every_time(tmp_path):
    (tmp_path / "a").write_text("same text\n" * 100, encoding="utf-8")
    gzip_copy(tmp_path / "a", tmp_path / "one.gz")
    gzip_copy(tmp_path / "a", tmp_path / "two.gz")
    assert (tmp_path / "one.gz").read_bytes() == (tmp_path / "two.gz").read_bytes()


def test_a_folder_without_a_record_is_not_a_ledger_run(tmp_path):
    (tmp_path / "runs" / "ja-en.base.seed1").mkdir(parents=True)
    (tmp_path / "runs" / "ja-en.base.seed2").mkdir(parents=True)
    (tmp_path / "runs" / "ja-en.base.seed2" / "record.json").write_text("{}", encoding="utf-8")
    assert ledgered_runs(tmp_path) == {"ja-en.base.seed2"}
    assert ledgered_runs(None) == frozenset() and ledgered_runs(tmp_path / "none") == frozenset()


def test_input_keys_are_relative_to_the_results_folder(tmp_path):
    root = tmp_path / "results" / "exp"
    assert input_key(root / "data" / "x.bpe.en", root) == "data/x.bpe.en"
    assert input_key(tmp_path / "elsewhere" / "y.txt", root) == "y.txt"


def test_the_rules_spec_digests_inputs_not_outputs():
    named = ledger_inputs(
        "m.jsonl",
        {"spm": "spm.model", "train_src": "t.src", "features": ["f1", "f2"], "empty": []},
        [{"hyp": "h0", "tok": "k0", "benchmark": "b0", "src": "s0", "ref": ["r0"]}],
    )
    assert "train_empty" not in named
    spec = ledger_spec("ja-en", "base", 3, named, ["bible"], "logs/exp", {"train": 1, "x": "a"})
    assert spec["inputs"] == {
        "train_spm": "spm.model",
        "train_train_src": "t.src",
        "train_features.0": "f1",
        "train_features.1": "f2",
        "src_0": "s0",
        "ref_0": "r0",
    }
    assert spec["translations"]["bible"] == {
        "hyp": "h0",
        "hyp_tok": "k0",
        "benchmark": "b0",
        "log": "logs/exp/translate/ja-en.base.seed3.bible.log",
    }
    assert spec["train_log"] == "logs/exp/train/ja-en.base.seed3.log" and spec["threads"] == {
        "train": 1
    }
    settings = run_settings({"train": {"lr": 1}, "decode": {}, "data": {"x": 1}}, {"f": 1}, 3)
    assert settings == {
        "model": {"f": 1},
        "seed": 3,
        "train": {"lr": 1},
        "decode": {},
        "clean": None,
        "subword": None,
        "preorder": None,
    }


def test_the_command_line_says_one_error_and_writes_nothing(tmp_path, capsys):
    ledger, root = tmp_path / "ledger", tmp_path / "results" / "exp"
    run = make_run(tmp_path)
    add_run(ledger, "exp", root, run)
    out = tmp_path / "metrics.jsonl"
    argv = [
        "ledger-restore",
        "--ledger",
        str(ledger),
        "--pair",
        "ja-en",
        "--variant",
        "base",
        "--seed",
        "1",
        "--metrics",
        str(out),
    ]
    assert main([*argv, "--config", json.dumps({**SETTINGS, "seed": 2})]) == 2
    assert "made with other settings (seed: 1 -> 2)" in capsys.readouterr().err and not out.exists()
    assert main([*argv, "--config", json.dumps(SETTINGS)]) == 0
    assert out.read_bytes() == run.metrics.read_bytes()


def test_the_inputs_are_kept_once_and_restored_only_as_the_manifest_has_them(tmp_path):
    from wordorder.ledger import stored_inputs
    from wordorder.ledger.restore import restore_input

    ledger, root = tmp_path / "ledger", tmp_path / "results" / "exp"
    run = make_run(tmp_path)
    add_run(ledger, "exp", root, run)
    assert stored_inputs(ledger) == ["data/test.ref", "data/test.src", "data/train.src"]
    restore_input(ledger, "data/train.src", tmp_path / "again.src")
    assert (tmp_path / "again.src").read_bytes() == (root / "data" / "train.src").read_bytes()
    stored = ledger / "inputs" / "data" / "train.src.gz"
    gzip_copy(root / "data" / "test.src", stored)  # another file's content under its name
    with pytest.raises(WordorderError, match="differs from its digest in the manifest") as e:
        restore_input(ledger, "data/train.src", tmp_path / "bad.src")
    assert e.value.path == str(stored) and not (tmp_path / "bad.src").exists()
    with pytest.raises(WordorderError, match="names no input"):
        restore_input(ledger, "data/none", tmp_path / "none")
