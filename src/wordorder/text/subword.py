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
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import shutil
import sys
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import IO, Any

from wordorder.errors import WordorderError
from wordorder.io import atomic_open, iter_lines
from wordorder.progress import progress as progress_bar
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID, UNK_ID  # one definition project-wide

log = logging.getLogger(__name__)

SPECIAL_IDS = frozenset({PAD_ID, UNK_ID, BOS_ID, EOS_ID})

#: Marks the start of a word in sentencepiece pieces.
WORD_START = "\u2581"

__all__ = [
    "PAD_ID",
    "UNK_ID",
    "BOS_ID",
    "EOS_ID",
    "SPECIAL_IDS",
    "WORD_START",
    "train_sentencepiece",
    "SubwordModel",
    "word_index",
    "encode_file",
]

_TOO_SMALL = re.compile(r"Vocabulary size is smaller than required_chars\. (\d+) vs (\d+)")
_ENCODE_BATCH = 8192


def _sample_lines(inputs: Sequence[Path], max_sentences: int | None, seed: int) -> Iterator[str]:
    """All non-empty lines of ``inputs`` in order, or a seeded uniform sample of them.

    The sample (reservoir sampling, kept in input order) depends only on the inputs,
    ``max_sentences`` and ``seed``.
    """
    lines = (line for path in inputs for line in iter_lines(path) if line.strip())
    if max_sentences is None:
        yield from lines
        return
    rng = random.Random(seed)
    reservoir: list[tuple[int, str]] = []
    for i, line in enumerate(lines):
        if i < max_sentences:
            reservoir.append((i, line))
        else:
            j = rng.randint(0, i)
            if j < max_sentences:
                reservoir[j] = (i, line)
    reservoir.sort()
    for _, line in reservoir:
        yield line


