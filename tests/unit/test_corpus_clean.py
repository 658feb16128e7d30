"""Length and ratio cleaning on tokenized lines."""

from __future__ import annotations

import pytest

from wordorder.corpus.clean import CleanOptions, clean_parallel
from wordorder.errors import WordorderError


def words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


def test_each_reason_is_counted_under_the_first_that_applies():
    opts = CleanOptions(min_len=2, max_len=10, max_ratio=3.0)
    pairs = [
        (words(3), words(4)),  # 0 kept
        ("", words(3)),  # 1 empty
        (words(2), "   "),  # 2 empty (whitespace only)
        (words(11), words(10)),  # 3 too_long (source)
        (words(5), words(11)),  # 4 too_long (target)
        (words(1), words(1)),  # 5 too_short
        (words(2), words(7)),  # 6 ratio 3.5
        (words(2), words(6)),  # 7 kept: ratio exactly 3
        ("", words(30)),  # 8 empty wins over too_long
        (words(1), words(12)),  # 9 too_long wins over too_short and ratio
        (words(10), words(10)),  # 10 kept at max_len
        ("a\tb  c", "x y"),  # 11 kept: any whitespace separates tokens
    ]
    kept, stats = clean_parallel([s for s, _ in pairs], [t for _, t in pairs], opts)
    assert kept == [0, 7, 10, 11]
    assert stats == {"input": 12, "kept": 4, "empty": 3, "too_long": 3, "too_short": 1, "ratio": 1}


def test_defaults_and_ratio_against_one_token():
    opts = CleanOptions()
    assert (opts.min_len, opts.max_len, opts.max_ratio) == (1, 80, 9.0)
    kept, stats = clean_parallel(["a", "a", words(81)], [words(9), words(10), "b"], opts)
    assert kept == [0] and stats["ratio"] == 1 and stats["too_long"] == 1


def test_lengths_are_tokens_not_characters():
    kept, _ = clean_parallel(["supercalifragilistic " * 3], ["x y z"], CleanOptions(max_len=3))
    assert kept == [0]


def test_from_dict():
    assert CleanOptions.from_dict({"max_len": 50, "max_ratio": 2}) == CleanOptions(1, 50, 2)
    assert CleanOptions.from_dict({}) == CleanOptions.from_dict(None) == CleanOptions()
    with pytest.raises(WordorderError, match="unknown cleaning option 'max_length'"):
        CleanOptions.from_dict({"max_length": 50})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"min_len": 0},
        {"max_len": "80"},
        {"max_ratio": 0.5},
        {"min_len": 5, "max_len": 4},
        {"max_len": True},
    ],
)
def test_bad_values(kwargs):
    with pytest.raises(WordorderError):
        CleanOptions.from_dict(kwargs)


def test_sides_of_different_length_are_refused():
    with pytest.raises(WordorderError, match="2 source lines, 1 target lines"):
        clean_parallel(["a", "b"], ["c"], CleanOptions())
