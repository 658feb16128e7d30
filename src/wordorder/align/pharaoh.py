"""Pharaoh word-alignment files: one line per sentence pair, links ``i-j`` separated by spaces.

``i`` indexes the source words and ``j`` the target words, 0-based; an empty line means no
links. Gold files (awesome-align, WPT) are 1-based and mark possible links as ``ipj``; pass
``one_based=True`` and ``possible=True`` to read them. Whole files are parsed by a numba
state machine over the raw bytes, so a corpus of a million lines reads in about a second.

In memory a corpus of alignments is a list of ``[L, 2]`` arrays or the flat form ``(links,
offsets)``; both, and the check of links against a corpus, are :mod:`wordorder.align.links`
(re-exported here).
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from pathlib import Path

import numba
import numpy as np

from wordorder.align.links import check_ranges, flatten, unflatten
from wordorder.errors import WordorderError
from wordorder.io import atomic_open

__all__ = [
    "check_ranges",
    "flatten",
    "format_links",
    "format_pharaoh",
    "parse_gold_line",
    "parse_links",
    "parse_pharaoh",
    "read_alignments",
    "read_pharaoh",
    "unflatten",
    "write_alignments",
    "write_pharaoh",
]

_ERRORS = {
    1: "unexpected character (links look like 3-5, separated by spaces)",
    2: "incomplete link (links look like 3-5)",
    3: "index too large",
    4: "possible links (ipj) are not allowed here",
}
_HINT = "the alignment file must hold Pharaoh links i-j, one line per sentence pair of the corpus"


@numba.njit(cache=True)
def _parse_bytes(buf: np.ndarray, allow_possible: bool) -> tuple:
    """Parse Pharaoh text. Returns (links [N,2], possible [N] bool, offsets
    [S+1], err_code, err_line)."""
    n_max = 0
    for b in buf:
        if b == 45 or b == 112:  # '-' or 'p': at most one link each
            n_max += 1
    links = np.empty((n_max, 2), np.int64)
    poss = np.zeros(n_max, np.bool_)
    n_lines_max = 1
    for b in buf:
        if b == 10:
            n_lines_max += 1
    offsets = np.zeros(n_lines_max + 1, np.int64)
    n = 0
    line = 0
    state = 0  # 0 between links, 1 in i, 2 after the separator, 3 in j
    i = 0
    j = 0
    is_p = False
    line_has_bytes = False
    for b in buf:
        if b >= 48 and b <= 57:
            line_has_bytes = True
            d = b - 48
            if state == 0:
                i = d
                state = 1
            elif state == 1:
                i = i * 10 + d
            elif state == 2:
                j = d
                state = 3
            else:
                j = j * 10 + d
            if i > 1_000_000_000 or j > 1_000_000_000:
                return links[:0], poss[:0], offsets[:1], 3, line + 1
        elif b == 45 or b == 112:
            line_has_bytes = True
            if state != 1:
                return links[:0], poss[:0], offsets[:1], 2 if state == 2 else 1, line + 1
            if b == 112 and not allow_possible:
                return links[:0], poss[:0], offsets[:1], 4, line + 1
            is_p = b == 112
            state = 2
        elif b == 32 or b == 9 or b == 13 or b == 10:
            if state == 1 or state == 2:
                return links[:0], poss[:0], offsets[:1], 2, line + 1
            if state == 3:
                links[n, 0] = i
                links[n, 1] = j
                poss[n] = is_p
                n += 1
                state = 0
            if b == 10:
                line += 1
                offsets[line] = n
                line_has_bytes = False
            elif b != 13:
                line_has_bytes = True
        else:
            return links[:0], poss[:0], offsets[:1], 1, line + 1
    # a last line without its newline still counts
    if state == 1 or state == 2:
        return links[:0], poss[:0], offsets[:1], 2, line + 1
    if state == 3:
        links[n, 0] = i
        links[n, 1] = j
        poss[n] = is_p
        n += 1
    if line_has_bytes or state == 3:
        line += 1
        offsets[line] = n
    return links[:n], poss[:n], offsets[: line + 1], 0, 0


@numba.njit(cache=True)
def _format_bytes(links: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Pharaoh text (uint8, one line per sentence) of flat links."""
    out = np.empty(links.shape[0] * 24 + offsets.shape[0], np.uint8)
    digits = np.empty(20, np.uint8)
    p = 0
    for s in range(offsets.shape[0] - 1):
        for k in range(offsets[s], offsets[s + 1]):
            if k > offsets[s]:
                out[p] = 32
                p += 1
            for c in range(2):
                v = links[k, c]
                nd = 0
                while True:
                    digits[nd] = 48 + v % 10
                    nd += 1
                    v //= 10
                    if v == 0:
                        break
                for t in range(nd - 1, -1, -1):
                    out[p] = digits[t]
                    p += 1
                if c == 0:
                    out[p] = 45
                    p += 1
        out[p] = 10
        p += 1
    return out[:p]


