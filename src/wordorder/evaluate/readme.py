"""Generated sections of a README or a docs page: the block between two marker lines is replaced by
tables the DAG wrote (the findings, the cross-paper table), so the numbers a reader sees there are
never typed by hand. Everything outside the markers is kept byte for byte.

    <!-- wordorder:effects:begin -->
    ... replaced ...
    <!-- wordorder:effects:end -->

With a page (``evaluation.readme_page``) the whole block goes there and the README's section gets
a summary of it: one line per table, linked to its heading on the page, so that the README stays
short while its numbers are still generated.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path

from wordorder.errors import WordorderError
from wordorder.io import atomic_open


def markers(name: str) -> tuple[str, str]:
    return f"<!-- wordorder:{name}:begin -->", f"<!-- wordorder:{name}:end -->"


def demote(markdown: str, levels: int = 2) -> str:
    """Headings one or more levels down, so a table's '# title' sits under the README's sections."""
    return re.sub(
        r"^(#{1,6}) ", lambda m: "#" * min(6, len(m.group(1)) + levels) + " ", markdown, flags=re.M
    )


def block(sources: Sequence[str], note: str = "") -> str:
    """The generated block: an optional note, then each source Markdown with demoted headings."""
    parts = [note.strip()] if note.strip() else []
    parts += [demote(s).strip() for s in sources]
    return "\n\n".join(parts) + "\n"


def anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: its text without Markdown links and code marks,
    lower case, every character but letters, digits, '_', '-' and spaces dropped, spaces as '-'
    (repeats are not numbered here: the linked headings are told apart by their titles)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


