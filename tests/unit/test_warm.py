"""The warm job runner (wordorder.warm): a ``wordorder`` job forked by the runner reads, writes,
prints and exits as the same job in its own process, and a different environment or source tree
gets a runner of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from warm_runners import runner_folder, runner_log, wait_for_runner

from wordorder import warm

BIN = Path(sys.executable).with_name("wordorder")
LINES = "Hello, world! It's a test.\nThe cat (a black one) sat on the mat.\n"


@pytest.fixture
def base():
    with runner_folder() as path:
        yield path


def test_a_job_run_by_the_runner_is_the_job_run_in_its_own_process(base, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "in.txt").write_text(LINES, encoding="utf-8")
    cold_env = {k: v for k, v in os.environ.items() if k != warm.ENV}
    warm_env = {**cold_env, warm.ENV: str(base)}

    def tokenize(env: dict, output: str, source: str = "in.txt") -> subprocess.CompletedProcess:
        args = ["tokenize", "--lang", "en", "--input", source, "--output", output]
        return subprocess.run(
            [str(BIN), *args], cwd=work, env=env, capture_output=True, text=True, umask=0o027
        )

    cold = tokenize(cold_env, "cold.txt")
    assert cold.returncode == 0, cold.stderr
    first = tokenize(warm_env, "first.txt")  # no runner yet: runs here and starts one
    assert first.returncode == 0, first.stderr
    wait_for_runner(base)
    assert "job " not in runner_log(base)
    forked = tokenize(warm_env, "forked.txt")
    assert forked.returncode == 0, forked.stderr
    # the runner ran it: relative paths from the client's folder, its umask, its streams
    assert "job " in runner_log(base) and "wordorder tokenize" in runner_log(base)
    expected = (work / "cold.txt").read_bytes()
    assert expected and (work / "forked.txt").read_bytes() == expected
    assert (work / "forked.txt").stat().st_mode & 0o777 == 0o640
    assert forked.stdout == cold.stdout.replace("cold.txt", "forked.txt")
    assert "tokenize finished in" in forked.stderr

    # a bad input: the same one error line and status, nothing written
    bad_cold = tokenize(cold_env, "x.txt", source="missing.txt")
    bad = tokenize(warm_env, "y.txt", source="missing.txt")
    assert bad.returncode == bad_cold.returncode == 2
    errors = [line for line in bad.stderr.splitlines() if line.startswith("error:")]
    assert errors == [line for line in bad_cold.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "missing.txt" in errors[0]
    assert not (work / "y.txt").exists()
    assert runner_log(base).count("job ") == 2

    # another environment is another runner: the modules read their variables at import
    other = tokenize({**warm_env, "OMP_NUM_THREADS": "7"}, "other.txt")
    assert other.returncode == 0 and runner_log(base).count("job ") == 2


def test_the_key_follows_environment_and_source_but_not_volatile_variables(tmp_path):
    env = {"PATH": "/usr/bin", "OMP_NUM_THREADS": "1"}
    assert warm.key(env) == warm.key({**env, "PYTEST_CURRENT_TEST": "x", "OLDPWD": "/"})
    assert warm.key(env) != warm.key({**env, "OMP_NUM_THREADS": "2"})
    tree = tmp_path / "src"
    shutil.copytree(Path(warm.__file__).parent, tree, ignore=shutil.ignore_patterns("__pycache__"))
    before = warm.key(env, tree)
    assert warm.key(env, tree) == before
    module = tree / "warm.py"
    stamp = module.stat()
    os.utime(module, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))
    assert warm.key(env, tree) != before  # an edited module (here only its time): a new tree


def test_runners_live_only_in_a_folder_of_this_user():
    base = Path(tempfile.mkdtemp(prefix="ww", dir="/tmp"))
    try:
        folder = warm.folder_for(str(base))
        assert folder == base / f"wordorder-warm-{os.getuid()}"
        assert folder.stat().st_mode & 0o777 == 0o700
        folder.chmod(0o755)  # others could plant a socket: not used
        assert warm.folder_for(str(base)) is None
        assert warm.folder_for("/tmp/" + "x" * 80) is None  # too long for a socket path
    finally:
        shutil.rmtree(base)
