"""Source-side inputs besides the subword ids, read from the syntax and preordering stages.

Every file has one line per sentence and one item per source subword (the stages project
word-level annotations onto subwords: all pieces of a word share its tag, preordered
positions keep the subword order inside a word):

- ``pos``, ``bieo``, ``dep``: tags (``{split}.pos.{src}`` ...), mapped to ids by a
  :class:`FeatureVocab` built on the training file and stored in the checkpoint.
- ``order``: ``{split}.positions.{src}`` of a preordering method, the position of each
  subword in the preordered sentence (a permutation of 0..n−1).

The source EOS gets its own tag id (``EOS``) and the position n.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import torch
from torch import Tensor

from wordorder.errors import WordorderError
from wordorder.io import read_lines

PAD, UNK, EOS = 0, 1, 2
SPECIALS = ["<pad>", "<unk>", "</s>"]
CATEGORICAL = ("pos", "bieo", "dep")
KNOWN = (*CATEGORICAL, "order")


class FeatureVocab:
    """Tag ↔ id for one categorical feature: the specials, then tags by frequency."""

    def __init__(self, tags: Sequence[str]) -> None:
        self.itos = list(SPECIALS) + [t for t in tags if t not in SPECIALS]
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def build(cls, lines: Sequence[Sequence[str]]) -> FeatureVocab:
        counts = Counter(tag for line in lines for tag in line)
        return cls([t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tags: Sequence[str]) -> list[int]:
        return [self.stoi.get(t, UNK) for t in tags]


def read_feature(name: str, path: str | Path, lengths: Sequence[int]) -> list[list[str]] | list[list[int]]:
    """Read one feature file and check it against the subword counts of its source file.

    Returns tag lists (categorical features) or position lists (``order``).
    """
    if name not in KNOWN:
        raise WordorderError(f"unknown source feature '{name}'", hint=f"known features: {', '.join(KNOWN)}")
    lines = read_lines(path)
    if len(lines) != len(lengths):
        raise WordorderError(f"{len(lines)} lines of '{name}' but {len(lengths)} source sentences", path=path,
                             hint="the feature file and the subword file come from different runs: rerun the step")
    out: list = []
    for number, (line, n) in enumerate(zip(lines, lengths), start=1):
        items = line.split()
        if len(items) != n:
            raise WordorderError(f"{len(items)} '{name}' items for {n} source subwords", path=path, line=number,
                                 hint="the feature file and the subword file come from different runs")
        if name == "order":
            try:
                positions = [int(x) for x in items]
            except ValueError:
                raise WordorderError("positions must be integers", path=path, line=number) from None
            if sorted(positions) != list(range(n)):
                raise WordorderError(f"positions are not a permutation of 0..{n - 1}", path=path, line=number)
            out.append(positions)
        else:
            out.append(items)
    return out


def load_features(files: Mapping[str, str | Path], sources: Sequence[Sequence[int]],
                  vocabs: dict[str, FeatureVocab] | None = None) -> tuple[dict[str, list[list[int]]], dict[str, FeatureVocab]]:
    """Read every feature of ``files`` (name → path) for the id lists ``sources``.

    ``vocabs``: the vocabularies of the checkpoint (decoding, dev data); None builds them
    from these files (the training data). Returns the id lists per feature and the vocabularies.
    """
    lengths = [len(s) for s in sources]
    build = vocabs is None
    vocabs = dict(vocabs) if vocabs is not None else {}
    feats: dict[str, list[list[int]]] = {}
    for name, path in files.items():
        raw = read_feature(name, path, lengths)
        if name == "order":
            feats[name] = raw  # type: ignore[assignment]
            continue
        if name not in vocabs:
            if not build:
                raise WordorderError(f"the model has no vocabulary for the source feature '{name}'", path=path)
            vocabs[name] = FeatureVocab.build(raw)  # type: ignore[arg-type]
        feats[name] = [vocabs[name].encode(tags) for tags in raw]  # type: ignore[arg-type]
    return feats, vocabs


def pad_feature(name: str, seqs: Sequence[Sequence[int]], width: int | None = None) -> Tensor:
    """Pad one feature of a batch like the source (ids + EOS): (B, width) LongTensor.

    The EOS position gets ``EOS`` (tags) or n (``order``); padding is 0.
    """
    rows = [list(s) + [len(s) if name == "order" else EOS] for s in seqs]
    width = max((len(r) for r in rows), default=0) if width is None else width
    out = torch.full((len(rows), width), PAD, dtype=torch.long)
    for i, r in enumerate(rows):
        if r:
            out[i, : len(r)] = torch.as_tensor(r, dtype=torch.long)
    return out


def vocab_sizes(vocabs: Mapping[str, FeatureVocab]) -> dict[str, int]:
    return {name: len(v) for name, v in vocabs.items()}
