"""A listed job's shell command (:mod:`wordorder.snakemake_shellcmd`): formatted once per job
when Snakemake lists it (three times without the change), and the same command printed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

SNAKEFILE = textwrap.dedent(
    """
    rule all:
        input: expand("out/{name}.txt", name=["a b", "c"])

    rule make:
        output: "out/{name}.txt"
        params: greeting=lambda wildcards: f"hello {wildcards.name}"
        threads: 2
        shell: "echo {params.greeting:q} -t {threads} > {output:q}"
    """
)

# In a fresh interpreter of the venv (its .pth installs the hooks): a dry run in this process,
# counting how often a job's command is formatted.
PROBE = """
import contextlib, io, json, sys
import snakemake.jobs
formatted = []
format_wildcards = snakemake.jobs.Job.format_wildcards
def counting(self, string, **variables):
    formatted.append(str(self.rule))
    return format_wildcards(self, string, **variables)
snakemake.jobs.Job.format_wildcards = counting
from snakemake.cli import main
err = io.StringIO()
with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
    try:
        main(["-n", "-p", "-s", sys.argv[1], "-d", sys.argv[2], "--cores", "2"])
    except SystemExit as done:
        code = done.code
log = err.getvalue()
commands = sorted(line for line in log.splitlines() if line.startswith("Shell command"))
print(json.dumps({"code": code, "formatted": formatted, "commands": commands}))
"""


def test_each_listed_job_formats_its_command_once(tmp_path):
    snakefile = tmp_path / "Snakefile"
    snakefile.write_text(SNAKEFILE, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(snakefile), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout)
    assert seen["code"] == 0
    assert seen["formatted"] == ["make", "make"]  # without the change: six
    assert seen["commands"] == [
        "Shell command: None",  # rule all, as Snakemake's own log_info has it
        "Shell command: echo 'hello a b' -t 2 > 'out/a b.txt'",
        "Shell command: echo 'hello c' -t 2 > out/c.txt",
    ]
