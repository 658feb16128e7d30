"""Joint subword model (sentencepiece BPE) over whitespace-tokenized text.

Conventions that the rest of the project relies on:

* Special ids are fixed: ``PAD_ID = 0``, ``UNK_ID = 1``, ``BOS_ID = 2``, ``EOS_ID = 3``.
* Input is already word-tokenized (one space between tokens). Every token is a word for
  sentencepiece: a piece never spans two tokens, and the first piece of every token starts
  with ``▁`` (U+2581). :func:`word_index` relies on this to project word-level annotations
  onto subwords.
* No normalisation (rule ``identity``): decoding gives back exactly the tokens, including
  full-width characters that NFKC would have changed.
* Byte fallback: characters outside the vocabulary become ``<0xNN>`` byte pieces, never
  ``<unk>``. Because the 256 byte pieces are part of the vocabulary, a model has at least
  ``4 + 256 + (number of distinct characters kept)`` entries; a smaller ``vocab_size`` is
  raised to that minimum (with a warning). ``hard_vocab_limit=False`` lets a tiny corpus
  train with a ``vocab_size`` larger than it can fill.
* Word-level models (``model_type: word``) have no byte fallback: each token is one piece
  (``▁`` + the token), a token outside the vocabulary maps to ``<unk>``. Sentencepiece would
  merge a run of unknown tokens into one piece, so these models encode token by token.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path

from wordorder.errors import WordorderError
from wordorder.io import atomic_open, iter_lines
from wordorder.progress import progress as progress_bar
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID, UNK_ID  # one definition project-wide

SPECIAL_IDS = frozenset({PAD_ID, UNK_ID, BOS_ID, EOS_ID})

#: Marks the start of a word in sentencepiece pieces.
WORD_START = "\u2581"
#: How an unknown piece reads in decoded text (the trainer's ``unk_surface``).
UNK_SURFACE = "\u2047"

__all__ = [
    "PAD_ID",
    "UNK_ID",
    "BOS_ID",
    "EOS_ID",
    "SPECIAL_IDS",
    "WORD_START",
    "SubwordModel",
    "word_index",
    "encode_file",
]

_ENCODE_BATCH = 8192


def _check_tokens(tokens: Sequence[str]) -> None:
    for tok in tokens:
        if not tok or WORD_START in tok or any(ch.isspace() for ch in tok):
            raise WordorderError(
                f"cannot subword-encode the token {tok!r}: tokens must be non-empty, "
                f"without whitespace and without {WORD_START!r} (U+2581)",
                hint="tokenize the text first; U+2581 is reserved as the word-start mark",
            )


def word_index(pieces: Sequence[str]) -> list[int]:
    """For each piece, the 0-based index of the word (token) it belongs to.

    A piece starting with ``▁`` starts a new word; the first piece always belongs to word
    0 even without the mark.

    >>> word_index(["▁The", "▁un", "believ", "able", "▁cat"])
    [0, 1, 1, 1, 2]
    """
    out: list[int] = []
    idx = -1
    for piece in pieces:
        if idx < 0 or piece.startswith(WORD_START):
            idx += 1
        out.append(idx)
    return out


class SubwordModel:
    """A trained sentencepiece model working on lists of tokens.

    Args:
        path: the ``.model`` file.
    """

    def __init__(self, path: str | Path) -> None:
        import sentencepiece as spm

        self.path = Path(path)
        if not self.path.is_file():
            raise WordorderError(
                "subword model not found",
                path=self.path,
                hint="train it first (train_sentencepiece)",
            )
        self._sp = spm.SentencePieceProcessor()
        try:
            self._sp.Load(str(self.path))
        except (OSError, RuntimeError) as e:
            raise WordorderError(f"not a sentencepiece model ({e})", path=self.path) from None
        specials = (self._sp.pad_id(), self._sp.unk_id(), self._sp.bos_id(), self._sp.eos_id())
        if specials != (PAD_ID, UNK_ID, BOS_ID, EOS_ID):
            raise WordorderError(
                (
                    f"special ids (pad, unk, bos, eos) are {specials}, expected "
                    f"{(PAD_ID, UNK_ID, BOS_ID, EOS_ID)}"
                ),
                path=self.path,
                hint="retrain the model with wordorder's train_sentencepiece",
            )
        # byte pieces follow the four specials in every model trained with byte fallback
        self.word_level = self._sp.get_piece_size() > 4 and not self._sp.is_byte(4)

    @property
    def vocab_size(self) -> int:
        return int(self._sp.get_piece_size())

    def __len__(self) -> int:
        return self.vocab_size

    def __repr__(self) -> str:
        return f"SubwordModel({str(self.path)!r}, vocab_size={self.vocab_size})"

    # -- encoding ---------------------------------------------------------------------
    def encode(self, tokens: Sequence[str]) -> list[str]:
        """Tokens -> pieces; every token's first piece starts with ``▁``."""
        _check_tokens(tokens)
        if not tokens:
            return []
        if self.word_level:
            return [WORD_START + t for t in tokens]
        return list(self._sp.encode(" ".join(tokens), out_type=str))

    def encode_ids(self, tokens: Sequence[str]) -> list[int]:
        """Tokens -> piece ids (no BOS/EOS added)."""
        _check_tokens(tokens)
        if not tokens:
            return []
        if self.word_level:
            return [int(self._sp.piece_to_id(WORD_START + t)) for t in tokens]
        return list(self._sp.encode(" ".join(tokens), out_type=int))

    def encode_batch(self, lines: Sequence[str], out_type: type = str) -> list[list]:
        """Encode many whitespace-tokenized lines at once (sentencepiece's batch path)."""
        lines = [" ".join(line.split()) for line in lines]
        for line in lines:
            if WORD_START in line:
                _check_tokens(line.split())
        if self.word_level:
            pieces = [_word_pieces(line) for line in lines]
            if out_type is str:
                return pieces
            return [[int(i) for i in self._sp.piece_to_id(p)] if p else [] for p in pieces]
        return self._sp.encode(lines, out_type=out_type)

    # -- decoding ---------------------------------------------------------------------
    def decode_ids(self, ids: Sequence[int]) -> list[str]:
        """Piece ids -> tokens. PAD/BOS/EOS are dropped; an UNK shows as ``⁇``."""
        ids = [int(i) for i in ids if int(i) not in (PAD_ID, BOS_ID, EOS_ID)]
        if not ids:
            return []
        n = self.vocab_size
        bad = [i for i in ids if not 0 <= i < n]
        if bad:
            raise ValueError(f"piece ids out of range [0, {n}): {bad[:5]}")
        if self.word_level:  # an unknown is a word of its own, not glued to its neighbour
            pieces = self._sp.id_to_piece(ids)
            return [UNK_SURFACE if i == UNK_ID else p[1:] for i, p in zip(ids, pieces, strict=True)]
        return self._sp.decode(ids).split()

    def decode_pieces(self, pieces: Sequence[str]) -> list[str]:
        """Pieces -> tokens (inverse of :meth:`encode`)."""
        pieces = [p for p in pieces if p]
        if not pieces:
            return []
        if self.word_level:  # the pieces hold the words, unknown ones too
            return [p.removeprefix(WORD_START) for p in pieces]
        return self._sp.decode_pieces(list(pieces)).split()

    def piece_to_id(self, piece: str) -> int:
        return int(self._sp.piece_to_id(piece))

    def id_to_piece(self, i: int) -> str:
        if not 0 <= int(i) < self.vocab_size:
            raise ValueError(f"piece id {i} out of range [0, {self.vocab_size})")
        return str(self._sp.id_to_piece(int(i)))


