"""The README's generated section: replaced between its markers, everything else kept byte for byte,
refused (README untouched, no block written) when the markers are not exactly once each."""

from __future__ import annotations

import pytest
from test_bad_inputs import run

from wordorder.errors import WordorderError
from wordorder.evaluate.readme import block, demote, splice

README = (
    "# Title\n\nIntro.\n\n<!-- wordorder:effects:begin -->\nold\n"
    "<!-- wordorder:effects:end -->\n\n## Next\n"
)


def test_splice_replaces_only_the_section():
    new = splice(README, "effects", "| a | b |\n|---|---|\n")
    assert new == (
        "# Title\n\nIntro.\n\n<!-- wordorder:effects:begin -->\n| a | b |\n|---|---|\n"
        "<!-- wordorder:effects:end -->\n\n## Next\n"
    )
    # idempotent: splicing the same content again changes nothing
    assert splice(new, "effects", "| a | b |\n|---|---|\n") == new
    # another experiment's markers are not touched
    assert splice(README.replace("effects", "other"), "other", "x") != README.replace(
        "effects", "other"
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ("no markers\n", "appears 0 times"),
        (README + "<!-- wordorder:effects:begin -->\n", "appears 2 times"),
        ("<!-- wordorder:effects:end -->\nx\n<!-- wordorder:effects:begin -->\n", "comes before"),
    ],
)
def test_splice_refuses_bad_markers(text, message):
    with pytest.raises(WordorderError, match=message):
        splice(text, "effects", "x")


def test_demote_and_block():
    assert (
        demote("# T\n\n## a, b\ntext # not a heading\n")
        == "### T\n\n#### a, b\ntext # not a heading\n"
    )
    assert block(["# F\n| x |\n", "# C\n"], "Generated.") == "Generated.\n\n### F\n| x |\n\n### C\n"


def test_cli_updates_atomically_or_not_at_all(tmp_path, capsys):
    readme, src, out = tmp_path / "README.md", tmp_path / "findings.md", tmp_path / "section.md"
    readme.write_text(README, encoding="utf-8")
    src.write_text("# Findings\n\n| paper |\n|---|\n| Kawara 2021 |\n", encoding="utf-8")
    argv = ["readme-section", "--readme", readme, "--name", "effects"]
    argv += ["--source", src, "--block", out]
    code, errors = run(argv, capsys)
    assert code == 0, errors
    assert readme.read_text(encoding="utf-8") == README.replace(
        "old\n", out.read_text(encoding="utf-8")
    )
    assert "### Findings" in out.read_text(encoding="utf-8")

    broken = README.replace("<!-- wordorder:effects:end -->\n", "")
    readme.write_text(broken, encoding="utf-8")
    out.unlink()
    code, errors = run(argv, capsys)
    assert code != 0 and len(errors) == 1 and str(readme) in errors[0] and "end" in errors[0]
    assert readme.read_text(encoding="utf-8") == broken and not out.exists()
