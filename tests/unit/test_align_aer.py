"""AER (Och & Ney 2003) on hand examples, and the awesome-align gold format."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from wordorder.align.aer import aer, read_gold, read_src_tgt
from wordorder.errors import WordorderError

GOLD = (
    Path(__file__).resolve().parents[2].parent
    / "shared"
    / "data"
    / "word-alignment-gold_awesome-align"
)


def arr(*links):
    return np.array(links, np.int64).reshape(-1, 2)


def test_worked_example():
    # S = {00, 11}, P = S ∪ {12}, A = {00, 12, 22}: P = 2/3, R = 1/2,
    # AER = 1 - (1 + 2)/(3 + 2) = 0.4
    r = aer([arr((0, 0), (1, 2), (2, 2))], [arr((0, 0), (1, 1))], [arr((1, 2))])
    assert (
        r["precision"] == pytest.approx(2 / 3)
        and r["recall"] == 0.5
        and r["aer"] == pytest.approx(0.4)
    )
    assert (r["predicted"], r["sure"], r["possible"], r["a_and_s"], r["a_and_p"]) == (3, 2, 3, 1, 2)
    assert r["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_corpus_level_sums_and_sets():
    # sentence 1: A = S = {00} (AER 0); sentence 2: A = {00, 01, 02, 03}, S = {11} (AER 1).
    # Corpus: |A| = 5, |S| = 2, |A∩S| = |A∩P| = 1 -> AER = 1 - 2/7 (a sentence mean would be 0.5)
    pred = [arr((0, 0)), arr((0, 0), (0, 1), (0, 2), (0, 3))]
    sure = [arr((0, 0)), arr((1, 1))]
    r = aer(pred, sure, [arr(), arr()])
    assert r["aer"] == pytest.approx(1 - 2 / 7) and r["precision"] == pytest.approx(1 / 5)
    # duplicated links count once; possible given with the sure links included changes nothing
    r2 = aer([arr((0, 0), (0, 0))] + pred[1:], sure, [arr((0, 0)), arr((1, 1))])
    assert r2 == r
    # links of another sentence do not match
    assert aer([arr(), arr((0, 0))], [arr((0, 0)), arr()], [arr(), arr()])["a_and_s"] == 0
    assert aer([], [], [])["aer"] == 0.0
    with pytest.raises(WordorderError, match="as many"):
        aer([arr()], [], [])


def test_read_gold_formats_and_out_of_range(tmp_path):
    (tmp_path / "t.src-tgt").write_text("a b  c ||| x y \nd\u3000e ||| z\n")
    src, tgt = read_src_tgt(tmp_path / "t.src-tgt")
    assert src == [["a", "b", "c"], ["d\u3000e"]] and tgt == [["x", "y"], ["z"]]
    (tmp_path / "t.gold").write_text("1-1 2p2 3-2\n1-1 1-2 2-1\n")
    g = read_gold(tmp_path / "t.gold", [3, 1], [2, 1])
    assert [s.tolist() for s in g.sure] == [[[0, 0], [2, 1]], [[0, 0]]]
    assert [p.tolist() for p in g.possible] == [[[1, 1]], []]
    assert (g.out_of_range_links, g.out_of_range_lines) == (2, [2])
    clipped = read_gold(tmp_path / "t.gold", [3, 1], [2, 1], out_of_range="clip")
    assert clipped.sure[1].tolist() == [[0, 0], [0, 0], [0, 0]]
    with pytest.raises(WordorderError, match=r"t\.gold:2: link 0-1"):
        read_gold(tmp_path / "t.gold", [3, 1], [2, 1], out_of_range="error")
    with pytest.raises(WordorderError, match="2 gold lines for 3"):
        read_gold(tmp_path / "t.gold", [3, 1, 1], [2, 1, 1])
    (tmp_path / "bad.src-tgt").write_text("a ||| b\nno separator\n")
    with pytest.raises(WordorderError, match=r"bad\.src-tgt:2"):
        read_src_tgt(tmp_path / "bad.src-tgt")


@pytest.mark.skipif(not GOLD.is_dir(), reason="shared gold alignments not found")
def test_real_gold_sets_are_in_range_with_ascii_space_tokens():
    counts = {"enfr": (447, 4038, 13400), "jaen": (582, 13562, 0), "roen": (248, 6198, 0)}
    for name, (lines, n_sure, n_possible) in counts.items():
        src, tgt = read_src_tgt(GOLD / f"{name}.src-tgt.gz")
        g = read_gold(
            GOLD / f"{name}.gold.gz", list(map(len, src)), list(map(len, tgt)), out_of_range="error"
        )
        assert (
            len(src) == lines
            and sum(map(len, g.sure)) == n_sure
            and sum(map(len, g.possible)) == n_possible
        )
    # splitting on any whitespace drops the ideographic-space tokens and pushes 6 links past the end
    src, tgt = read_src_tgt(GOLD / "jaen.src-tgt.gz")
    g = read_gold(
        GOLD / "jaen.gold.gz", [len(" ".join(s).split()) for s in src], list(map(len, tgt))
    )
    assert (g.out_of_range_links, g.out_of_range_lines) == (6, [351, 354, 355, 356])
