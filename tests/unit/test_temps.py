"""Owned temporaries: the stale ones of a killed process are removed, nothing else is."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

from wordorder.io import atomic_paths
from wordorder.temps import make_temp, remove_legacy_fetch_dirs, remove_stale, stale_temps, temp_dir


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def host() -> str:
    return "".join(c if c.isalnum() or c in "_-" else "_" for c in socket.gethostname())


def test_only_temporaries_of_dead_processes_of_this_host_for_this_target_are_stale(tmp_path):
    dead, live = dead_pid(), os.getppid()
    names = {
        "dead": f".x.en.{host()}~{dead}.abc123.tmp",
        "dead folder": f".x.en.{host()}~{dead}.def456.tmp",
        "live": f".x.en.{host()}~{live}.ghi789.tmp",
        "mine": f".x.en.{host()}~{os.getpid()}.jkl012.tmp",
        "other host": f".x.en.elsewhere-node7~{dead}.mno345.tmp",
        "other target": f".x.en.gz.{host()}~{dead}.pqr678.tmp",
        "not a temporary": f".x.en.{host()}~{dead}.tmp.keep",
        "old style": ".x.en.abc123.tmp",
    }
    for key, name in names.items():
        (tmp_path / name).mkdir() if key == "dead folder" else (tmp_path / name).write_text("x")
    assert stale_temps(tmp_path, "x.en") == sorted(
        [tmp_path / names["dead"], tmp_path / names["dead folder"]]
    )
    assert remove_stale(tmp_path, "x.en") == sorted(
        [tmp_path / names["dead"], tmp_path / names["dead folder"]]
    )
    left = {p.name for p in tmp_path.iterdir()}
    assert left == {v for k, v in names.items() if not k.startswith("dead")}
    assert stale_temps(tmp_path, "x.en.gz") == [tmp_path / names["other target"]]


def test_a_new_output_removes_the_stale_temporary_of_its_target(tmp_path):
    stale = tmp_path / f".out.txt.{host()}~{dead_pid()}.zzz999.tmp"
    stale.write_text("half")
    with atomic_paths(tmp_path / "out.txt") as (tmp,):
        assert tmp.name.startswith(f".out.txt.{host()}~{os.getpid()}.") and tmp.name.endswith(
            ".tmp"
        )
        tmp.write_text("done")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_temp_dir_and_make_temp(tmp_path):
    with temp_dir(tmp_path, "align.txt") as folder:
        assert folder.is_dir() and stale_temps(tmp_path, "align.txt") == []  # its own: not stale
        (folder / "f").write_text("x")
    assert list(tmp_path.iterdir()) == []
    path = make_temp(tmp_path, "y")
    assert path.is_file() and path.read_bytes() == b""


def test_legacy_fetch_folders_are_removed_only_when_untouched_for_a_day(tmp_path):
    now = time.time()
    for name, age in (
        (".fetch.abcd1234", 2 * 86400),
        (".fetch.efgh5678", 3600),
        (".fetch.toolongname1", 9e6),
    ):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "src").write_text("x")
        for p in (folder / "src", folder):
            os.utime(p, (now - age, now - age))
    fresh_file = tmp_path / ".fetch.ijkl9012"  # old folder, recently written file: a live fetch
    fresh_file.mkdir()
    (fresh_file / "tgt").write_text("x")
    os.utime(fresh_file, (now - 9e6, now - 9e6))
    assert remove_legacy_fetch_dirs(tmp_path, now) == [tmp_path / ".fetch.abcd1234"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".fetch.efgh5678",
        ".fetch.ijkl9012",
        ".fetch.toolongname1",
    ]
