"""Exchange word clustering: objective, local optimality, separable groups, determinism, files."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.errors import WordorderError
from wordorder.preorder.wordclass import (
    classes_of,
    cluster_words,
    read_word_classes,
    train_word_classes,
    write_word_classes,
)


def objective(sentences, classes):
    """F = Σ f(N(c,d)) − 2 Σ f(N(c)) with <s> around every sentence, counted plainly."""
    pairs, unigrams = Counter(), Counter()
    for s in sentences:
        if s:
            cl = ["<s>"] + [classes[w] for w in s] + ["<s>"]
            pairs.update(zip(cl, cl[1:]))
            unigrams.update(cl[1:])
    f = lambda x: x * math.log(x)  # noqa: E731
    return sum(map(f, pairs.values())) - 2 * sum(map(f, unigrams.values()))


def random_corpus(seed, n=150, vocab=25):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    # skewed frequencies, some empty sentences
    return [
        [rng.choice(words[: rng.randint(1, vocab)]) for _ in range(rng.randint(0, 8))]
        for _ in range(n)
    ]


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 6))
def test_objective_never_decreases_and_matches_counts(seed, n_classes):
    corpus = random_corpus(seed)
    r = cluster_words(corpus, n_classes=n_classes, iterations=8, seed=seed, progress_bar=False)
    assert all(b >= a - 1e-9 * abs(a) for a, b in zip(r.objective, r.objective[1:]))
    assert r.objective[-1] == pytest.approx(objective(corpus, r.classes), rel=1e-12)
    assert set(r.classes.values()) <= set(range(n_classes))
    assert set(r.classes) == {w for s in corpus for w in s}


def test_converged_classes_are_a_local_optimum():
    corpus = random_corpus(1)
    r = cluster_words(corpus, n_classes=4, iterations=50, seed=1, progress_bar=False)
    assert r.moves[-1] == 0 and r.moves[0] > 0
    base = objective(corpus, r.classes)
    for w in r.classes:  # no single move improves F: the gain formula is right
        for c in range(4):
            assert objective(corpus, {**r.classes, w: c}) <= base + 1e-7


def test_separable_groups():
    rng = random.Random(0)
    nouns, verbs = (
        ["cat", "dog", "fish", "bird", "cow"],
        ["runs", "eats", "sees", "sleeps", "hides"],
    )
    corpus = [
        [rng.choice(nouns if k % 2 == 0 else verbs) for k in range(rng.randint(1, 4) * 2)]
        for _ in range(300)
    ]
    for seed in (1, 2, 3):
        classes = train_word_classes(
            corpus, n_classes=2, iterations=10, seed=seed, progress_bar=False
        )
        assert len({classes[w] for w in nouns}) == 1 and len({classes[w] for w in verbs}) == 1
        assert classes["cat"] != classes["runs"]


def test_deterministic_for_a_seed_and_frequency_order():
    corpus = random_corpus(5, n=300, vocab=60)
    a = train_word_classes(corpus, n_classes=8, seed=3, progress_bar=False)
    b = train_word_classes(corpus, n_classes=8, seed=3, progress_bar=False)
    assert a == b and list(a) == list(b)
    counts = Counter(w for s in corpus for w in s)
    assert [counts[w] for w in a] == sorted(counts.values(), reverse=True)
    assert train_word_classes([[], []], progress_bar=False) == {}
    with pytest.raises(WordorderError, match="at least 2 classes"):
        train_word_classes(corpus, n_classes=1)


def test_files_and_lookup(tmp_path):
    path = tmp_path / "wc.tsv"
    write_word_classes(path, {"the": 3, "cat": 0, "ü": 255})
    assert path.read_text(encoding="utf-8") == "the\t3\ncat\t0\nü\t255\n"
    classes = read_word_classes(path)
    assert classes == {"the": 3, "cat": 0, "ü": 255}
    assert classes_of(["the", "dog", "cat"], classes) == ["3", "UNK", "0"]
    assert classes_of([], classes) == []
    for text, line in (
        ("a\t1\nb 2\n", 2),
        ("a\t1\nb\tx\n", 2),
        ("\t1\n", 1),
        ("a\t1\na\t2\n", 2),
        ("a\t1\t2\n", 1),
        ("a\t-1\n", 1),
    ):
        path.write_text(text)
        with pytest.raises(WordorderError, match=rf"wc\.tsv:{line}: "):
            read_word_classes(path)
