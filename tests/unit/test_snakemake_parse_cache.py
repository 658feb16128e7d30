"""Each Snakefile translated once per process (:mod:`wordorder.snakemake_parse_cache`): a file
two modules include is translated once, Snakemake's errors still name its lines, and a file
with an unnamed rule (whose translation names the count of rules before it) is translated for
each module, as before."""

from __future__ import annotations

import textwrap

from snakemake_probe import counted_dry_run

MODULE = textwrap.dedent(
    """\
    def source(wildcards):
        if wildcards.name == "bad":
            raise ValueError("no source for bad")
        return []

    rule make:
        input: source
        output: config["prefix"] + "/{name}.txt"
        shell: "echo {wildcards.name} > {output:q}"
    """
)
UNNAMED = textwrap.dedent(
    """\
    rule:
        output: config["prefix"] + "/{name}.txt"
        shell: "echo {wildcards.name} > {output:q}"
    """
)
MAIN = textwrap.dedent(
    """\
    rule all:
        input: {targets}

    module a:
        snakefile: "module.smk"
        config: {{"prefix": "a"}}
    module b:
        snakefile: "module.smk"
        config: {{"prefix": "b"}}
    use rule * from a as a_*
    use rule * from b as b_*
    """
)

# Counting the translations of each file (Snakemake's parser opens a Snakefile for each).
COUNT = """
import snakemake.parser
init = snakemake.parser.Snakefile.__init__
def counting(self, path, workflow, rulecount=0):
    counted[os.path.basename(path.get_path_or_uri(secret_free=True))] += 1
    init(self, path, workflow, rulecount=rulecount)
snakemake.parser.Snakefile.__init__ = counting
"""


def dry_run(tmp_path, module: str, targets: str) -> dict:
    (tmp_path / "module.smk").write_text(module, encoding="utf-8")
    (tmp_path / "Snakefile").write_text(MAIN.format(targets=targets), encoding="utf-8")
    return counted_dry_run(COUNT, tmp_path / "Snakefile", tmp_path)


def test_a_file_two_modules_include_is_translated_once(tmp_path):
    seen = dry_run(tmp_path, MODULE, '"a/x.txt", "b/y.txt"')
    assert seen["code"] == 0, seen["log"][-2000:]
    assert seen["counted"] == {"Snakefile": 1, "module.smk": 1}  # without the change: 2
    assert "rule a_make:" in seen["log"] and "rule b_make:" in seen["log"]
    assert "b/y.txt" in seen["log"]


def test_errors_in_the_second_module_name_the_files_lines(tmp_path):
    """The line map is given again with the translation: the second module's job fails in
    module.smk's input function (line 3) of rule make (line 6)."""
    seen = dry_run(tmp_path, MODULE, '"a/x.txt", "b/bad.txt"')
    assert seen["code"] == 1
    module = tmp_path / "module.smk"
    assert f'InputFunctionException in rule b_make in file "{module}", line 6' in seen["log"]
    assert f'File "{module}", line 3, in source' in seen["log"]


def test_a_file_with_an_unnamed_rule_is_translated_for_each_module(tmp_path):
    seen = dry_run(tmp_path, UNNAMED, '"a/x.txt", "b/x.txt"')
    assert seen["code"] == 0, seen["log"][-2000:]
    assert seen["counted"] == {"Snakefile": 1, "module.smk": 2}
    assert "rule a_2:" in seen["log"] and "rule b_3:" in seen["log"]  # named by their count
