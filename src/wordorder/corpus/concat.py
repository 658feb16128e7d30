"""The ``concat`` source: several corpora read one after another as one training corpus.

``{kind: concat, parts: [SOURCE, ...]}``; e.g. WMT14 en-de = Europarl v7 + Common Crawl +
News Commentary v9, each a checksummed ``url`` source, or Common Crawl (``url``) + CzEng
(``manual``). Every part is validated when the config is read; ``max_lines`` of a part
limits that part, ``max_lines`` of the concat the whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from wordorder.corpus.base import Source, first_pairs
from wordorder.errors import WordorderError


class ConcatSource(Source):
    kind = "concat"
    required = ("parts",)

    def validate(self) -> None:
        from wordorder.corpus.sources import make_source  # the registry imports this module

        parts = self.spec["parts"]
        if not isinstance(parts, list) or not parts:
            raise WordorderError(f"'parts' in {self.where} must be a non-empty list of sources")
        self.parts = []
        for number, part in enumerate(parts, start=1):
            try:
                self.parts.append(make_source(part))
            except WordorderError as e:
                raise WordorderError(f"part {number} of the {self.where}: {e.message}",
                                     hint=e.hint) from None

    def describe(self, src_lang: str, tgt_lang: str) -> str:
        return "; ".join(part.describe(src_lang, tgt_lang) for part in self.parts)

    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        for part in self.parts:  # a part's own max_lines cuts that part
            yield from first_pairs(part.pairs(src_lang, tgt_lang, cache_dir), part.max_lines)
