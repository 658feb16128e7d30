"""A second run in the same clone while the first trains (issue 37, case 12): Snakemake takes
the first run's running jobs for incomplete files (metrics.jsonl exists from the training's
start) and advises ``--rerun-incomplete``, which would redo them under the running trainer.
The Snakefile now says first that another run is active, naming it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dag import tiny_config

pytestmark = pytest.mark.slow

SNAKEMAKE = Path(sys.executable).with_name("snakemake")


def command(repo: Path, config: Path, *args: str) -> list[str]:
    return [str(SNAKEMAKE), "-s", str(repo / "Snakefile"), "--directory", str(repo), *args]


def test_a_second_run_is_told_that_a_run_is_active(repo, shared_data, tmp_path):
    path = tiny_config(repo, shared_data, tmp_path)
    text = path.read_text(encoding="utf-8")
    text = text.replace("max_steps: 30", "max_steps: 100000\n  max_minutes: 4")
    text = text.replace("syntax: {parse: true, shards: 2}", "syntax: {parse: false}")
    (variants,) = [line for line in text.split("\n") if line.startswith("variants:")]
    text = text.replace(variants, "variants: [transformer_tiny]")  # one, without features
    path.write_text(text.replace("methods: [gold, btg, rvnn]", "methods: []"), encoding="utf-8")
    folder = tmp_path / "results" / "tiny"
    target = folder / "models" / "en-de" / "transformer_tiny" / "seed1" / "best.pt"
    args = [str(target), "--configfile", str(path)]
    env = {**os.environ, "PATH": f"{SNAKEMAKE.parent}{os.pathsep}{os.environ['PATH']}"}
    first = subprocess.Popen(
        command(repo, path, "--cores", "1", *args),
        env=env,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 300
        while not (target.parent / "metrics.jsonl").exists():  # the first run is training
            assert first.poll() is None, first.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "no training within 300 s"
            time.sleep(0.5)
        holder = json.loads((folder / ".wordorder.lock").read_text(encoding="utf-8"))
        for extra in (["-n"], ["--cores", "1"]):
            second = subprocess.run(  # one stream, in the order written
                command(repo, path, *extra, *args),
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            out = second.stdout
            assert second.returncode != 0, out[-3000:]
            assert "IncompleteFilesException" in out  # Snakemake's own advice comes after ours
            note = f"note: another run is active in {folder} (host {holder['host']}, pid "
            assert f"{note}{first.pid}, working directory {repo}" in out, out[-3000:]
            assert "do not rerun them with --rerun-incomplete" in out
            assert out.index(note) < out.index("IncompleteFilesException")
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGTERM)
        try:
            first.wait(120)
        except subprocess.TimeoutExpired:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