def _word_pieces(line: str) -> list[str]:
    """A word model's pieces of a whitespace-normalised line: ``▁`` before every token."""
    return (WORD_START + line.replace(" ", " " + WORD_START)).split(" ") if line else []


def _batches(it: Iterable[str], size: int) -> Iterator[list[str]]:
    it = iter(it)
    while batch := list(islice(it, size)):
        yield batch


def encode_file(inp: Path, out: Path, model: SubwordModel, progress: bool = True) -> int:
    """Write one line of space-separated pieces per line of ``inp`` (atomic, line-preserving).

    Returns the number of lines. Lines are encoded in batches through sentencepiece's
    batch encoder.
    """
    inp, out = Path(inp), Path(out)
    n = 0
    bar = progress_bar(desc=f"spm-encode {inp.name}", enabled=progress)
    lines = (" ".join(line.split()) for line in iter_lines(inp))
    with bar, atomic_open(out) as f:
        for batch in _batches(lines, _ENCODE_BATCH):
            for k, line in enumerate(batch):
                if WORD_START in line:
                    try:
                        _check_tokens(line.split())
                    except WordorderError as e:
                        raise WordorderError(
                            e.message, path=inp, line=n + k + 1, hint=e.hint
                        ) from None
            if model.word_level:
                encoded = [_word_pieces(line) for line in batch]
            else:
                encoded = model._sp.encode(batch, out_type=str)
            f.write("".join(" ".join(pieces) + "\n" for pieces in encoded))
            n += len(batch)
            bar.update(len(batch))
    return n
