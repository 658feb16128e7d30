"""Bad config values refused when Snakemake builds the DAG (a dry run), before any job (issue 37,
cases 4, 9 and 11): one error naming the file (and line) and the key. The whole list of values
goes through ``wordorder check-config`` in tests/unit/test_bad_config_values.py."""

from __future__ import annotations

import os
import subprocess
import time

import pytest
from dag import snakemake, tiny_config

pytestmark = pytest.mark.slow


def billion_laughs(levels: int = 9) -> str:
    """``experiment:`` as nine levels of nine aliases of the level below: 387 million strings
    (as in tests/unit/test_bad_config_values.py)."""
    value = "&a0 [" + ", ".join(["lol"] * 9) + "]"
    for k in range(1, levels):
        value = f"&a{k} [{value}, " + ", ".join([f"*a{k - 1}"] * 8) + "]"
    return f"experiment: {value}\n"


def _replace(old: str, new: str):
    def edit(text: str) -> str:
        assert old in text
        return text.replace(old, new, 1)

    return edit


@pytest.mark.parametrize(
    "case, edit, must",
    [
        (
            "billion laughs in a string field",
            _replace("experiment: tiny\n", billion_laughs()),
            "tiny.yaml:3: aliases expand this value to",  # the line where it passes the budget
        ),
        (
            "lr: .nan",
            _replace("lr: 0.001", "lr: .nan"),
            "at 'train.lr': nan is not a finite number",
        ),
        (
            "max_len_a: .inf",
            _replace("decode: {beam_size: 2}", "decode: {beam_size: 2, max_len_a: .inf}"),
            "invalid config at 'decode.max_len_a': inf is not a finite number",
        ),
        (
            "heads: 128 on the tiny preset (64 wide)",
            _replace("clean: {max_len: 40}", "clean: {max_len: 40}\nmodel: {heads: 128}"),
            "variant 'transformer_tiny' on en-de: d_model=64 must be even and divisible by "
            "heads=128",
        ),
        (
            "decay_start without step_decay (issue 49, case 7)",
            _replace("  log_every: 5\n", "  log_every: 5\n  decay_start: 7\n"),
            "train.decay_start is set, but train.schedule is inverse_sqrt",
        ),
        ("results: -out", _replace("\nresults: ", "\nresults: -out\nx: "), "at 'results'"),
        (
            "results: a file",
            _replace("\nresults: ", "\nresults: /etc/hostname\nx: "),
            "tiny.yaml:{line}: results: /etc/hostname must be a folder, but /etc/hostname is a "
            "file",
        ),
    ],
)
def test_dry_run_refuses_before_any_job(case, edit, must, repo, shared_data, tmp_path):
    path = tiny_config(repo, shared_data, tmp_path)
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    if case.startswith("results: "):  # the key x (the old value) is not the point: drop it
        text = path.read_text(encoding="utf-8")
        path.write_text("\n".join(t for t in text.split("\n") if not t.startswith("x: ")))
    lines = path.read_text(encoding="utf-8").split("\n")
    must = must.format(
        line=1 + next((i for i, t in enumerate(lines) if t.startswith("results")), 0)
    )
    start = time.perf_counter()
    run = snakemake(repo, "-n", "--configfile", str(path), timeout=300)
    seconds = time.perf_counter() - start
    out = run.stdout + run.stderr
    assert run.returncode != 0 and must in out, out[-3000:]
    assert "Job stats" not in out and seconds < 60


def test_a_read_only_results_folder(repo, shared_data, tmp_path):
    """Case 12: one error naming the folder when the run starts (a dry run only reads)."""
    disk = tmp_path / "ro"
    disk.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(disk)], capture_output=True
        ).returncode
    ):
        pytest.skip("cannot mount a read-only tmpfs here (needs root)")
    try:
        path = tiny_config(repo, shared_data, tmp_path)
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(f"results: {tmp_path / 'results'}", f"results: {disk}"))
        assert snakemake(repo, "-n", "--configfile", str(path), timeout=300).returncode == 0
        run = snakemake(repo, "--cores", "1", "--configfile", str(path), timeout=300)
        out = run.stdout + run.stderr
        assert run.returncode != 0, out[-3000:]
        assert (
            f"{disk / 'tiny'}: cannot write the results folder {disk / 'tiny'}: Read-only file "
            "system" in out
        ), out[-3000:]
        assert "Traceback" not in out and "Errno" not in out
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_results_through_a_loop_of_links(repo, shared_data, tmp_path):
    """Issue 49, case 10: Snakemake's 65-line traceback at -n; now the one line of the check."""
    (tmp_path / "a").symlink_to("b")
    (tmp_path / "b").symlink_to("a")
    path = tiny_config(repo, shared_data, tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace(f"results: {tmp_path / 'results'}", f"results: {tmp_path}/a/r"))
    run = snakemake(repo, "-n", "--configfile", str(path), timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out[-3000:]
    assert f"results: {tmp_path}/a/r goes through a loop of symbolic links" in out, out[-3000:]
    assert "Traceback" not in out


def nested_mapping_bomb(levels: int = 9) -> str:
    """Nine levels of mappings of nine aliases each: Snakemake's merge of the configs copied
    them all (past 60 s) before the Snakefile could look."""
    lines = ["a0: &a0 {x: 1, y: 2}"]
    for k in range(1, levels + 1):
        lines.append(f"a{k}: &a{k} {{" + ", ".join(f"k{j}: *a{k - 1}" for j in range(9)) + "}")
    return "\n".join(lines) + f"\nexperiment: *a{levels}\n"


@pytest.mark.parametrize(
    "case, content, must",
    [
        ("a Latin-1 byte", "experiment: t\xe9st\n".encode("latin-1"), ":1: not UTF-8: byte 0xe9"),
        ("nested mappings of aliases", nested_mapping_bomb().encode(), ":6: aliases expand"),
    ],
)
def test_snakemakes_own_config_loader_gives_one_line(case, content, must, repo, tmp_path):
    """Issue 49, case 11: Snakemake reads --configfile before the Snakefile: a Latin-1 byte ended
    in its 49-line loader traceback, the alias bomb hung past 60 s. The venv's
    wordorder-snakemake.pth (make install) has it read each file with the strict reader."""
    path = tmp_path / "bad.yaml"
    path.write_bytes(content)
    start = time.perf_counter()
    run = snakemake(repo, "-n", "--configfile", str(path), timeout=120)
    out = (run.stdout + run.stderr).strip()
    assert run.returncode == 2 and out.startswith(f"error: {path}{must}"), out[-3000:]
    assert len(out.splitlines()) == 2 and time.perf_counter() - start < 30  # error and hint
