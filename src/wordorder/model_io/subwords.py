"""Subword-encoded text as model ids: the subword models of a checkpoint's two sides, and
lines of pieces mapped to ids (shared by training, decoding and the analyses)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from wordorder.errors import WordorderError
from wordorder.text.subword import SPECIAL_IDS, WORD_START, SubwordModel


def read_ids(lines: list[str], spm: SubwordModel, path: Path) -> list[list[int]]:
    """Map lines of space-separated pieces to ids; a piece unknown to the model is an error,
    except under a word-level model, where a word outside the vocabulary is ``<unk>``."""
    unk = spm.piece_to_id("<unk>")
    out = []
    for number, line in enumerate(lines, start=1):
        pieces = line.split()
        ids = [spm.piece_to_id(p) for p in pieces]
        if unk in ids and "<unk>" not in pieces and not spm.word_level:
            bad = pieces[ids.index(unk)]
            raise WordorderError(
                f"subword '{bad}' is not in the vocabulary {spm.path}",
                path=path,
                line=number,
                hint="the file was encoded with another subword model: rerun its encode step",
            )
        out.append(ids)
    return out


def subword_models(spm: Path, spm_tgt: Path | None) -> tuple[SubwordModel, SubwordModel]:
    """The source and target subword models: one joint model, or one per side."""
    src = SubwordModel(spm)
    return src, (src if spm_tgt is None or Path(spm_tgt) == Path(spm) else SubwordModel(spm_tgt))


def word_starts(spm: SubwordModel) -> list[bool]:
    """One flag per id of ``spm``: does the piece begin a word? Pieces marked with ``▁`` do (the
    first piece of every token has it, see :mod:`wordorder.text.subword`), and so do the special
    ids (the source EOS is a word of its own). A model with ``position_unit: word`` numbers its
    source words with these (``TransformerModel.set_word_starts``), the same words as
    :func:`~wordorder.text.subword.word_index` finds in a line of pieces."""
    return [
        i in SPECIAL_IDS or spm.id_to_piece(i).startswith(WORD_START) for i in range(spm.vocab_size)
    ]


def vocab_digest(spm: SubwordModel) -> str:
    """sha256 of the model's pieces in id order: what a checkpoint's ids mean. Another model
    of the same size (another experiment's, retrained on other text) gives other pieces; the
    same pieces in another file (a moved results folder) give the same digest."""
    pieces = [spm.id_to_piece(i) for i in range(spm.vocab_size)]
    return hashlib.sha256(json.dumps(pieces, ensure_ascii=False).encode("utf-8")).hexdigest()
