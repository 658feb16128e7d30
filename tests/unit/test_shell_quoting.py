"""Every value a rule's shell command interpolates is shell-quoted (Snakemake's ``:q``), so a
config value (a path, a name) is one argument and never shell text: ``results: "$(touch x)"``
runs nothing. The command strings are read from the workflow files with Python's tokenizer."""

from __future__ import annotations

import ast
import io
import string
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WORKFLOW_FILES = [REPO / "Snakefile", *sorted((REPO / "workflow").rglob("*.smk"))]

# Fields allowed without :q, each with the reason it cannot carry shell text.
SAFE_UNQUOTED = {
    "threads": "an integer Snakemake computes (the rule's threads, capped by --cores)",
}

_SKIP = {tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT}


def shell_commands(text: str, name: str) -> list[tuple[int, str]]:
    """(line, command) of every ``shell:`` directive: the string literals that follow it,
    concatenated. A command that is not made of plain string literals (an f-string, a name,
    a call) fails here: its interpolations could not be checked."""
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)]
    out = []
    for i, tok in enumerate(tokens):
        # the directive: `shell:` opening its line
        if not (
            tok.type == tokenize.NAME
            and tok.string == "shell"
            and tok.line.lstrip().startswith("shell:")
            and tokens[i + 1].string == ":"
        ):
            continue
        parts, j = [], i + 2
        while j < len(tokens) and (tokens[j].type in _SKIP or tokens[j].type == tokenize.STRING):
            if tokens[j].type == tokenize.STRING:
                prefix = tokens[j].string[
                    : len(tokens[j].string) - len(tokens[j].string.lstrip("rRbBuUfF"))
                ]
                assert "f" not in prefix.lower(), (
                    f"{name}:{tokens[j].start[0]}: shell command is an f-string"
                )
                parts.append(ast.literal_eval(tokens[j].string))
            j += 1
        assert parts, (
            f"{name}:{tok.start[0]}: shell command is not a string literal (cannot be checked)"
        )
        out.append((tok.start[0], "".join(parts)))
    return out


def unquoted_fields(command: str) -> list[str]:
    """The ``{...}`` fields of a command without ``:q`` (``{{``/``}}`` are literal braces)."""
    bad = []
    for _, field, spec, _ in string.Formatter().parse(command):
        if field is None or field in SAFE_UNQUOTED:
            continue
        if not (spec or "").endswith("q"):
            bad.append("{" + field + (":" + spec if spec else "") + "}")
    return bad


def test_the_check_finds_an_unquoted_field():
    """The checker itself: it must flag these, or the test below could not fail."""
    text = 'rule x:\n    shell:\n        "cmd {input:q} {params.gold}"\n        " > {log}"\n'
    assert shell_commands(text, "x.smk") == [(2, "cmd {input:q} {params.gold} > {log}")]
    assert unquoted_fields("cmd {input:q} {params.gold} > {log} {threads} {{literal}}") == [
        "{params.gold}",
        "{log}",
    ]
    assert unquoted_fields("cmd {input.gold[0]:q} {wildcards.pair:q}") == []
    with pytest.raises(AssertionError, match="f-string"):
        shell_commands('rule x:\n    shell:\n        f"cmd {x}"\n', "x.smk")
    with pytest.raises(AssertionError, match="not a string literal"):
        shell_commands("rule x:\n    shell:\n        command()\n", "x.smk")


def test_every_shell_interpolation_is_quoted():
    found, bad = 0, []
    for path in WORKFLOW_FILES:
        for line, command in shell_commands(path.read_text(encoding="utf-8"), path.name):
            found += 1
            bad += [
                f"{path.relative_to(REPO)}:{line}: {field}" for field in unquoted_fields(command)
            ]
    assert found >= 39, (
        f"only {found} shell commands found (39 when written): is the "
        "parser still reading the rules?"
    )
    assert not bad, (
        "unquoted in a shell command (add :q, or make a multi-word param a list):\n"
        + "\n".join(bad)
    )
