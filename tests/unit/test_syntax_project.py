"""Word-level syntax onto subwords: BIEO (docs/algorithms.md §FACTORS), POS projection,
the four aligned files."""

from __future__ import annotations

import numpy as np
import pytest

from wordorder.errors import WordorderError
from wordorder.syntax.conllu import Sentence, write_conllu
from wordorder.syntax.project import bieo_tags, project_file, project_tags
from wordorder.text.subword import word_index


def test_bieo_worked_example():
    # docs/algorithms.md §FACTORS: "un@@ believ@@ able story" gives B I E O
    # (here in sentencepiece form)
    assert bieo_tags(word_index(["▁un", "believ", "able", "▁story"])) == ["B", "I", "E", "O"]
    assert bieo_tags(word_index(["▁a", "b", "▁c", "▁d", "e", "f", "g"])) == [
        "B",
        "E",
        "O",
        "B",
        "I",
        "I",
        "E",
    ]
    assert bieo_tags([]) == []


def test_pos_projection_copies_the_word_tag_to_every_piece():
    wi = word_index(["▁un", "believ", "able", "▁story"])
    assert project_tags(["ADJ", "NOUN"], wi) == ["ADJ", "ADJ", "ADJ", "NOUN"]


def _write(tmp_path, sents, bpe_lines):
    conllu = tmp_path / "x.conllu"
    with open(conllu, "w", encoding="utf-8") as f:
        write_conllu(f, sents)
    bpe = tmp_path / "x.bpe"
    bpe.write_text("".join(line + "\n" for line in bpe_lines), encoding="utf-8")
    outs = [tmp_path / n for n in ("pos", "bieo", "heads", "tree", "dep", "word", "head")]
    return conllu, bpe, outs


def test_project_file_writes_seven_aligned_files(tmp_path):
    sents = [
        Sentence(
            ["my", "father", "is", "a", "teacher", "."],
            ["_"] * 6,
            ["PRON", "NOUN", "AUX", "DET", "NOUN", "PUNCT"],
            ["_"] * 6,
            np.array([2, 3, 0, 5, 3, 3]),
            ["poss", "nsubj", "root", "det", "attr", "punct"],
        ),
        Sentence(["Katze", "schläft"], ["_"] * 2, ["NOUN", "VERB"], ["_"] * 2),  # POS only
        Sentence([], [], [], [], np.zeros(0, np.int64), [], "empty"),
    ]
    bpe = ["▁my ▁fa ther ▁is ▁a ▁teach er ▁.", "▁Kat ze ▁schläft", ""]
    conllu, bpe_path, outs = _write(tmp_path, sents, bpe)
    counts = project_file(conllu, bpe_path, *outs, progress_bar=False)
    pos, bieo, heads, tree, dep, word, head = (
        p.read_text(encoding="utf-8").splitlines() for p in outs
    )
    assert pos == ["PRON NOUN NOUN AUX DET NOUN NOUN PUNCT", "NOUN NOUN VERB", ""]
    # every piece carries its word's label; a sentence without a tree gets "_"
    assert dep == ["poss nsubj nsubj root det attr attr punct", "_ _ _", ""]
    assert bieo == ["O B E O O B E O", "B E O", ""]
    assert heads == ["2 3 0 5 3 3", "", ""]
    # the final "." (PUNCT) is the tail of the whole clause, outside it (as in Enju's trees)
    assert tree[0] == "(((0 1) (2 (3 4))) 5)" and tree[1] == "(0 1)" and tree[2] == ""
    # the tree as model inputs: each piece's word and that word's head; no parse → a chain
    assert word == ["0 1 1 2 3 4 4 5", "0 0 1", ""]
    assert head == ["2 3 3 0 5 3 3 3", "0 0 1", ""]
    assert counts == {"sentences": 3, "no_tree": 1, "nonprojective": 0}


def test_mismatched_words_name_the_line_and_write_nothing(tmp_path):
    sents = [
        Sentence(["a", "b"], ["_"] * 2, ["X"] * 2, ["_"] * 2, np.array([0, 1]), ["root", "dep"])
    ] * 2
    conllu, bpe, outs = _write(tmp_path, sents, ["▁a ▁b", "▁a b"])
    with pytest.raises(
        WordorderError, match=r"x.bpe:2: 1 words in the subword line but 2 in the parse"
    ):
        project_file(conllu, bpe, *outs, progress_bar=False)
    assert not any(p.exists() for p in outs)
    conllu, bpe, outs = _write(tmp_path, sents, ["▁a ▁b"])
    with pytest.raises(WordorderError, match="different numbers of sentences"):
        project_file(conllu, bpe, *outs, progress_bar=False)
    assert not any(p.exists() for p in outs)
