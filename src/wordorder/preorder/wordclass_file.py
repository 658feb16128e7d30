"""The word-classes file (``word<TAB>class`` lines, the output of the word_classes step) and the
class attribute the BTG preorderer reads from it. The classes themselves come from the exchange
clustering of :mod:`wordorder.preorder.wordclass`, which re-exports these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from wordorder.errors import WordorderError
from wordorder.io import atomic_open, iter_lines

UNKNOWN = "UNK"


def write_word_classes(path: str | Path, classes: dict[str, int]) -> None:
    """Atomically write ``word<TAB>class`` lines (in the dict's order: by
    frequency when trained here)."""
    with atomic_open(path) as f:
        for word, c in classes.items():
            if not word or any(ch in word for ch in "\t\n\r"):
                raise WordorderError(
                    f"cannot write the word {word!r}: empty or holding a tab or line break",
                    path=path,
                    hint="word classes are for whitespace-tokenized text",
                )
            f.write(f"{word}\t{c}\n")


def read_word_classes(path: str | Path) -> dict[str, int]:
    """Read a ``word<TAB>class`` file.

    Raises:
        WordorderError: a malformed or repeated line, naming the file and line.
    """
    classes: dict[str, int] = {}
    hint = "a word-class file holds 'word<TAB>class' lines; rerun the word-classes step"
    for k, line in enumerate(iter_lines(path), start=1):
        parts = line.split("\t")
        if len(parts) != 2 or not parts[0] or not parts[1].isdigit():
            raise WordorderError(
                f"expected 'word<TAB>class' with a class number: {line[:80]!r}",
                path=path,
                line=k,
                hint=hint,
            )
        if parts[0] in classes:
            raise WordorderError(f"word {parts[0]!r} is listed twice", path=path, line=k, hint=hint)
        classes[parts[0]] = int(parts[1])
    return classes


def classes_of(words: Sequence[str], classes: dict[str, int], unknown: str = UNKNOWN) -> list[str]:
    """The class of each word as a string; words without a class get ``unknown``."""
    return [str(classes[w]) if w in classes else unknown for w in words]
