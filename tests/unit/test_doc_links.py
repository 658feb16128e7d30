"""The front door and the docs pages hold together: every relative link of README.md and
docs/*.md names a file of the repository, a link to a heading names one of that page (GitHub's
fragment of it, or an explicit ``<a id>``), and the README stays a page a newcomer reads in a few
minutes (issue 38: at most 300 lines, the rest in docs/)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*#*\s*$", re.M)
EXPLICIT = re.compile(r"<a id=\"([^\"]+)\"></a>")


def prose(text: str) -> str:
    """The text a reader sees as Markdown: fenced code blocks and inline code removed."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    # GitHub: the heading's rendered text (link text kept, code marks dropped), lower case,
    # punctuation other than '-' and '_' removed, each space a hyphen
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The fragments a page answers to: each heading's slug, a repeated one numbered -1, -2, ...
    as GitHub does, and every explicit <a id>."""
    text = path.read_text(encoding="utf-8")
    seen: Counter[str] = Counter()
    out = set(EXPLICIT.findall(text))
    for heading in HEADING.findall(FENCE.sub("", text)):
        s = slug(heading)
        out.add(f"{s}-{seen[s]}" if seen[s] else s)
        seen[s] += 1
    return out


def links(path: Path) -> list[str]:
    return [
        unquote(t)
        for t in LINK.findall(prose(path.read_text(encoding="utf-8")))
        if not re.match(r"[a-z][a-z0-9+.-]*:", t)  # http:, https:, mailto:
    ]


def test_the_patterns_find_what_they_look_for(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        '# A: b (c) — d\n\n## A: b (c) — d\n\n<a id="x"></a>\n[t](other.md#h) ![i](p.png)\n'
        "[web](https://example.org) `[code](no.md)`\n```\n[fenced](no.md)\n# not a heading\n```\n",
        encoding="utf-8",
    )
    assert anchors(page) == {"a-b-c--d", "a-b-c--d-1", "x"}
    assert links(page) == ["other.md#h", "p.png"]
    assert (
        slug("Demo: bf16 (`cpu_amp: auto`) against fp32") == "demo-bf16-cpu_amp-auto-against-fp32"
    )


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in links(page):
        file, _, fragment = target.partition("#")
        where = (page.parent / file).resolve() if file else page
        if not where.exists() or not where.is_relative_to(REPO):
            broken.append(f"{target}: no such file")
        elif fragment and where.suffix == ".md" and fragment not in anchors(where):
            broken.append(f"{target}: no heading '#{fragment}' in {where.relative_to(REPO)}")
    assert not broken, f"{page.relative_to(REPO)}:\n" + "\n".join(broken)


def test_the_pages_are_linked_from_the_readme():
    linked = {(REPO / t.partition("#")[0]).resolve() for t in links(REPO / "README.md")}
    assert set(PAGES[1:]) <= linked, "a docs page the README's table does not link"


def test_the_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 300, f"README.md has {lines} lines: move the details to a page under docs/"
