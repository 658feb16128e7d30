"""What every corpus source shares: key checking, path placeholders, aligned reading and writing.

A source (one class per ``kind``, see :mod:`wordorder.corpus.sources`) only has to yield
aligned ``(source, target)`` sentence pairs; :meth:`Source.fetch` writes them to two
line-aligned files, atomically (both files appear or neither does).
"""

from __future__ import annotations

import contextlib
import itertools
import os
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


def check_keys(
    spec: Mapping[str, Any], required: Iterable[str], optional: Iterable[str], where: str
) -> None:
    """Refuse unknown and missing keys, naming the key and where it belongs
    (e.g. ``url source``)."""
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


def need_path(spec: Mapping[str, Any], key: str, where: str) -> str:
    """A path (or archive member) of the config: a non-empty string without control characters."""
    value = need_str(spec, key, where)
    bad = re.search("[\x00-\x1f\x7f-\x9f]", value)
    if bad:
        raise WordorderError(
            f"'{key}' in {where} holds the control character U+{ord(bad.group()):04X}: {value!r}",
            hint="a path has no newlines, tabs or other control characters",
        )
    return value


def expand(template: str, src_lang: str, tgt_lang: str) -> str:
    """Replace the ``{src}``/``{tgt}`` placeholders by the language codes
    (other braces are kept)."""
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
        raise WordorderError(
            f"control character U+{ord(bad.group()):04X} at column {bad.start() + 1}",
            path=path,
            line=number,
            hint="remove control characters from the corpus (e.g. "
            "tr -d '\\000-\\010\\013-\\037\\177'), or fix its encoding",
        )
    if len(text) > MAX_LINE_CHARS:
        raise WordorderError(
            f"the line has {len(text):,} characters (more than {MAX_LINE_CHARS:,})",
            path=path,
            line=number,
            hint=(
                "one sentence per line is expected: the file has lost its line breaks, or "
                "the line is not a sentence"
            ),
        )
    return text


def iter_file_pairs(src: Path, tgt: Path) -> Iterator[tuple[str, str]]:
    """Stream the aligned lines of two files (``.gz`` allowed), checking that they line up.

    Raises:
        WordorderError: a file is missing, a line is not UTF-8 or has a control character or
            is overlong (naming file and line), or the line counts differ (naming both files
            and both counts; counted to the end).
    """
    a, b = iter_lines(src, MAX_LINE_CHARS), iter_lines(tgt, MAX_LINE_CHARS)
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


def first_pairs(
    pairs: Iterable[tuple[str, str]], max_lines: int | None
) -> Iterator[tuple[str, str]]:
    """The first ``max_lines`` pairs (all with None), still reading the rest so that errors
    further on (misaligned files, bad UTF-8) are not hidden."""
    it = iter(pairs)
    yield from itertools.islice(it, max_lines)
    for _ in it:
        pass


def write_pairs(
    pairs: Iterable[tuple[str, str]],
    out_src: Path | None,
    out_tgt: Path | None,
    max_lines: int | None = None,
    inputs: str = "the source",
) -> int:
    """Write pairs to two aligned files atomically; returns the number of lines written.

    A side whose path is None is read (so that both sides are checked) but not written.
    With ``max_lines`` only the first pairs are written, but ``pairs`` is still consumed to
    the end so that errors further on are not hidden. ``inputs`` names what the pairs are read
    from, for the error when there are none.
    """
    outputs = [p for p in (out_src, out_tgt) if p is not None]
    n = 0
    with atomic_paths(*outputs) as temps, contextlib.ExitStack() as files:
        tmp = iter(temps)
        fs, ft = (
            None
            if p is None
            else files.enter_context(open(next(tmp), "w", encoding="utf-8", newline="\n"))
            for p in (out_src, out_tgt)
        )
        for s, t in first_pairs(pairs, max_lines):
            if fs is not None:
                fs.write(_one_line(s) + "\n")
            if ft is not None:
                ft.write(_one_line(t) + "\n")
            n += 1
        if n == 0:
            raise WordorderError(
                f"the corpus is empty: {inputs} gave no lines, so nothing was written to "
                f"{' and '.join(map(str, outputs))}",
                hint="check that the source's files have content (or the source definition)",
            )
    return n


def refuse_same_file(a: Path, b: Path, keys: tuple[str, str], where: str) -> None:
    """Both sides of a corpus must be two files: refuse one file given for both (the same path,
    another spelling of it, or a link to it), naming the two config keys."""
    same = os.path.realpath(a) == os.path.realpath(b)  # resolve() raises on a link loop
    if not same and a.exists() and b.exists():
        same = os.path.samefile(a, b)
    if same:
        raise WordorderError(
            f"'{keys[0]}' and '{keys[1]}' of the {where} are the same file: {a}"
            + (f" and {b}" if str(a) != str(b) else ""),
            hint=(
                "the source and the target side of a parallel corpus are "
                "two files, one per language"
            ),
        )


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
            isinstance(self.max_lines, bool)
            or not isinstance(self.max_lines, int)
            or self.max_lines < 1
        ):
            raise WordorderError(
                f"'max_lines' in {self.where} must be a positive integer, not {self.max_lines!r}"
            )
        self.validate()

    def validate(self) -> None:  # noqa: B027 (a hook: most kinds have nothing more to check)
        """Check the values of the kind's own keys (the keys themselves are already checked)."""

    def describe(self, src_lang: str, tgt_lang: str) -> str:
        """What the pairs are read from (the user's files, URLs or data set), for messages."""
        return f"the {self.where}"

    def local_files(self, src_lang: str, tgt_lang: str) -> list[Path]:
        """The user's files on this machine that the pairs are read from (none: a download or a
        package), the inputs of the fetch job, so that an edit of them reruns it."""
        return []

    @abstractmethod
    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        """Yield the aligned (source-language, target-language) sentence pairs, in a fixed order."""

    def fetch(
        self,
        src_lang: str,
        tgt_lang: str,
        out_src: Path | None,
        out_tgt: Path | None,
        cache_dir: Path,
    ) -> int:
        """Write the corpus to ``out_src``/``out_tgt`` (both or none); returns the line count.

        A side given as None is read and checked but not written (a fetch job writes one side).
        """
        return write_pairs(
            self.pairs(src_lang, tgt_lang, Path(cache_dir)),
            None if out_src is None else Path(out_src),
            None if out_tgt is None else Path(out_tgt),
            self.max_lines,
            self.describe(src_lang, tgt_lang),
        )