def format_links(links: np.ndarray) -> str:
    """One Pharaoh line (0-based ``i-j``) from ``[L, 2]`` links, in the given order."""
    return " ".join(f"{int(i)}-{int(j)}" for i, j in np.asarray(links).reshape(-1, 2))


def parse_links(
    text: str, one_based: bool = False, path: str | Path | None = None, line: int | None = None
) -> np.ndarray:
    """Links ``[L, 2]`` int64 (0-based) of one Pharaoh line; ``ipj`` links are not allowed here."""
    flat, _, _ = parse_pharaoh(
        text.encode("utf-8"), one_based=one_based, possible=False, path=path, first_line=line or 1
    )
    return flat


def parse_gold_line(text: str, one_based: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """``(sure [S, 2], possible_only [P, 2])`` of one gold line (``i-j`` sure, ``ipj`` possible)."""
    flat, poss, _ = parse_pharaoh(text.encode("utf-8"), one_based=one_based, possible=True)
    return flat[~poss], flat[poss]


def parse_pharaoh(
    data: bytes,
    one_based: bool = False,
    possible: bool = False,
    path: str | Path | None = None,
    first_line: int = 1,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Parse Pharaoh text into ``(links [N, 2] 0-based, is_possible [N] bool, offsets [S + 1])``.

    Raises:
        WordorderError: a malformed line, naming ``path`` and the line.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    flat, poss, offsets, code, bad = _parse_bytes(buf, possible)
    if code:
        raise _line_error(data, bad, _ERRORS[code], path, first_line)
    if one_based:
        if len(flat) and flat.min() < 1:
            k = int(np.flatnonzero((flat < 1).any(axis=1))[0])
            bad = int(np.searchsorted(offsets, k, side="right"))
            raise _line_error(data, bad, "index 0 in a 1-based file", path, first_line)
        flat = flat - 1
    return flat, poss, offsets


def _line_error(
    data: bytes, line: int, what: str, path: str | Path | None, first_line: int
) -> WordorderError:
    lines = data.split(b"\n")
    shown = lines[line - 1].decode("utf-8", "replace")[:80] if line <= len(lines) else ""
    return WordorderError(f"{what}: {shown!r}", path=path, line=line + first_line - 1, hint=_HINT)


def _read_bytes(path: Path) -> bytes:
    if not path.is_file():
        raise WordorderError(
            "file not found", path=path, hint="check the path, or rerun the alignment step"
        )
    with gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb") as f:
        return f.read()


def read_pharaoh(
    path: str | Path,
    src_lens: Sequence[int] | np.ndarray | None = None,
    tgt_lens: Sequence[int] | np.ndarray | None = None,
    one_based: bool = False,
    possible: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read a whole file as ``(links [N, 2], is_possible [N], offsets [S + 1])``,
    checked if lengths are given."""
    path = Path(path)
    flat, poss, offsets = parse_pharaoh(
        _read_bytes(path), one_based=one_based, possible=possible, path=path
    )
    if src_lens is not None and tgt_lens is not None:
        check_ranges(flat, offsets, src_lens, tgt_lens, path=path)
    return flat, poss, offsets


def read_alignments(
    path: str | Path,
    src_lens: Sequence[int] | np.ndarray,
    tgt_lens: Sequence[int] | np.ndarray,
    one_based: bool = False,
) -> list[np.ndarray]:
    """Read a Pharaoh file into one ``[L, 2]`` int64 array of 0-based links per sentence.

    Raises:
        WordorderError: a malformed line, a link out of range, or a line count that differs
            from ``len(src_lens)``, naming the file and line.
    """
    flat, _, offsets = read_pharaoh(path, src_lens, tgt_lens, one_based=one_based)
    return unflatten(flat, offsets)


def format_pharaoh(flat: np.ndarray, offsets: np.ndarray) -> bytes:
    """Pharaoh text (0-based ``i-j``, one line per sentence) of flat links ``[N, 2]``
    with ``offsets [S + 1]``."""
    return _format_bytes(
        np.ascontiguousarray(flat, np.int64).reshape(-1, 2), np.asarray(offsets, np.int64)
    ).tobytes()


def write_pharaoh(path: str | Path, flat: np.ndarray, offsets: np.ndarray) -> None:
    """Atomically write flat links (0-based) as a Pharaoh file, one line per sentence."""
    raw = format_pharaoh(flat, offsets)
    with atomic_open(path, "wb") as f:
        f.write(gzip.compress(raw) if Path(path).suffix == ".gz" else raw)


def write_alignments(path: str | Path, links: Sequence[np.ndarray]) -> None:
    """Atomically write one Pharaoh line (0-based ``i-j``) per ``[L, 2]`` array."""
    write_pharaoh(path, *flatten(links))