@contextlib.contextmanager
def _stderr_to(stream: IO) -> Iterator[None]:
    """Send everything written to file descriptor 2 (sentencepiece's C++ log) to ``stream``."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        os.dup2(stream.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def train_sentencepiece(
    inputs: Sequence[Path],
    model_prefix: Path,
    vocab_size: int,
    model_type: str = "bpe",
    character_coverage: float = 0.9995,
    seed: int = 1,
    max_sentences: int | None = None,
) -> Path:
    """Train a joint sentencepiece model on whitespace-tokenized ``inputs``.

    Writes ``<model_prefix>.model`` and ``<model_prefix>.vocab`` atomically (trained under a
    temporary prefix, then renamed, ``.model`` last) and the trainer's log to
    ``<model_prefix>.log``. Deterministic given ``seed`` and the inputs: the ``.vocab`` is
    identical, and so is the ``.model`` byte for byte when ``model_prefix`` is the same
    (sentencepiece stores the training paths in it).

    Args:
        inputs: tokenized text files (``.gz`` ok); all of them are used jointly.
        model_prefix: output prefix, e.g. ``work/spm/en-ja`` gives ``work/spm/en-ja.model``.
        vocab_size: target vocabulary size (soft: see the module docstring).
        model_type: ``bpe`` or ``unigram`` (``char``/``word`` also accepted).
        character_coverage: share of characters covered by the vocabulary; the rest go
            through byte fallback.
        seed: seeds the sentence sample and sentencepiece's random generator.
        max_sentences: train on a seeded sample of at most this many lines (all if None).

    Returns:
        The path of the ``.model`` file.
    """
    import sentencepiece as spm

    inputs = [Path(p) for p in inputs]
    model_prefix = Path(model_prefix)
    if not inputs:
        raise WordorderError("no input files to train the subword model on")
    if model_type not in {"bpe", "unigram", "char", "word"}:
        raise WordorderError(
            f"unknown sentencepiece model_type {model_type!r}",
            hint="use one of: bpe, unigram, char, word",
        )
    if int(vocab_size) < 1:
        raise WordorderError(f"vocab_size must be positive, got {vocab_size}")
    if not 0.0 < float(character_coverage) <= 1.0:
        raise WordorderError(f"character_coverage must be in (0, 1], got {character_coverage}")
    if max_sentences is not None and int(max_sentences) < 1:
        raise WordorderError(f"max_sentences must be positive, got {max_sentences}")

    model_prefix.parent.mkdir(parents=True, exist_ok=True)
    # A fixed scratch name (not mkdtemp): sentencepiece records the input and prefix paths
    # inside the .model, so a fixed name keeps the file byte-identical between runs.
    tmpdir = model_prefix.parent / f".{model_prefix.name}.spm-train"
    shutil.rmtree(tmpdir, ignore_errors=True)
    tmpdir.mkdir()
    try:
        corpus = tmpdir / "train.txt"
        n_lines = 0
        with open(corpus, "w", encoding="utf-8", newline="\n") as f:
            for line in _sample_lines(inputs, max_sentences, seed):
                f.write(line)
                f.write("\n")
                n_lines += 1
        if n_lines == 0:
            raise WordorderError(
                "the subword training data are empty",
                path=inputs[0],
                hint="check that the tokenized training files have text in them",
            )

        tmp_prefix = tmpdir / model_prefix.name
        log_path = tmpdir / "train.log"
        options: dict[str, Any] = dict(  # the trainer's keyword options, of mixed types
            input=str(corpus),
            model_prefix=str(tmp_prefix),
            vocab_size=int(vocab_size),
            model_type=model_type,
            character_coverage=float(character_coverage),
            input_sentence_size=0,  # sampling, if any, was done above with our own seed
            shuffle_input_sentence=False,
            normalization_rule_name="identity",
            remove_extra_whitespaces=True,
            add_dummy_prefix=True,
            split_by_whitespace=True,
            byte_fallback=True,
            hard_vocab_limit=False,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            unk_surface="\u2047",  # no surrounding spaces: an unknown stays inside its word
            # BPE merges are deterministic whatever the thread count; unigram EM is not.
            num_threads=min(8, os.cpu_count() or 1) if model_type == "bpe" else 1,
        )
        spm.set_random_generator_seed(int(seed))
        with open(log_path, "w", encoding="utf-8") as logf, _stderr_to(logf):
            try:
                spm.SentencePieceTrainer.train(**options)
            except RuntimeError as e:
                m = _TOO_SMALL.search(str(e))
                if not m:
                    raise WordorderError(
                        f"sentencepiece training failed: {e}",
                        path=model_prefix,
                        hint=f"see the trainer log {model_prefix}.log",
                    ) from None
                minimum = int(m.group(2))
                log.warning(
                    "vocab_size %d is below the minimum %d for this corpus with byte "
                    "fallback (4 specials + 256 bytes + characters): using %d",
                    int(vocab_size),
                    minimum,
                    minimum,
                )
                options["vocab_size"] = minimum
                spm.set_random_generator_seed(int(seed))
                spm.SentencePieceTrainer.train(**options)
        shutil.copyfile(log_path, Path(f"{model_prefix}.log"))

        model_path = Path(f"{model_prefix}.model")
        os.replace(Path(f"{tmp_prefix}.vocab"), Path(f"{model_prefix}.vocab"))
        os.replace(Path(f"{tmp_prefix}.model"), model_path)
    except BaseException:
        # keep the trainer log for debugging failures
        if (tmpdir / "train.log").exists():
            shutil.copyfile(tmpdir / "train.log", Path(f"{model_prefix}.log"))
        raise
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return model_path


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
        return list(self._sp.encode(" ".join(tokens), out_type=str))

    def encode_ids(self, tokens: Sequence[str]) -> list[int]:
        """Tokens -> piece ids (no BOS/EOS added)."""
        _check_tokens(tokens)
        if not tokens:
            return []
        return list(self._sp.encode(" ".join(tokens), out_type=int))

    def encode_batch(self, lines: Sequence[str], out_type: type = str) -> list[list]:
        """Encode many whitespace-tokenized lines at once (sentencepiece's batch path)."""
        lines = [" ".join(line.split()) for line in lines]
        for line in lines:
            if WORD_START in line:
                _check_tokens(line.split())
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
        return self._sp.decode(ids).split()

    def decode_pieces(self, pieces: Sequence[str]) -> list[str]:
        """Pieces -> tokens (inverse of :meth:`encode`)."""
        pieces = [p for p in pieces if p]
        if not pieces:
            return []
        return self._sp.decode_pieces(list(pieces)).split()

    def piece_to_id(self, piece: str) -> int:
        return int(self._sp.piece_to_id(piece))

    def id_to_piece(self, i: int) -> str:
        if not 0 <= int(i) < self.vocab_size:
            raise ValueError(f"piece id {i} out of range [0, {self.vocab_size})")
        return str(self._sp.id_to_piece(int(i)))


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
            encoded = model._sp.encode(batch, out_type=str)
            f.write("".join(" ".join(pieces) + "\n" for pieces in encoded))
            n += len(batch)
            bar.update(len(batch))
    return n
