"""`snakemake --lint` has no findings on the workflow: rule files hold only rules (helpers and
path templates are in the package, src/wordorder/flow), every rule has a log and an
environment. The lint's text report is read (Snakemake 9.27 prints text even for `--lint json`),
and the reader is first tried on a planted workflow, so that a change of the report's form
cannot make the test pass unread."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from dag import tiny_config

GOOD = "Congratulations, your workflow is in a good condition!"


def lint_findings(snakefile: Path, *args: str) -> list[str]:
    """'<snakefile or rule>: <title>' of every finding of `snakemake --lint`."""
    exe = Path(sys.executable).with_name("snakemake")
    run = subprocess.run(
        [str(exe), "-s", str(snakefile), "--directory", str(snakefile.parent), "--lint", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = run.stdout + run.stderr
    found, item = [], None
    for line in report.splitlines():
        if m := re.fullmatch(r"Lints for (.+):", line):
            item = m[1]
        elif (m := re.fullmatch(r"    \* (.+):", line)) and item:
            found.append(f"{item}: {m[1]}")
    if not found:  # no findings must mean a lint that ran, not one that failed before it
        assert run.returncode == 0 and GOOD in report, f"rc {run.returncode}:\n{report[-3000:]}"
    return found


def test_the_reader_sees_a_finding(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "mixed.smk").write_text(
        'def helper(w):\n    return "b"\n\n\n'
        'rule make:\n    output:\n        "a"\n    log:\n        "a.log"\n'
        '    conda:\n        "env.yaml"\n'
        '    shell:\n        "touch {output:q} > {log:q}"\n',
        encoding="utf-8",
    )
    (tmp_path / "Snakefile").write_text('include: "rules/mixed.smk"\n', encoding="utf-8")
    found = lint_findings(tmp_path / "Snakefile")
    assert found == [
        (
            f"snakefile {tmp_path / 'rules' / 'mixed.smk'}: Mixed rules and "
            "functions in same snakefile."
        )
    ]


def test_the_workflow_has_no_lint_findings(repo, shared_data, tmp_path):
    config = tiny_config(repo, shared_data, tmp_path)
    assert lint_findings(repo / "Snakefile", "--configfile", str(config)) == []
