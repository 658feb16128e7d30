"""Training the joint sentencepiece model, by the conventions of :mod:`wordorder.text.subword`.

A seeded sample of the tokenized training text goes to sentencepiece's trainer with the
project's fixed special ids, no normalisation and byte fallback; the model is written atomically
and its trainer log kept beside it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import shutil
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from wordorder.errors import WordorderError
from wordorder.io import iter_lines
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID, UNK_ID
from wordorder.text.subword import UNK_SURFACE

log = logging.getLogger(__name__)

_TOO_SMALL = re.compile(r"Vocabulary size is smaller than required_chars\. (\d+) vs (\d+)")


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
    ``<model_prefix>.log``. Deterministic given ``seed`` and the inputs: the ``.vocab`` and the
    ``.model`` are the same bytes wherever they are made (the training paths sentencepiece
    stores in the model are replaced by file names), which the run ledger's digests rely on.

    Args:
        inputs: tokenized text files (``.gz`` ok); all of them are used jointly.
        model_prefix: output prefix, e.g. ``work/spm/en-ja`` gives ``work/spm/en-ja.model``.
        vocab_size: target vocabulary size (soft: see the module docstring).
        model_type: ``bpe`` or ``unigram`` (``char`` also accepted), or ``word``: one piece
            per token, the ``vocab_size`` most frequent tokens, every other token ``<unk>``
            (a word-level vocabulary as the papers before subwords had; no byte fallback).
        character_coverage: share of characters covered by the vocabulary; the rest go
            through byte fallback (not read by ``word``).
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
            byte_fallback=model_type != "word",
            hard_vocab_limit=False,
            pad_id=PAD_ID,
            unk_id=UNK_ID,
            bos_id=BOS_ID,
            eos_id=EOS_ID,
            unk_surface=UNK_SURFACE,  # no surrounding spaces: an unknown stays inside its word
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
        _forget_paths(Path(f"{tmp_prefix}.model"), model_prefix.name)
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


def _forget_paths(model: Path, name: str) -> None:
    """Replace the training paths sentencepiece records in a model (its corpus and output
    prefix, under the results folder) by bare file names, so that one training gives one file
    in every checkout. protobuf, which reads the model, comes with stanza."""
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
    proto.ParseFromString(model.read_bytes())
    spec = proto.trainer_spec
    spec.input[:] = [Path(p).name for p in spec.input]
    spec.model_prefix = name
    model.write_bytes(proto.SerializeToString())
