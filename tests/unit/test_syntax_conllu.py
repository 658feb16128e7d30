"""CoNLL-U writing and reading: round trip, empty and POS-only sentences, malformed rows."""

from __future__ import annotations

import numpy as np
import pytest

from wordorder.errors import WordorderError
from wordorder.syntax.conllu import Sentence, format_sentence, read_conllu, write_conllu


def _sent():
    return Sentence(
        ["I", "saw", "her"],
        ["I", "see", "she"],
        ["PRON", "VERB", "PRON"],
        ["PRP", "VBD", "PRP"],
        np.array([2, 0, 2]),
        ["nsubj", "root", "obj"],
    )


def test_format_sentence_columns():
    block = format_sentence(_sent(), 7)
    lines = block.splitlines()
    assert lines[0] == "# sent_id = 7" and lines[1] == "# text = I saw her"
    assert lines[3] == "2\tsaw\tsee\tVERB\tVBD\t_\t0\troot\t_\t_"
    assert block.endswith("\n\n")


def test_round_trip_with_empty_and_pos_only(tmp_path):
    empty = Sentence([], [], [], [], np.zeros(0, np.int64), [], "empty")
    pos_only = Sentence(["Die", "Katze"], ["der", "Katze"], ["DET", "NOUN"], ["ART", "NN"])
    flat = Sentence(
        ["a", "b"], ["_", "_"], ["X", "X"], ["_", "_"], np.array([2, 0]), ["dep", "root"], "flat"
    )
    path = tmp_path / "x.conllu"
    with open(path, "w", encoding="utf-8") as f:
        assert write_conllu(f, [_sent(), empty, pos_only, flat]) == 4
    got = list(read_conllu(path))
    assert len(got) == 4
    assert got[0].forms == ["I", "saw", "her"] and got[0].heads.tolist() == [2, 0, 2]
    assert got[0].deprels == ["nsubj", "root", "obj"] and got[0].lemmas == ["I", "see", "she"]
    assert len(got[1]) == 0 and got[1].fallback == "empty"
    assert got[2].heads is None and got[2].upos == ["DET", "NOUN"] and got[2].xpos == ["ART", "NN"]
    assert got[3].fallback == "flat" and got[3].heads.tolist() == [2, 0]


def test_malformed_rows_name_the_line(tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(
        "# sent_id = 1\n1\ta\t_\tX\t_\t_\t0\troot\t_\t_\n3\tb\t_\tX\t_\t_\t1\tdep\t_\t_\n\n",
        encoding="utf-8",
    )
    with pytest.raises(
        WordorderError, match=r"bad.conllu:3: malformed CoNLL-U: token id '3', expected 2"
    ):
        list(read_conllu(path))
    path.write_text("1\ta\t_\tX\n\n", encoding="utf-8")
    with pytest.raises(WordorderError, match=r":1: malformed CoNLL-U: 4 tab-separated columns"):
        list(read_conllu(path))
    path.write_text("1\ta\t_\tX\t_\t_\t5\troot\t_\t_\n\n", encoding="utf-8")
    with pytest.raises(WordorderError, match=r"HEAD out of range"):
        list(read_conllu(path))


def test_multiword_tokens_are_skipped(tmp_path):
    path = tmp_path / "ud.conllu"
    path.write_text(
        "1-2\tdel\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "1\tde\tde\tADP\t_\t_\t2\tcase\t_\t_\n"
        "2\tel\tel\tDET\t_\t_\t0\troot\t_\t_\n\n",
        encoding="utf-8",
    )
    (sent,) = read_conllu(path)
    assert sent.forms == ["de", "el"] and sent.heads.tolist() == [2, 0]
