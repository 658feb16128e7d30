"""Issue 49, case 10: paths through a loop of symbolic links. ``Path.exists()`` says False for
them, so the checks let them pass: a local corpus failed in its fetch job with a traceback, a
``results:`` folder with Snakemake's 65-line traceback at ``-n`` while ``check-config`` said
"valid". Now one error names the key and the path, when the config is validated."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from cli_checks import check, check_config, run

REPO = Path(__file__).resolve().parents[2]


def loop(folder: Path) -> Path:
    """``folder/a -> b``, ``folder/b -> a``; returns ``folder/a``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a").symlink_to("b")
    (folder / "b").symlink_to("a")
    return folder / "a"


def check_edited(tmp_path: Path, capsys, edit) -> tuple[int, list[str]]:
    config = yaml.safe_load((REPO / "configs" / "default.yaml").read_text(encoding="utf-8"))
    edit(config)
    return check_config(tmp_path, capsys, config)


def test_results_through_a_loop(tmp_path, capsys):
    looped = loop(tmp_path / "links")
    code, errors = check_edited(tmp_path, capsys, lambda c: c.update(results=str(looped / "r")))
    check("results: through a loop", code, errors, f"results: {looped / 'r'} goes through a loop")


def test_a_local_corpus_through_a_loop(tmp_path, capsys):
    looped = loop(tmp_path / "links")

    def edit(config):
        pair = config["pairs"][0]
        src, tgt = pair.split("-")
        config["data"][pair]["train"] = {
            "kind": "local",
            "src": str(looped / f"train.{src}"),
            "tgt": str(looped / f"train.{tgt}"),
        }

    code, errors = check_edited(tmp_path, capsys, edit)
    check("a local corpus through a loop", code, errors, "goes through a loop of symbolic links")
    assert f"{looped}/train." in errors[0] and ".train: " in errors[0]


def test_the_fetch_step_on_a_loop(tmp_path, capsys):
    """The step itself (run by hand, or before this check existed): one line, no traceback."""
    looped = loop(tmp_path / "links")
    spec = {"kind": "local", "src": str(looped / "x.en"), "tgt": str(looped / "x.de")}
    argv = ["fetch", "--spec", json.dumps(spec), "--pair", "en-de", "--lang", "en"]
    argv += ["--cache", tmp_path / "cache", "--output", tmp_path / "out" / "x.en"]
    code, errors = run(argv, capsys)
    check("fetch through a loop", code, errors, f"{looped / 'x.en'}: a loop of symbolic links")