_HEADING = re.compile(r"^(#{1,6}) (.+)$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _tables(lines: Sequence[str]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(the heading above it, header cells, body rows) of every Markdown table in ``lines``."""
    out: list[tuple[str, list[str], list[list[str]]]] = []
    above, i = "", 0
    while i < len(lines):
        if m := _HEADING.match(lines[i]):
            above = m.group(2)
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|-"):
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out.append((above, _cells(lines[i]), [_cells(r) for r in lines[i + 2 : j]]))
            i = j
            continue
        i += 1
    return out


def _lead(lines: Sequence[str]) -> str:
    """The first sentence of the paragraph that opens a section, if it opens with one (not with a
    table or a heading)."""
    para: list[str] = []
    for line in lines:
        if not line.strip():
            if para:
                break
            continue
        if line.startswith(("|", "#")):
            break
        para.append(line.strip())
    text = " ".join(para)
    m = re.match(r"(.+?[.!?])(?:\s|$)", text)
    return m.group(1) if m else text


# A findings table of at most this many rows is told row by row (effect, interval, Holm p,
# verdict); a longer one by the tally of its verdicts.
ROWS_TOLD = 3
_ROW_CELLS = ("comparison", "pair / test set", "our Δ", "95 % CI", "paper Δ", "Holm p", "verdict")


def _verdicts(above: str, header: list[str], rows: list[list[str]]) -> str:
    """A findings table in a sentence, named by its family (the heading above it, within the
    section: "Primary comparisons (pre-registered): Holm over ..." gives the part before the
    colon)."""
    family = f"{above.split(':')[0]}: " if above else ""
    if len(rows) <= ROWS_TOLD and set(_ROW_CELLS) <= set(header):
        told = []
        for row in rows:
            c = dict(zip(header, row, strict=False))
            told.append(
                f"{c['comparison']} on {c['pair / test set']}: Δ {c['our Δ']} {c['95 % CI']} "
                f"(paper {c['paper Δ']}), Holm p {c['Holm p']}, {c['verdict']}"
            )
        return f"{family}{'; '.join(told)}."
    k = header.index("verdict")
    # "not detected (MDE 1.37)" and "(MDE 2.10)" are one verdict; the MDE is the row's
    tally = Counter(re.sub(r" \(MDE [^)]*\)", "", r[k]) for r in rows if len(r) > k)
    verdicts = ", ".join(f"{n} {v}" for v, n in tally.most_common())
    claims = f"{len(rows)} claim" + "s" * (len(rows) != 1)
    return f"{family}{claims}; verdicts: {verdicts}."


def _facts(lines: Sequence[str]) -> list[str]:
    """What the tables of a section say in a few words: the effects or verdicts of a findings
    table, the first system of a ranked table."""
    facts = []
    for above, header, rows in _tables(lines):
        if "verdict" in header and rows:
            facts.append(_verdicts(above, header, rows))
        elif {"rank", "system", "BLEU"} <= set(header) and rows:
            first = dict(zip(header, rows[0], strict=False))
            where = f"{above}: " if above else ""
            facts.append(
                f"{where}{len(rows)} systems, first {first['system'].strip('*')} "
                f"(BLEU {first['BLEU']})."
            )
    return facts


def summary(content: str, link: str) -> str:
    """The README's short form of a generated block: the block's note, then one line per
    top-level heading, linked to it on the page at ``link``, with its lead sentence and what its
    tables say (:func:`_facts`)."""
    lines = content.split("\n")
    heads = [(i, m) for i, line in enumerate(lines) if (m := _HEADING.match(line))]
    if not heads:
        return f"The generated tables: [{link}]({link}).\n"
    top = min(len(m.group(1)) for _, m in heads)
    starts = [(i, m.group(2)) for i, m in heads if len(m.group(1)) == top]
    note = "\n".join(lines[: starts[0][0]]).strip()
    out = [note, ""] if note else []
    out += [f"The tables are in [{link}]({link}):", ""]
    for k, (i, title) in enumerate(starts):
        body = lines[i + 1 : starts[k + 1][0] if k + 1 < len(starts) else len(lines)]
        said = " ".join(s for s in [_lead(body), *_facts(body)] if s)
        out.append(f"- [{title}]({link}#{anchor(title)})" + (f": {said}" if said else ""))
    return "\n".join(out) + "\n"


def splice(text: str, name: str, content: str, path: str = "README") -> str:
    """``text`` with the lines between ``name``'s markers replaced by ``content``.

    Raises:
        WordorderError: a marker is missing, repeated, or the end comes before the begin.
    """
    begin, end = markers(name)
    lines = text.split("\n")
    where = {m: [i for i, line in enumerate(lines) if line.strip() == m] for m in (begin, end)}
    for m, found in where.items():
        if len(found) != 1:
            raise WordorderError(
                f"{path}: the marker line '{m}' appears {len(found)} times (needs exactly once)",
                hint=f"put the two lines '{begin}' and '{end}' where the generated tables belong",
            )
    b, e = where[begin][0], where[end][0]
    if e < b:
        raise WordorderError(f"{path}:{e + 1}: '{end}' comes before '{begin}' (line {b + 1})")
    return "\n".join(lines[: b + 1] + content.rstrip("\n").split("\n") + lines[e:])


def update_readme(
    readme: Path | None,
    name: str,
    sources: Sequence[Path],
    block_out: Path,
    note: str = "",
    page: Path | None = None,
) -> str:
    """Write the block to ``block_out`` and splice it into ``readme``, or, given a ``page``, into
    the page and its :func:`summary` into ``readme`` (if any); returns the block. Every file is
    spliced before any is written, so a missing marker leaves all of them as they were."""
    content = block([Path(s).read_text(encoding="utf-8") for s in sources], note)
    texts: list[tuple[Path, str]] = []
    if page is not None:
        texts.append((page, content))
    if readme is not None:
        link = Path(os.path.relpath(page, readme.parent)).as_posix() if page else ""
        texts.append((readme, summary(content, link) if page else content))
    # Two experiments may splice their sections into one README at once: each reads, splices
    # and renames under a lock on the files' folders, or one would write back the other's old
    # text. A folder, not a lock file, so nothing is left beside the user's README.
    with contextlib.ExitStack() as held:
        for folder in sorted({str(path.resolve().parent) for path, _ in texts}):
            if os.path.isdir(folder):  # else _splice_all names the missing file
                held.enter_context(_locked(folder))
        _splice_all(texts, name, content, block_out)
    return content


@contextlib.contextmanager
def _locked(folder: str) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes, however the process ends
        yield
    finally:
        os.close(fd)


def _splice_all(texts: list[tuple[Path, str]], name: str, content: str, block_out: Path) -> None:
    new = []
    for path, text in texts:
        if not path.is_file():
            raise WordorderError(
                f"{path}: no such file",
                hint="evaluation.readme and evaluation.readme_page name the files to update",
            )
        new.append((path, splice(path.read_text(encoding="utf-8"), name, text, str(path))))
    with atomic_open(block_out) as f:
        f.write(content)
    for path, text in new:
        with atomic_open(path) as f:
            f.write(text)
