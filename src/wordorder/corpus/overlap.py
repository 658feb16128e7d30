"""Keep the dev and test sentences out of training.

Corpora repeat themselves (Bible verses, subtitles, boilerplate), and official test sets are
sometimes part of a crawled training corpus. A test sentence seen in training measures
memory, not translation; so a training pair is removed when its source or its target side
occurs in any dev or test set, held out or external. Held-out sets are drawn from the
training corpus itself, so what goes is every *other* copy of a held-out sentence.

Sentences are compared on the tokenized text in one Unicode normal form (NFC: a decomposed
copy, ``e`` + U+0301 for ``é``, is the same sentence) with whitespace normalised (runs of spaces
and tabs, leading and trailing space do not count); case and punctuation do. The tokenizer
splits a decomposed mark off its letter (``nai ̈ ve``), so a line holding a combining mark is
compared without any whitespace (lines without one, on both sides, as above). A removed pair is
counted under the first reason that applies: ``pair`` (the same source and target as a
dev/test pair), ``source`` (its source side occurs in a dev/test set), ``target``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence

REASONS = ("pair", "source", "target")


def _norm(line: str) -> str:
    return " ".join(unicodedata.normalize("NFC", line).split())


def _loose(line: str) -> str:
    """The line without any whitespace, composed (NFC) after the spaces are gone."""
    return unicodedata.normalize("NFC", "".join(line.split()))


def _marked(line: str) -> bool:
    """Whether the line holds a combining mark: the tokenizer splits a decomposed mark off its
    letter (``nai ̈ ve cafe ́``), so such a line is compared without its whitespace."""
    return not line.isascii() and _marks().search(line) is not None


@functools.cache
def _marks() -> re.Pattern[str]:
    """Any code point with a canonical combining class (computed once, ~0.1 s)."""
    marks = [c for c in range(0x110000) if unicodedata.combining(chr(c))]
    ranges, start = [], marks[0]
    for prev, c in zip(marks, [*marks[1:], -1]):
        if c != prev + 1:
            ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(prev))}")
            start = c
    return re.compile(f"[{''.join(ranges)}]")


class _Held:
    """The dev/test sentences of one side: their keys, and their loose keys (all of them, and
    those of the lines with a combining mark)."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.keys: set[str] = set()
        self.loose: set[str] = set()
        self.loose_marked: set[str] = set()
        for line in lines:
            self.keys.add(_norm(line))
            loose = _loose(line)
            self.loose.add(loose)
            if _marked(line):
                self.loose_marked.add(loose)

    def __contains__(self, line: str) -> bool:
        # Lines without marks on either side compare as before: whitespace runs do not count.
        if _marked(line):
            return _loose(line) in self.loose
        return (
            _norm(line) in self.keys
            or bool(self.loose_marked)
            and (_loose(line) in self.loose_marked)
        )


def remove_overlap(
    train: Sequence[int], src: Sequence[str], tgt: Sequence[str], held: Iterable[tuple[str, str]]
) -> tuple[list[int], dict[str, int]]:
    """The training line numbers ``train`` (into ``src``/``tgt``) without the pairs that overlap
    the dev/test pairs ``held``, and the counts per reason (plus ``removed``, their sum).

    Hash sets of the dev/test sentences, one pass over training: linear in the corpus size.

    >>> remove_overlap(
    ...     [0, 1, 2, 3],
    ...     ["a b", "c", "a  b ", "d"],
    ...     ["x", "y", "z", "w"],
    ...     [("a b", "x"), ("e", "y")],
    ... )
    ([3], {'pair': 1, 'source': 1, 'target': 1, 'removed': 3})
    """
    held = list(held)
    sources, targets = _Held(s for s, _ in held), _Held(t for _, t in held)
    pairs = _Held(f"{s}\t{t}" for s, t in held)
    counts = dict.fromkeys(REASONS, 0)
    kept = []
    for i in train:
        if src[i] in sources:
            counts["pair" if f"{src[i]}\t{tgt[i]}" in pairs else "source"] += 1
        elif tgt[i] in targets:
            counts["target"] += 1
        else:
            kept.append(i)
    counts["removed"] = len(train) - len(kept)
    return kept, counts
