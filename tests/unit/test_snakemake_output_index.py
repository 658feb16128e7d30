"""The rules that make a file found once per file (:mod:`wordorder.snakemake_output_index`):
Snakemake's output index answers a second question about a file from memory, with a set of
its own, and the DAG of a file that many jobs read is the same."""

from __future__ import annotations

import textwrap
from types import ModuleType

from snakemake_probe import counted_dry_run

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

# Counting how often a rule is asked whether it makes mid/shared.txt.
COUNT = """
import snakemake.rules
is_producer = snakemake.rules.Rule.is_producer
def counting(self, requested_output):
    counted[f"{self.name} {requested_output}"] += 1
    return is_producer(self, requested_output)
snakemake.rules.Rule.is_producer = counting
"""


def test_a_file_four_jobs_read_is_matched_to_its_rule_once(tmp_path):
    (tmp_path / "Snakefile").write_text(SNAKEFILE, encoding="utf-8")
    seen = counted_dry_run(COUNT, tmp_path / "Snakefile", tmp_path)
    assert seen["code"] == 0, seen["log"][-2000:]
    assert seen["counted"]["shared mid/shared.txt"] == 1  # without the change: 4
    stats = seen["log"][seen["log"].index("Job stats") :]
    assert sorted(line.split() for line in stats.splitlines()[3:7]) == [
        ["all", "1"],
        ["shared", "1"],
        ["total", "6"],
        ["use", "4"],
    ]
