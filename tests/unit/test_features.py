"""Reading the source features of the preorder stage: subword and word positions (``order``)."""

from __future__ import annotations

import pytest

from wordorder.errors import WordorderError
from wordorder.model_io.batching import pad_feature
from wordorder.model_io.features import read_feature


def test_order_reads_subword_and_word_positions(tmp_path):
    path = tmp_path / "p"
    path.write_text("0 6 7 4 5 1 2 3\n0 4 4 2 3 1 1 1\n")  # one sentence in both units
    assert read_feature("order", path, [8, 8]) == [
        [0, 6, 7, 4, 5, 1, 2, 3],
        [0, 4, 4, 2, 3, 1, 1, 1],
    ]
    # the source EOS comes after the last position in either unit
    assert pad_feature("order", [[0, 6, 7, 4, 5, 1, 2, 3], [0, 4, 4, 2, 3, 1, 1, 1]])[
        :, 8
    ].tolist() == [8, 5]


@pytest.mark.parametrize("line", ["0 2 2 1 0", "0 2 3", "1 1 2"])  # a split run, a gap, no 0
def test_order_rejects_other_integers(tmp_path, line):
    path = tmp_path / "p"
    path.write_text(line + "\n")
    with pytest.raises(WordorderError, match=r"p:1: .*neither a permutation"):
        read_feature("order", path, [len(line.split())])
