"""A dry run of Snakemake in a fresh interpreter of the venv (whose ``.pth`` installs
wordorder's changes to Snakemake), with a setup snippet counting calls into Snakemake: the
tests of ``src/wordorder/snakemake_*.py`` that a change makes fewer of them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# the setup snippet fills ``counted`` (a collections.Counter) before Snakemake's command runs
HEAD = """
import collections, contextlib, io, json, os, sys
import snakemake.api
counted = collections.Counter()
"""
RUN = """
from snakemake.cli import main
out = io.StringIO()
with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
    try:
        main(["-n", "-s", sys.argv[1], "-d", sys.argv[2], "--cores", "1"])
    except SystemExit as done:
        code = done.code
print(json.dumps({"code": code, "counted": counted, "log": out.getvalue()}))
"""


def counted_dry_run(setup: str, snakefile: Path, workdir: Path) -> dict:
    """``snakemake -n`` of ``snakefile`` in ``workdir``: its exit code, log and ``counted``."""
    run = subprocess.run(
        [sys.executable, "-c", HEAD + setup + RUN, str(snakefile), str(workdir)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)
