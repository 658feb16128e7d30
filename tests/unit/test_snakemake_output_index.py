"""The rules that make a file found once per file (:mod:`wordorder.snakemake_output_index`):
Snakemake's output index answers a second question about a file from memory, with a set of
its own, and the DAG of a file that many jobs read is the same."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from types import ModuleType

from wordorder import snakemake_output_index


def test_each_index_answers_from_memory_with_a_set_of_its_own():
    asked = []

    class OutputIndex:
        def __init__(self, rules):
            self.rules = rules

        def match_producers(self, targetfile):
            asked.append(targetfile)
            return {r for r in self.rules if targetfile.endswith(r)}

    module = ModuleType("output_index")
    module.OutputIndex = OutputIndex
    snakemake_output_index.wrap(module)
    snakemake_output_index.wrap(module)  # once only
    first, second = OutputIndex([".txt", "b.txt"]), OutputIndex([".tsv"])
    answer = first.match_producers("a/b.txt")
    assert answer == {".txt", "b.txt"}
    answer.clear()  # the caller's set: the memory keeps its own
    assert first.match_producers("a/b.txt") == {".txt", "b.txt"}
    assert second.match_producers("a/b.txt") == set()
    assert asked == ["a/b.txt", "a/b.txt"]  # once per index


SNAKEFILE = textwrap.dedent(
    """
    rule all:
        input: expand("out/{n}.txt", n=range(4))

    rule shared:
        output: "mid/shared.txt"
        shell: "echo > {output:q}"

    rule use:
        input: "mid/shared.txt"
        output: "out/{n}.txt"
        shell: "cp {input:q} {output:q}"
    """
)

# In a fresh interpreter of the venv (its .pth installs the hooks): a dry run counting how
# often a rule is asked whether it makes mid/shared.txt.
PROBE = """
import collections, contextlib, io, json, sys
import snakemake.api
import snakemake.rules
asked = collections.Counter()
is_producer = snakemake.rules.Rule.is_producer
def counting(self, requested_output):
    asked[f"{self.name} {requested_output}"] += 1
    return is_producer(self, requested_output)
snakemake.rules.Rule.is_producer = counting
from snakemake.cli import main
out = io.StringIO()
with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
    try:
        main(["-n", "-s", sys.argv[1], "-d", sys.argv[2], "--cores", "1"])
    except SystemExit as done:
        code = done.code
print(json.dumps({"code": code, "asked": asked, "log": out.getvalue()}))
"""


def test_a_file_four_jobs_read_is_matched_to_its_rule_once(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "Snakefile"), str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    seen = json.loads(run.stdout)
    assert seen["code"] == 0, seen["log"][-2000:]
    assert seen["asked"]["shared mid/shared.txt"] == 1  # without the change: 4
    stats = seen["log"][seen["log"].index("Job stats") :]
    assert sorted(line.split() for line in stats.splitlines()[3:7]) == [
        ["all", "1"],
        ["shared", "1"],
        ["total", "6"],
        ["use", "4"],
    ]
