"""Source-side inputs besides the subword ids, read from the syntax and preordering stages.

Every file has one line per sentence and one item per source subword (the stages project
word-level annotations onto subwords: all pieces of a word share its tag, preordered
positions keep the subword order inside a word):

- ``pos``, ``bieo``, ``dep``: tags (``{split}.pos.{src}`` ...), mapped to ids by a
  :class:`FeatureVocab` built on the training file and stored in the checkpoint.
- ``order``: ``{split}.positions.{src}`` of a preordering method, the preordered position
  of each subword: in subwords (a permutation of 0..n−1) or in words (``preorder.positions:
  word``: the preordered index of its word, equal on the pieces of a word, 0..m−1 for m words).
- ``word``, ``head``: the dependency tree (``{split}.word.{src}``, ``{split}.head.{src}`` of
  the syntax stage): the word index of each subword (0, 0, 1, ... — non-decreasing, no gaps)
  and the 1-based head of its word (0 = root), the same on all pieces of a word.

The source EOS gets its own tag id (``EOS``), the position after the last (max + 1), one word
more, and head 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from wordorder.errors import WordorderError
from wordorder.io import read_lines
from wordorder.models.options import CATEGORICAL_FEATURES, INTEGER_FEATURES

PAD, UNK, EOS = 0, 1, 2
SPECIALS = ["<pad>", "<unk>", "</s>"]
KNOWN = (*CATEGORICAL_FEATURES, *INTEGER_FEATURES)


class FeatureVocab:
    """Tag ↔ id for one categorical feature: the specials, then tags by frequency."""

    def __init__(self, tags: Sequence[str]) -> None:
        self.itos = list(SPECIALS) + [t for t in tags if t not in SPECIALS]
        self.stoi = {t: i for i, t in enumerate(self.itos)}

    @classmethod
    def from_itos(cls, itos: Sequence[str]) -> FeatureVocab:
        """The vocabulary stored in a checkpoint (``itos`` includes the specials)."""
        return cls(list(itos)[len(SPECIALS) :])

    @classmethod
    def build(cls, lines: Sequence[Sequence[str]]) -> FeatureVocab:
        counts = Counter(tag for line in lines for tag in line)
        return cls([t for t, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))])

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tags: Sequence[str]) -> list[int]:
        return [self.stoi.get(t, UNK) for t in tags]


def check_feature_files(
    needed: set[str], given: Mapping[str, object], path: str | Path | None = None
) -> None:
    """The feature files a step got must be exactly those its model needs."""
    if set(given) != needed:
        raise WordorderError(
            (
                f"the model needs the source features {sorted(needed) or 'none'} but got "
                f"{sorted(given) or 'none'}"
            ),
            path=path,
            hint="the variant's model options and its "
            "data inputs disagree: check configs/variants.yaml and the checkpoint used",
        )


def read_feature(
    name: str, path: str | Path, lengths: Sequence[int]
) -> list[list[str]] | list[list[int]]:
    """Read one feature file and check it against the subword counts of its source file.

    Returns tag lists (categorical features) or position lists (``order``).
    """
    if name not in KNOWN:
        raise WordorderError(
            f"unknown source feature '{name}'", hint=f"known features: {', '.join(KNOWN)}"
        )
    lines = read_lines(path)
    if len(lines) != len(lengths):
        raise WordorderError(
            f"{len(lines)} lines of '{name}' but {len(lengths)} source sentences",
            path=path,
            hint="the feature file and the subword file come from different runs: rerun the step",
        )
    out: list = []
    for number, (line, n) in enumerate(zip(lines, lengths), start=1):
        items = line.split()
        if len(items) != n:
            raise WordorderError(
                f"{len(items)} '{name}' items for {n} source subwords",
                path=path,
                line=number,
                hint="the feature file and the subword file come from different runs",
            )
        if name in INTEGER_FEATURES:
            try:
                values = [int(x) for x in items]
            except ValueError:
                raise WordorderError(
                    f"'{name}' items must be integers", path=path, line=number
                ) from None
            problem = _integer_problem(name, values)
            if problem:
                raise WordorderError(
                    problem,
                    path=path,
                    line=number,
                    hint="the file is corrupt or from another run: rerun the step that wrote it",
                )
            out.append(values)
        else:
            out.append(items)
    return out


def _integer_problem(name: str, values: list[int]) -> str | None:
    """What is wrong with one line of an integer feature, or None."""
    n = len(values)
    if name == "order":
        # Subword positions are a permutation; word positions repeat on the pieces of a word,
        # which are adjacent in the line: either way every value occurs in one run and together
        # they are 0..m−1.
        runs = [v for k, v in enumerate(values) if k == 0 or values[k - 1] != v]
        if sorted(runs) != list(range(len(runs))):
            return (
                f"positions are neither a permutation of 0..{n - 1} nor word positions (0..m−1 "
                "for the m words, equal on adjacent pieces)"
            )
    if name == "word" and any(b - a not in (0, 1) for a, b in zip([-1, *values], values)):
        return "word indices must start at 0 and grow by 0 or 1 from one subword to the next"
    if name == "head" and any(h < 0 for h in values):
        return "heads must be non-negative (0 = root)"
    return None


def load_features(
    files: Mapping[str, str | Path],
    sources: Sequence[Sequence[int]],
    vocabs: dict[str, FeatureVocab] | None = None,
) -> tuple[dict[str, list[list[int]]], dict[str, FeatureVocab]]:
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
        if name in INTEGER_FEATURES:
            feats[name] = raw  # type: ignore[assignment]
            continue
        if name not in vocabs:
            if not build:
                raise WordorderError(
                    f"the model has no vocabulary for the source feature '{name}'", path=path
                )
            vocabs[name] = FeatureVocab.build(raw)  # type: ignore[arg-type]
        feats[name] = [vocabs[name].encode(tags) for tags in raw]  # type: ignore[arg-type]
    return feats, vocabs


def vocab_sizes(vocabs: Mapping[str, FeatureVocab]) -> dict[str, int]:
    return {name: len(v) for name, v in vocabs.items()}
