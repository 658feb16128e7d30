"""The code's references are self-contained: nothing cites the algorithm spec that lives outside
the repository, and every section of ``docs/algorithms.md`` cited in the code, tests, workflow
README (and the docs pages) exists in that file."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "algorithms.md"
SCANNED = ["src", "tests", "benchmarks", "workflow", "docs"]
SUFFIXES = {".py", ".smk", ".yaml", ".md", ".rst"}

# A citation of the external spec: the word spec(s) just before a section sign or "section N",
# or its path under ../shared (split here so that this line does not cite it).
EXTERNAL = re.compile(r"\bspecs?\W{0,3}(?:§|section\s+\d)|shared/" r"specs\b", re.IGNORECASE)
# "docs/algorithms.md §BTG", "`docs/algorithms.md` §TAU and §GOLD", "... §RIBES, §TER and §SIG"
CITATION = re.compile(r"docs/algorithms\.md`?((?:(?:\s*,\s*|\s+and\s+|\s+)§[A-Z][A-Z0-9-]*)+)")
SECTION_ID = re.compile(r"§([A-Z][A-Z0-9-]*)")
HEADING = re.compile(r"^#{2,3} §([A-Z][A-Z0-9-]*) ", re.MULTILINE)


def files() -> list[Path]:
    out = [REPO / "README.md", REPO / "Snakefile"]
    for top in SCANNED:
        # not hidden folders: benchmarks/.peers holds a venv of third-party code
        out += sorted(
            p
            for p in (REPO / top).rglob("*")
            if p.suffix in SUFFIXES
            and p.is_file()
            and not any(part.startswith(".") for part in p.relative_to(REPO).parts)
        )
    return out


def cited_sections(text: str) -> list[str]:
    return [s for m in CITATION.finditer(text) for s in SECTION_ID.findall(m.group(1))]


def test_the_patterns_find_what_they_look_for():
    planted = "see the spe" + "c §4 and ../shared/spe" + "cs/algorithms.md"
    assert len(EXTERNAL.findall(planted)) == 2
    assert not EXTERNAL.search(
        "the spec as the corpus source sees it; --spec JSON; a test-set spec"
    )
    assert cited_sections(
        "(docs/algorithms.md §RIBES, §TER and §SIG) and `docs/algorithms.md` §FLEX: x"
    ) == [
        "RIBES",
        "TER",
        "SIG",
        "FLEX",
    ]


def test_nothing_cites_the_external_spec():
    hits = [
        f"{p.relative_to(REPO)}:{n}: {line.strip()}"
        for p in files()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if EXTERNAL.search(line)
    ]
    assert not hits, "cite docs/algorithms.md (or the paper) instead:\n" + "\n".join(hits)


def test_every_cited_section_exists():
    sections = set(HEADING.findall(DOC.read_text(encoding="utf-8")))
    cited = {
        (p.relative_to(REPO), s)
        for p in files()
        for s in cited_sections(p.read_text(encoding="utf-8"))
    }
    # the code cites most sections; an empty scan is a bug here
    assert len({s for _, s in cited}) >= 20
    missing = sorted(f"{path}: §{s}" for path, s in cited if s not in sections)
    assert not missing, f"sections cited but not in {DOC.relative_to(REPO)}:\n" + "\n".join(missing)


def test_doc_sections_have_unique_ids_and_working_anchors():
    text = DOC.read_text(encoding="utf-8")
    ids = HEADING.findall(text)
    assert len(ids) == len(set(ids))
    anchors = set(re.findall(r'<a id="([a-z0-9-]+)"></a>', text))
    assert {s.lower() for s in ids} == anchors  # every section can be linked as #id
    assert set(re.findall(r"\]\(#([a-z0-9-]+)\)", text)) <= anchors
