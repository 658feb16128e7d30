"""Keep the dev and test sentences out of training.

Corpora repeat themselves (Bible verses, subtitles, boilerplate), and official test sets are
sometimes part of a crawled training corpus. A test sentence seen in training measures
memory, not translation; so a training pair is removed when its source or its target side
occurs in any dev or test set, held out or external. Held-out sets are drawn from the
training corpus itself, so what goes is every *other* copy of a held-out sentence.

Sentences are compared on the tokenized text in one Unicode normal form (NFC: a decomposed
copy, ``e`` + U+0301 for ``é``, is the same sentence) with whitespace normalised (runs of spaces
and tabs, leading and trailing space do not count); case and punctuation do. A removed pair is
counted under the first reason that applies: ``pair`` (the same source and target as a
dev/test pair), ``source`` (its source side occurs in a dev/test set), ``target``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

REASONS = ("pair", "source", "target")


def _norm(line: str) -> str:
    return " ".join(unicodedata.normalize("NFC", line).split())


def remove_overlap(
    train: Sequence[int], src: Sequence[str], tgt: Sequence[str], held: Iterable[tuple[str, str]]
) -> tuple[list[int], dict[str, int]]:
    """The training line numbers ``train`` (into ``src``/``tgt``) without the pairs that overlap
    the dev/test pairs ``held``, and the counts per reason (plus ``removed``, their sum).

    Hash sets of the dev/test sentences, one pass over training: linear in the corpus size.

    >>> remove_overlap(
    ...     [0, 1, 2, 3],
    ...     ["a b", "c", "a  b ", "d"],
    ...     ["x", "y", "z", "w"],
    ...     [("a b", "x"), ("e", "y")],
    ... )
    ([3], {'pair': 1, 'source': 1, 'target': 1, 'removed': 3})
    """
    pairs, sources, targets = set(), set(), set()
    for s, t in held:
        s, t = _norm(s), _norm(t)
        pairs.add((s, t))
        sources.add(s)
        targets.add(t)
    counts = dict.fromkeys(REASONS, 0)
    kept = []
    for i in train:
        s, t = _norm(src[i]), _norm(tgt[i])
        if s in sources:
            counts["pair" if (s, t) in pairs else "source"] += 1
        elif t in targets:
            counts["target"] += 1
        else:
            kept.append(i)
    counts["removed"] = len(train) - len(kept)
    return kept, counts
