"""Generated sections of a README: the block between two marker lines is replaced by tables the
DAG wrote (the findings, the cross-paper table), so the numbers a reader sees there are never typed
by hand. Everything outside the markers is kept byte for byte.

    <!-- wordorder:effects:begin -->
    ... replaced ...
    <!-- wordorder:effects:end -->
"""

from __future__ import annotations

import re
from collections.abc import Sequence
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
    readme: Path, name: str, sources: Sequence[Path], block_out: Path, note: str = ""
) -> str:
    """Write the block to ``block_out`` and splice it into ``readme``
    (atomically); returns the block."""
    if not readme.is_file():
        raise WordorderError(
            f"{readme}: no such README", hint="evaluation.readme names the file to update"
        )
    content = block([Path(s).read_text(encoding="utf-8") for s in sources], note)
    new = splice(readme.read_text(encoding="utf-8"), name, content, str(readme))
    with atomic_open(block_out) as f:
        f.write(content)
    with atomic_open(readme) as f:
        f.write(new)
    return content
