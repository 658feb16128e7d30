"""What every corpus source shares: key checking, path placeholders, aligned reading and writing.

A source (one class per ``kind``, see :mod:`wordorder.corpus.sources`) only has to yield
aligned ``(source, target)`` sentence pairs; :meth:`Source.fetch` writes them to two
line-aligned files, atomically (both files appear or neither does).
"""

from __future__ import annotations

import itertools
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from wordorder.errors import WordorderError
from wordorder.io import atomic_paths, iter_lines

#: Keys every kind accepts. ``max_lines`` keeps only the first N pairs (for quick test runs);
#: the rest is still read, so misaligned or broken input is reported all the same.
COMMON_KEYS = ("kind", "max_lines")


def check_keys(spec: Mapping[str, Any], required: Iterable[str], optional: Iterable[str],
               where: str) -> None:
    """Refuse unknown and missing keys, naming the key and where it belongs (e.g. ``url source``)."""
    required, optional = tuple(required), tuple(optional)
    allowed = set(required) | set(optional)
    for key in spec:
        if key not in allowed:
            raise WordorderError(
                f"unknown key '{key}' in {where}",
                hint=f"allowed keys: {', '.join(sorted(allowed))}",
            )
    for key in required:
        if key not in spec:
            raise WordorderError(
                f"missing key '{key}' in {where}",
                hint=f"required keys: {', '.join(required)}",
            )


def need_str(spec: Mapping[str, Any], key: str, where: str) -> str:
    """The value of ``key`` as a non-empty string, or an error naming the key."""
    value = spec[key]
    if not isinstance(value, str) or not value.strip():
        raise WordorderError(f"'{key}' in {where} must be a non-empty string, not {value!r}")
    return value


def expand(template: str, src_lang: str, tgt_lang: str) -> str:
    """Replace the ``{src}``/``{tgt}`` placeholders by the language codes (other braces are kept)."""
    return template.replace("{src}", src_lang).replace("{tgt}", tgt_lang)


def local_path(template: str, src_lang: str, tgt_lang: str) -> Path:
    """A path from the config: placeholders expanded, ``~`` expanded, made absolute."""
    return Path(expand(template, src_lang, tgt_lang)).expanduser().absolute()


MAX_LINE_CHARS = 20_000  # far beyond any sentence: a longer line is a file without line breaks
# C0 controls but tab, DEL and the C1 block (which is what cp1252 text read as Latin-1 shows)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def check_line(text: str, path: Path, number: int) -> str:
    """A user corpus line must be text: no control characters, not absurdly long."""
    bad = _CONTROL.search(text)
    if bad:
        raise WordorderError(f"control character U+{ord(bad.group()):04X} at column {bad.start() + 1}", path=path,
                             line=number, hint="remove control characters from the corpus (e.g. "
                             "tr -d '\\000-\\010\\013-\\037\\177'), or fix its encoding")
    if len(text) > MAX_LINE_CHARS:
        raise WordorderError(f"the line has {len(text):,} characters (more than {MAX_LINE_CHARS:,})", path=path,
                             line=number, hint="one sentence per line is expected: the file has lost its line "
                             "breaks, or the line is not a sentence")
    return text


def iter_file_pairs(src: Path, tgt: Path) -> Iterator[tuple[str, str]]:
    """Stream the aligned lines of two files (``.gz`` allowed), checking that they line up.

    Raises:
        WordorderError: a file is missing, a line is not UTF-8 or has a control character or
            is overlong (naming file and line), or the line counts differ (naming both files
            and both counts; counted to the end).
    """
    a, b = iter_lines(src), iter_lines(tgt)
    n = 0
    for left in a:
        right = next(b, None)
        if right is None:
            raise _count_mismatch(src, n + 1 + sum(1 for _ in a), tgt, n)
        n += 1
        yield check_line(left, src, n), check_line(right, tgt, n)
    rest = sum(1 for _ in b)
    if rest:
        raise _count_mismatch(src, n, tgt, n + rest)


def _count_mismatch(src: Path, n_src: int, tgt: Path, n_tgt: int) -> WordorderError:
    return WordorderError(
        f"line counts differ: {src} has {n_src} lines but {tgt} has {n_tgt}",
        hint="the two sides of a parallel corpus must be line-aligned (one sentence per line)",
    )


def _one_line(text: str) -> str:
    # A line break inside a sentence would silently shift every later line out of alignment.
    if "\n" in text or "\r" in text:
        return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return text


def first_pairs(pairs: Iterable[tuple[str, str]], max_lines: int | None) -> Iterator[tuple[str, str]]:
    """The first ``max_lines`` pairs (all with None), still reading the rest so that errors
    further on (misaligned files, bad UTF-8) are not hidden."""
    it = iter(pairs)
    yield from itertools.islice(it, max_lines)
    for _ in it:
        pass


def write_pairs(pairs: Iterable[tuple[str, str]], out_src: Path, out_tgt: Path,
                max_lines: int | None = None) -> int:
    """Write pairs to two aligned files atomically; returns the number of lines written.

    With ``max_lines`` only the first pairs are written, but ``pairs`` is still consumed to
    the end so that errors further on are not hidden.
    """
    n = 0
    with atomic_paths(out_src, out_tgt) as (tmp_src, tmp_tgt):
        with open(tmp_src, "w", encoding="utf-8", newline="\n") as fs, \
                open(tmp_tgt, "w", encoding="utf-8", newline="\n") as ft:
            for s, t in first_pairs(pairs, max_lines):
                fs.write(_one_line(s) + "\n")
                ft.write(_one_line(t) + "\n")
                n += 1
        if n == 0:
            raise WordorderError(f"the corpus is empty: no lines for {out_src} and {out_tgt}",
                                 hint="check the source files (or the source definition)")
    return n


class Source(ABC):
    """One kind of corpus source, built from its config entry (``spec``).

    Subclasses set ``kind``, ``required`` and ``optional`` (their own keys; the common keys
    are added) and implement :meth:`pairs`. The constructor validates the keys, so a bad
    config fails before anything is downloaded or written.
    """

    kind: ClassVar[str]
    required: ClassVar[tuple[str, ...]] = ()
    optional: ClassVar[tuple[str, ...]] = ()

    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.where = f"{self.kind} source"
        check_keys(spec, self.required, (*self.optional, *COMMON_KEYS), self.where)
        self.spec = dict(spec)
        self.max_lines = spec.get("max_lines")
        if self.max_lines is not None and (
                isinstance(self.max_lines, bool) or not isinstance(self.max_lines, int)
                or self.max_lines < 1):
            raise WordorderError(f"'max_lines' in {self.where} must be a positive integer, "
                                 f"not {self.max_lines!r}")
        self.validate()

    def validate(self) -> None:
        """Check the values of the kind's own keys (the keys themselves are already checked)."""

    @abstractmethod
    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        """Yield the aligned (source-language, target-language) sentence pairs, in a fixed order."""

    def fetch(self, src_lang: str, tgt_lang: str, out_src: Path, out_tgt: Path,
              cache_dir: Path) -> int:
        """Write the corpus to ``out_src``/``out_tgt`` (both or none); returns the line count."""
        return write_pairs(self.pairs(src_lang, tgt_lang, Path(cache_dir)), Path(out_src),
                           Path(out_tgt), self.max_lines)
