"""Word tokenizers per language, and line-preserving file tokenization.

Three backends, each created once per language and cached:

* **Moses** (sacremoses) for Latin, Cyrillic, Greek and other space-delimited scripts,
  with the language's own non-breaking prefixes and rules (``escape=False``: no ``&amp;``
  entities are introduced, and none are removed on detokenization).
* **fugashi + unidic-lite** for Japanese (``ja``): MeCab surface forms.
* **jieba** for Chinese (``zh``).

For Japanese and Chinese, detokenization concatenates the tokens (the scripts have no
spaces) but keeps one space between two tokens that meet at ASCII letters or digits, so
``iPhone 15`` or ``GPU 2`` survive a round trip.

Every line is passed through :func:`~wordorder.text.normalize.normalize_line` first, and
tokens never contain whitespace, so ``" ".join(tokens)`` can always be split back.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from wordorder.errors import WordorderError
from wordorder.io import atomic_open, iter_lines
from wordorder.progress import progress as progress_bar
from wordorder.text.normalize import normalize_line

log = logging.getLogger(__name__)

__all__ = [
    "Tokenizer",
    "MosesWordTokenizer",
    "JapaneseTokenizer",
    "ChineseTokenizer",
    "get_tokenizer",
    "tokenize_file",
    "detokenize_file",
    "join_cjk",
]


@runtime_checkable
class Tokenizer(Protocol):
    """What every tokenizer offers."""

    lang: str

    def tokenize(self, line: str) -> list[str]:
        """Split a raw line into tokens (no token contains whitespace)."""
        ...

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Join tokens back into running text."""
        ...


def _split_ws(tokens: Sequence[str]) -> list[str]:
    """Guarantee the no-whitespace invariant whatever a backend returns."""
    out: list[str] = []
    for tok in tokens:
        if not tok:
            continue
        if tok.isspace():
            continue
        if any(ch.isspace() for ch in tok):
            out.extend(tok.split())
        else:
            out.append(tok)
    return out


def _is_ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def join_cjk(tokens: Sequence[str]) -> str:
    """Concatenate tokens, with a space only where two ASCII letters/digits would touch.

    >>> join_cjk(["私", "は", "iPhone", "15", "を", "持つ"])
    '私はiPhone 15を持つ'
    """
    parts: list[str] = []
    prev = ""
    for tok in tokens:
        if not tok:
            continue
        if prev and _is_ascii_alnum(prev[-1]) and _is_ascii_alnum(tok[0]):
            parts.append(" ")
        parts.append(tok)
        prev = tok
    return "".join(parts)


class MosesWordTokenizer:
    """Moses tokenizer/detokenizer (sacremoses) for one language."""

    def __init__(self, lang: str) -> None:
        from sacremoses import MosesDetokenizer, MosesTokenizer

        self.lang = lang
        self._tok = MosesTokenizer(lang=lang)
        self._detok = MosesDetokenizer(lang=lang)

    def tokenize(self, line: str) -> list[str]:
        line = normalize_line(line)
        if not line:
            return []
        return _split_ws(self._tok.tokenize(line, escape=False))

    def detokenize(self, tokens: Sequence[str]) -> str:
        tokens = [t for t in tokens if t]
        if not tokens:
            return ""
        return normalize_line(self._detok.detokenize(list(tokens), unescape=False))


class JapaneseTokenizer:
    """Japanese word segmentation with MeCab (fugashi) and the UniDic-lite dictionary."""

    lang = "ja"

    def __init__(self) -> None:
        try:
            import fugashi
        except ImportError as e:  # pragma: no cover - pinned dependency
            raise WordorderError(
                f"Japanese tokenization needs fugashi and unidic-lite ({e})",
                hint="pip install fugashi==1.5.2 unidic-lite",
            ) from None
        # Wakati output (space-separated surface forms) is several times faster than
        # building a Python node object per morpheme.
        self._tagger = fugashi.Tagger("-Owakati")

    def tokenize(self, line: str) -> list[str]:
        line = normalize_line(line)
        if not line:
            return []
        return self._tagger.parse(line).split()

    def detokenize(self, tokens: Sequence[str]) -> str:
        return join_cjk(tokens)


class ChineseTokenizer:
    """Chinese word segmentation with jieba (accurate mode, default dictionary)."""

    lang = "zh"

    def __init__(self) -> None:
        import jieba

        jieba.setLogLevel(logging.WARNING)  # silence "Building prefix dict ..." on stderr
        self._jieba = jieba.Tokenizer()
        self._jieba.initialize()

    def tokenize(self, line: str) -> list[str]:
        line = normalize_line(line)
        if not line:
            return []
        return _split_ws(self._jieba.lcut(line, HMM=True))

    def detokenize(self, tokens: Sequence[str]) -> str:
        return join_cjk(tokens)


def _moses_languages() -> set[str]:
    from sacremoses.corpus import NonbreakingPrefixes

    return set(NonbreakingPrefixes().available_langs.values())


def _base_lang(lang: str) -> str:
    """``"ja-JP"`` / ``"zh_Hans"`` / ``"EN"`` -> ``"ja"`` / ``"zh"`` / ``"en"``."""
    if not isinstance(lang, str) or not lang.strip():
        raise WordorderError(
            f"invalid language code {lang!r}", hint="use an ISO 639-1 code such as 'en'"
        )
    return lang.strip().lower().replace("_", "-").split("-")[0]


@functools.cache
def _cached_tokenizer(lang: str) -> Tokenizer:
    if lang == "ja":
        return JapaneseTokenizer()
    if lang == "zh":
        return ChineseTokenizer()
    if lang not in _moses_languages():
        log.warning(
            (
                "no language-specific tokenizer rules for %r: using Moses with "
                "English non-breaking prefixes"
            ),
            lang,
        )
    return MosesWordTokenizer(lang)


def get_tokenizer(lang: str) -> Tokenizer:
    """The (cached) tokenizer for ``lang``: ``ja`` fugashi, ``zh`` jieba, else Moses."""
    return _cached_tokenizer(_base_lang(lang))


def _progress(it, path: Path, what: str, enabled: bool):
    return progress_bar(it, desc=f"{what} {path.name}", enabled=enabled)


def tokenize_file(inp: Path, out: Path, lang: str, progress: bool = True) -> int:
    """Tokenize ``inp`` line by line into ``out`` (atomic); return the number of lines.

    Line-preserving: an empty (or whitespace-only) input line gives an empty output line.
    """
    inp, out = Path(inp), Path(out)
    tok = get_tokenizer(lang)
    n = 0
    with atomic_open(out) as f:
        for line in _progress(iter_lines(inp), inp, f"tokenize[{tok.lang}]", progress):
            f.write(" ".join(tok.tokenize(line)))
            f.write("\n")
            n += 1
    return n


def detokenize_file(inp: Path, out: Path, lang: str, progress: bool = False) -> int:
    """Detokenize a whitespace-tokenized file line by line into ``out`` (atomic)."""
    inp, out = Path(inp), Path(out)
    tok = get_tokenizer(lang)
    n = 0
    with atomic_open(out) as f:
        for line in _progress(iter_lines(inp), inp, f"detokenize[{tok.lang}]", progress):
            f.write(tok.detokenize(line.split()))
            f.write("\n")
            n += 1
    return n
