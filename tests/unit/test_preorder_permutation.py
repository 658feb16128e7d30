"""Permutation files and their projection onto subword pieces."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.errors import WordorderError
from wordorder.preorder.permutation import (
    parse_permutation,
    read_permutations,
    subword_positions,
    word_positions,
    write_permutations,
    write_preordered,
    write_preordered_levels,
)


def test_parse_rejects_non_permutations(tmp_path):
    assert parse_permutation("2 0 1", 3).tolist() == [2, 0, 1]
    assert parse_permutation("", 0).tolist() == []
    for bad in ("0 1", "0 0 1", "0 1 3", "a b c"):
        with pytest.raises(WordorderError):
            parse_permutation(bad, 3)
    path = tmp_path / "x.perm"
    path.write_text("0 1\n1 1\n")
    with pytest.raises(WordorderError, match=r"x\.perm:2"):
        read_permutations(path, [2, 2])
    with pytest.raises(WordorderError, match="1 permutations for 2"):
        path.write_text("0 1\n")
        read_permutations(path, [2, 2])


def test_preordered_outputs(tmp_path):
    (tmp_path / "t.tok").write_text("i bought a book yesterday\nhello\n\n")
    (tmp_path / "t.bpe").write_text("▁i ▁bou ght ▁a ▁book ▁yes ter day\n▁hel lo\n\n")
    write_permutations(
        tmp_path / "t.perm", [np.array([0, 4, 2, 3, 1]), np.array([0]), np.array([], int)]
    )
    out = [tmp_path / n for n in ("o.tok", "o.bpe", "o.pos")]
    stats = write_preordered(tmp_path / "t.perm", tmp_path / "t.tok", tmp_path / "t.bpe", *out)
    assert stats == {"sentences": 3, "reordered": 1}
    assert out[0].read_text() == "i yesterday a book bought\nhello\n\n"
    assert out[1].read_text() == "▁i ▁yes ter day ▁a ▁book ▁bou ght\n▁hel lo\n\n"
    # positions of the original pieces in the preordered piece sequence; subword
    # order kept inside a word
    assert out[2].read_text() == "0 6 7 4 5 1 2 3\n0 1\n\n"
    # word positions (Kawara et al. preorder words): every piece carries its word's preordered index
    write_preordered(tmp_path / "t.perm", tmp_path / "t.tok", tmp_path / "t.bpe", *out, unit="word")
    assert out[1].read_text() == "▁i ▁yes ter day ▁a ▁book ▁bou ght\n▁hel lo\n\n"
    assert out[2].read_text() == "0 4 4 2 3 1 1 1\n0 0\n\n"
    with pytest.raises(WordorderError, match="unknown position unit 'morpheme'"):
        write_preordered(
            tmp_path / "t.perm", tmp_path / "t.tok", tmp_path / "t.bpe", *out, unit="morpheme"
        )


def test_mismatched_subwords_leave_no_output(tmp_path):
    (tmp_path / "t.tok").write_text("a b c\n")
    (tmp_path / "t.bpe").write_text("▁a ▁b\n")
    (tmp_path / "t.perm").write_text("0 1 2\n")
    out = [tmp_path / n for n in ("o.tok", "o.bpe", "o.pos")]
    with pytest.raises(WordorderError, match=r"t\.bpe:1"):
        write_preordered(tmp_path / "t.perm", tmp_path / "t.tok", tmp_path / "t.bpe", *out)
    assert not any(p.exists() for p in out) and sorted(q.name for q in tmp_path.iterdir()) == [
        "t.bpe",
        "t.perm",
        "t.tok",
    ]


def test_several_levels_are_each_written_as_alone_and_together_or_not_at_all(tmp_path):
    """The swap-noise levels of a test set in one call (``preorder-project`` with several
    ``--perm``): each level's files are the ones a call of its own writes; a bad permutation
    file among them leaves no level written."""
    (tmp_path / "t.tok").write_text("i bought a book yesterday\nhello\n")
    (tmp_path / "t.bpe").write_text("▁i ▁bou ght ▁a ▁book ▁yes ter day\n▁hel lo\n")
    levels = [
        [np.array([0, 1, 2, 3, 4]), np.array([0])],
        [np.array([4, 3, 2, 1, 0]), np.array([0])],
    ]
    for n, perms in enumerate(levels):
        write_permutations(tmp_path / f"{n}.perm", perms)
    inputs = (tmp_path / "t.tok", tmp_path / "t.bpe")
    together = [tuple(tmp_path / f"all{n}.{k}" for k in ("tok", "bpe", "pos")) for n in (0, 1)]
    stats = write_preordered_levels([tmp_path / "0.perm", tmp_path / "1.perm"], *inputs, together)
    assert stats == [{"sentences": 2, "reordered": 0}, {"sentences": 2, "reordered": 1}]
    for n in (0, 1):
        alone = [tmp_path / f"one{n}.{k}" for k in ("tok", "bpe", "pos")]
        write_preordered(tmp_path / f"{n}.perm", *inputs, *alone)
        assert [p.read_text() for p in together[n]] == [p.read_text() for p in alone]
    assert together[1][0].read_text() == "yesterday book a bought i\nhello\n"

    (tmp_path / "bad.perm").write_text("0 1 2 3 4\n0 0\n")  # the second level's file is broken
    fresh = [tuple(tmp_path / f"new{n}.{k}" for k in ("tok", "bpe", "pos")) for n in (0, 1)]
    with pytest.raises(WordorderError, match=r"bad\.perm:2"):
        write_preordered_levels([tmp_path / "0.perm", tmp_path / "bad.perm"], *inputs, fresh)
    assert not any(p.exists() for paths in fresh for p in paths)
    with pytest.raises(WordorderError, match="2 permutation files for 1 sets of outputs"):
        write_preordered_levels([tmp_path / "0.perm", tmp_path / "1.perm"], *inputs, fresh[:1])


# pieces per word, and a preorder of the words
WORDS_AND_ORDER = st.lists(st.integers(1, 4), min_size=1, max_size=10).flatmap(
    lambda sizes: st.tuples(st.just(sizes), st.permutations(list(range(len(sizes)))))
)


@settings(max_examples=200, deadline=None)
@given(WORDS_AND_ORDER)
def test_subword_positions_move_words_whole(case):
    sizes, perm = case
    wi = np.repeat(np.arange(len(sizes)), sizes)
    pos = subword_positions(wi, np.array(perm))
    assert sorted(pos.tolist()) == list(range(len(wi)))
    reordered_words = wi[np.argsort(pos)]
    # the pieces in preordered order spell the words in perm order, each word's pieces
    # contiguous and in order
    assert reordered_words.tolist() == np.repeat(np.array(perm), np.array(sizes)[perm]).tolist()
    assert np.all(np.diff(pos)[np.diff(wi) == 0] == 1)


@settings(max_examples=200, deadline=None)
@given(WORDS_AND_ORDER)
def test_word_positions_are_shared_by_the_pieces_of_a_word(case):
    sizes, perm = case
    wi = np.repeat(np.arange(len(sizes)), sizes)
    pos = word_positions(wi, np.array(perm))
    for w in range(len(sizes)):
        # all pieces of word w carry one value: the index k with perm[k] == w (the
        # word's preordered index)
        assert set(pos[wi == w].tolist()) == {perm.index(w)}
    # and the subword positions order the words the same way
    sub = subword_positions(wi, np.array(perm))
    assert np.array_equal(np.argsort(pos, kind="stable"), np.argsort(sub))
