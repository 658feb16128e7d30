"""Helpers of the bad-input tests: the wordorder CLI run in-process, its one error line checked, a
local HTTP server for download sources, a small disk, and what a failure left behind. Shared
here rather than imported from a test module (issue 47)."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from wordorder.cli import main


def serve(root: Path):
    """A local HTTP server (127.0.0.1) serving a folder of test archives."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(root)))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def check_config(tmp_path: Path, capsys, config: dict) -> tuple[int, list[str]]:
    """``wordorder check-config`` on ``config`` written to tmp_path/config.yaml."""
    import yaml

    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return run(["check-config", "--config", path], capsys)


def run(argv, capsys) -> tuple[int, list[str]]:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    return code, [line for line in err.splitlines() if line.startswith("error:")]


def fetch_args(tmp_path, spec, lang="en"):
    return [
        "fetch",
        "--spec",
        json.dumps(spec),
        "--pair",
        "en-de",
        "--lang",
        lang,
        "--cache",
        tmp_path / "cache",
        "--output",
        tmp_path / "out" / f"x.{lang}",
    ]


def left_over(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def check(name: str, code: int, errors: list[str], *must: str) -> None:
    assert code == 2, (name, code, errors)
    assert len(errors) == 1, (name, errors)
    for text in must:
        assert text in errors[0], (name, text, errors[0])
    table = os.environ.get("WORDORDER_BAD_INPUT_TABLE")
    if table:
        with open(table, "a", encoding="utf-8") as f:
            f.write(f"| {name} | {errors[0][len('error: ') :].replace('|', '/')} |\n")


def small_disk(tmp_path, size: str) -> Path:
    """A tmpfs of ``size`` mounted at tmp_path/disk (the caller unmounts it); skips without root."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(disk)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    return disk
