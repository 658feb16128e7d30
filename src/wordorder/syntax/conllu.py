"""CoNLL-U for the pipeline's parses: one sentence per input line, tokens exactly as given.

Each sentence carries ``# sent_id`` (the 1-based input line) and ``# text`` (the tokens joined
by spaces). A POS-only backend writes ``_`` for HEAD and DEPREL, and the reader gives
``heads=None``. An empty input line becomes a sentence with comments only (``# empty = 1``),
so sentence *k* is always line *k* of the input: indices never shift.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from wordorder.errors import WordorderError
from wordorder.io import iter_lines


@dataclass
class Sentence:
    """One parsed sentence.

    Attributes:
        forms: the tokens, exactly those of the tokenized corpus line.
        lemmas: lemma of each token (``_`` when the backend gives none).
        upos, xpos: universal and language-specific POS tags (``_`` when unknown).
        heads: [n] 1-based head of each token, 0 for the root; None without a parser.
        deprels: dependency labels (``_`` without a parser).
        fallback: why this sentence did not get a regular parse ("" when it did), e.g. ``flat``.
    """

    forms: list[str]
    lemmas: list[str]
    upos: list[str]
    xpos: list[str]
    heads: np.ndarray | None = None
    deprels: list[str] = field(default_factory=list)
    fallback: str = ""

    def __len__(self) -> int:
        return len(self.forms)


def _field(value: str) -> str:
    return value if value else "_"


def format_sentence(sent: Sentence, sent_id: int) -> str:
    """The CoNLL-U block for ``sent`` (ending with the blank separator line)."""
    lines = [f"# sent_id = {sent_id}", f"# text = {' '.join(sent.forms)}"]
    if not sent.forms:
        lines.append("# empty = 1")
    if sent.fallback:
        lines.append(f"# fallback = {sent.fallback}")
    n = len(sent.forms)
    heads = ["_"] * n if sent.heads is None else [str(int(h)) for h in sent.heads]
    deprels = sent.deprels if sent.heads is not None else ["_"] * n
    for i in range(n):
        cols = (
            str(i + 1),
            sent.forms[i],
            _field(sent.lemmas[i]),
            _field(sent.upos[i]),
            _field(sent.xpos[i]),
            "_",
            heads[i],
            _field(deprels[i]),
            "_",
            "_",
        )
        lines.append("\t".join(cols))
    return "\n".join(lines) + "\n\n"


def write_conllu(f, sentences: Iterable[Sentence], first_id: int = 1) -> int:
    """Write sentences to an open text file; ``first_id`` is the input line of the first one."""
    n = 0
    for n, sent in enumerate(sentences, start=1):
        f.write(format_sentence(sent, first_id + n - 1))
    return n


def _bad(path: Path, line: int, what: str) -> WordorderError:
    return WordorderError(
        f"malformed CoNLL-U: {what}",
        path=path,
        line=line,
        hint="CoNLL-U files are written by `wordorder parse`; rerun that step",
    )


def read_conllu(path: str | Path) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL-U file written by :func:`write_conllu`.

    Multiword-token lines (``1-2``) and empty nodes (``1.1``) are skipped, so files from other
    tools read too. Raises :class:`WordorderError` naming the line of any malformed row.
    """
    path = Path(path)
    rows: list[list[str]] = []
    fallback, seen_block, start = "", False, 1
    for number, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            if seen_block:
                yield _sentence(path, start, rows, fallback)
            rows, fallback, seen_block = [], "", False
            continue
        if not seen_block:
            seen_block, start = True, number
        if line.startswith("#"):
            if line.startswith("# fallback = "):
                fallback = line[len("# fallback = ") :].strip()
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise _bad(path, number, f"{len(cols)} tab-separated columns, expected 10")
        if "-" in cols[0] or "." in cols[0]:
            continue
        if not cols[0].isdigit() or int(cols[0]) != len(rows) + 1:
            raise _bad(path, number, f"token id {cols[0]!r}, expected {len(rows) + 1}")
        rows.append(cols)
    if seen_block:
        yield _sentence(path, start, rows, fallback)


def _sentence(path: Path, line: int, rows: Sequence[Sequence[str]], fallback: str) -> Sentence:
    forms = [r[1] for r in rows]
    lemmas = [r[2] for r in rows]
    upos = [r[3] for r in rows]
    xpos = [r[4] for r in rows]
    if rows and all(r[6] == "_" for r in rows):
        return Sentence(forms, lemmas, upos, xpos, None, ["_"] * len(rows), fallback)
    try:
        heads = np.array([int(r[6]) for r in rows], dtype=np.int64)
    except ValueError:
        raise _bad(path, line, "HEAD must be an integer in every row of a sentence") from None
    if heads.size and (heads.min() < 0 or heads.max() > len(rows)):
        raise _bad(path, line, f"HEAD out of range 0..{len(rows)}")
    return Sentence(forms, lemmas, upos, xpos, heads, [r[7] for r in rows], fallback)
