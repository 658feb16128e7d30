"""Permutation files and what the models read from them.

A ``.perm`` file holds one permutation per line, space-separated 0-based word indices, with
``reordered[k] = src[perm[k]]`` (an empty line for an empty sentence). From it and the
sentence's tokens and subword pieces come the preordered token line (for the "only
preordered" baselines), the preordered subword line, and the preordered position of every
subword of the *original* line (for preordering encodings), in one of two units:

- ``subword``: its position in the preordered subword sequence; all pieces of a word move
  with the word and keep their order inside it (a permutation of 0..P−1).
- ``word``: the preordered index of its word, shared by all pieces of the word (Kawara et
  al. 2021 preorder words, footnote 12: no BPE, so their clipping distance k counts words).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from wordorder.errors import WordorderError
from wordorder.io import atomic_paths, iter_lines, write_lines
from wordorder.text.subword import word_index


def format_permutation(perm: Sequence[int] | np.ndarray) -> str:
    return " ".join(str(int(i)) for i in perm)


def parse_permutation(
    line: str, n: int, path: str | Path | None = None, line_no: int | None = None
) -> np.ndarray:
    """Parse one line and check it is a permutation of 0..n-1.

    Raises:
        WordorderError: naming the file and line.
    """
    try:
        perm = np.array([int(x) for x in line.split()], dtype=np.int64)
    except ValueError:
        raise WordorderError(
            "a permutation line must hold integers separated by spaces", path=path, line=line_no
        ) from None
    if len(perm) != n or (n and not np.array_equal(np.sort(perm), np.arange(n))):
        raise WordorderError(
            f"not a permutation of the {n} words of the sentence: {line[:80]!r}",
            path=path,
            line=line_no,
            hint="the .perm file must be line-aligned with the tokenized source",
        )
    return perm


def read_permutations(path: str | Path, lengths: Sequence[int]) -> list[np.ndarray]:
    """Read a ``.perm`` file against the word counts of its sentences."""
    perms: list[np.ndarray] = []
    for k, line in enumerate(iter_lines(path), start=1):
        if k > len(lengths):
            break
        perms.append(parse_permutation(line, lengths[k - 1], path, k))
    if len(perms) != len(lengths):
        raise WordorderError(
            f"{len(perms)} permutations for {len(lengths)} sentences",
            path=path,
            hint="the .perm file must be line-aligned with the tokenized source",
        )
    return perms


def subword_positions(wi: Sequence[int] | np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Position of each original subword in the preordered subword sequence.

    Args:
        wi: [P] word index of each piece (non-decreasing, 0..n-1).
        perm: [n] word permutation.

    Returns:
        [P] int64; ``np.argsort`` of it orders the pieces as the preordered sentence.

    >>> subword_positions([0, 1, 1, 2], np.array([2, 1, 0])).tolist()   # a bc@@ d -> d bc a
    [3, 1, 2, 0]
    """
    wi = np.asarray(wi, dtype=np.int64)
    n = len(perm)
    count = np.bincount(wi, minlength=n)
    first = np.cumsum(count) - count  # first piece of each word in the original line
    new_first = np.empty(n, dtype=np.int64)
    new_first[perm] = np.cumsum(count[perm]) - count[perm]
    return new_first[wi] + (np.arange(len(wi)) - first[wi])


def word_positions(wi: Sequence[int] | np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Preordered index of the word of each original subword (pieces of a word share it).

    >>> word_positions([0, 1, 1, 2], np.array([2, 1, 0])).tolist()   # a bc@@ d -> d bc a
    [2, 1, 1, 0]
    """
    rank = np.empty(len(perm), dtype=np.int64)
    rank[perm] = np.arange(len(perm))
    return rank[np.asarray(wi, dtype=np.int64)]


POSITION_UNITS = ("subword", "word")


def write_preordered(
    perm_path: str | Path,
    tok_path: str | Path,
    bpe_path: str | Path,
    out_tok: str | Path,
    out_bpe: str | Path,
    out_positions: str | Path,
    unit: str = "subword",
) -> dict:
    """Write the preordered tokens, preordered pieces and piece positions of one split (atomically).

    ``unit``: the positions written, ``subword`` or ``word`` (see the module docstring).
    """
    return write_preordered_levels(
        [perm_path], tok_path, bpe_path, [(out_tok, out_bpe, out_positions)], unit
    )[0]


def write_preordered_levels(
    perm_paths: Sequence[str | Path],
    tok_path: str | Path,
    bpe_path: str | Path,
    outputs: Sequence[tuple[str | Path, str | Path, str | Path]],
    unit: str = "subword",
) -> list[dict]:
    """:func:`write_preordered` for several permutations of the same split (the swap-noise
    levels): ``outputs[i]`` = (tokens, pieces, positions) of ``perm_paths[i]``; the split is
    read once, and all files appear together or none."""
    if unit not in POSITION_UNITS:
        raise WordorderError(
            f"unknown position unit '{unit}'", hint=f"use one of {', '.join(POSITION_UNITS)}"
        )
    if not perm_paths or len(perm_paths) != len(outputs):
        raise WordorderError(
            f"{len(perm_paths)} permutation files for {len(outputs)} sets of outputs",
            hint="give one --out-tok, --out-bpe and --out-positions per --perm, in its order",
        )
    toks = [line.split() for line in iter_lines(tok_path)]
    bpes = [line.split() for line in iter_lines(bpe_path)]
    if len(toks) != len(bpes):
        raise WordorderError(
            f"{len(toks)} tokenized lines but {len(bpes)} subword lines in {bpe_path}",
            path=tok_path,
        )
    levels = [read_permutations(path, [len(t) for t in toks]) for path in perm_paths]
    stats = []
    with atomic_paths(*(path for paths in outputs for path in paths)) as temps:
        for n, perms in enumerate(levels):
            t_tok, t_bpe, t_pos = temps[3 * n : 3 * n + 3]
            moved = 0
            with (
                open(t_tok, "w", encoding="utf-8") as f_tok,
                open(t_bpe, "w", encoding="utf-8") as f_bpe,
                open(t_pos, "w", encoding="utf-8") as f_pos,
            ):
                for k, (tokens, pieces, perm) in enumerate(zip(toks, bpes, perms), start=1):
                    wi = word_index(pieces)
                    if (wi[-1] + 1 if wi else 0) != len(tokens):
                        raise WordorderError(
                            (
                                f"the subword line has {wi[-1] + 1 if wi else 0} words but the "
                                f"tokenized line {len(tokens)}"
                            ),
                            path=bpe_path,
                            line=k,
                        )
                    pos = subword_positions(wi, perm)
                    moved += int(np.any(perm != np.arange(len(perm))))
                    f_tok.write(" ".join(tokens[i] for i in perm) + "\n")
                    f_bpe.write(" ".join(pieces[i] for i in np.argsort(pos)) + "\n")
                    f_pos.write(
                        format_permutation(pos if unit == "subword" else word_positions(wi, perm))
                        + "\n"
                    )
            stats.append({"sentences": len(perms), "reordered": moved})
    return stats


def write_permutations(path: str | Path, perms: Iterable[np.ndarray]) -> None:
    write_lines(path, (format_permutation(p) for p in perms))
