"""Word tokenizers: exact outputs, round trips, line preservation, caching."""

from __future__ import annotations

import gzip
import logging

import pytest

from wordorder.errors import WordorderError
from wordorder.text.tokenize import (
    Tokenizer,
    detokenize_file,
    get_tokenizer,
    join_cjk,
    tokenize_file,
)


def test_moses_english_round_trip():
    tok = get_tokenizer("en")
    tokens = tok.tokenize("Hello, world!")
    assert tokens == ["Hello", ",", "world", "!"]
    assert " ".join(tokens) == "Hello , world !"
    assert tok.detokenize(tokens) == "Hello, world!"


def test_moses_does_not_escape_and_uses_language_rules():
    en = get_tokenizer("en")
    assert en.tokenize('Tom & Jerry say "hi" <b>') == [
        "Tom",
        "&",
        "Jerry",
        "say",
        '"',
        "hi",
        '"',
        "<",
        "b",
        ">",
    ]
    assert en.detokenize(["Tom", "&amp;", "Jerry"]) == "Tom &amp; Jerry"  # nothing unescaped
    assert en.tokenize("I can't go.") == ["I", "can", "'t", "go", "."]
    # English non-breaking prefix: "Mr." stays one token, German "z.B." likewise
    assert en.tokenize("Mr. Smith left.") == ["Mr.", "Smith", "left", "."]
    de = get_tokenizer("de")
    assert de.tokenize("Das ist z.B. gut.") == ["Das", "ist", "z.B.", "gut", "."]
    assert get_tokenizer("fr").tokenize("C'est l'homme.") == ["C'", "est", "l'", "homme", "."]


def test_moses_cyrillic_and_normalization():
    ru = get_tokenizer("ru")
    assert ru.tokenize("Привет,\tмир!\x00 ") == ["Привет", ",", "мир", "!"]
    assert ru.detokenize(["Привет", ",", "мир", "!"]) == "Привет, мир!"


def test_japanese_fugashi_surface_forms_and_round_trip():
    tok = get_tokenizer("ja")
    line = "元始に神天地を創造たまへり"
    tokens = tok.tokenize(line)
    assert tokens == ["元始", "に", "神", "天地", "を", "創造", "たまへ", "り"]
    assert tok.detokenize(tokens) == line


def test_japanese_keeps_space_between_ascii_words():
    tok = get_tokenizer("ja")
    line = "私はiPhone 15を持っています。"
    tokens = tok.tokenize(line)
    assert "iPhone" in tokens and "15" in tokens
    assert tok.detokenize(tokens) == line
    assert join_cjk(["GPU", "2", "枚", "と", "CPU"]) == "GPU 2枚とCPU"


def test_chinese_jieba():
    tok = get_tokenizer("zh")
    tokens = tok.tokenize("我爱北京天安门 GPU 2 个")
    assert tokens == ["我", "爱", "北京", "天安门", "GPU", "2", "个"]
    assert all(t.strip() == t and t for t in tokens)
    assert tok.detokenize(tokens) == "我爱北京天安门GPU 2个"


def test_tokenizers_are_cached_and_follow_protocol():
    assert get_tokenizer("ja") is get_tokenizer("ja-JP")
    assert get_tokenizer("en") is get_tokenizer("EN")
    for lang in ("en", "ja", "zh"):
        tok = get_tokenizer(lang)
        assert isinstance(tok, Tokenizer)
        assert tok.lang == lang


def test_unknown_language_falls_back_to_moses_with_warning(caplog):
    with caplog.at_level(logging.WARNING, logger="wordorder.text.tokenize"):
        tok = get_tokenizer("qaa")
    assert tok.tokenize("Hello, world!") == ["Hello", ",", "world", "!"]
    assert any("qaa" in r.getMessage() for r in caplog.records)


def test_invalid_language_code():
    with pytest.raises(WordorderError):
        get_tokenizer("  ")


def test_tokens_never_contain_whitespace():
    lines = ["a\u3000b\u00a0c", "  ", "x\u2028y", "日本\u3000語 テスト"]
    for lang in ("en", "ja", "zh"):
        tok = get_tokenizer(lang)
        for line in lines:
            for t in tok.tokenize(line):
                assert t and not any(ch.isspace() for ch in t)


@pytest.mark.parametrize("lang", ["en", "ja", "zh"])
def test_tokenize_file_preserves_lines(tmp_path, lang):
    inp = tmp_path / "in.txt.gz"
    lines = ["Hello, world!", "", "   ", "日本語の文です。", "", "last line"]
    with gzip.open(inp, "wt", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    out = tmp_path / "out" / "tok.txt"
    n = tokenize_file(inp, out, lang, progress=False)
    got = out.read_text(encoding="utf-8").split("\n")
    assert got[-1] == "" and len(got) - 1 == n == len(lines)
    assert got[1] == "" and got[2] == "" and got[4] == ""
    assert got[0] != "" and got[5] != ""
    assert not list(tmp_path.joinpath("out").glob(".*.tmp"))

    detok = tmp_path / "detok.txt"
    assert detokenize_file(out, detok, lang) == n
    back = detok.read_text(encoding="utf-8").split("\n")[:-1]
    assert back[1] == back[2] == back[4] == ""
    if lang == "en":
        assert back[0] == "Hello, world!"
    if lang == "ja":
        assert back[3] == "日本語の文です。"


def test_tokenize_file_progress_names_the_file(tmp_path, capsys):
    inp = tmp_path / "corpus.en"
    inp.write_text("one\ntwo\n", encoding="utf-8")
    assert tokenize_file(inp, tmp_path / "o", "en", progress=True) == 2
    assert "corpus.en" in capsys.readouterr().err


def test_tokenize_file_errors(tmp_path):
    with pytest.raises(WordorderError, match="not found"):
        tokenize_file(tmp_path / "missing.txt", tmp_path / "o", "en", progress=False)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\xfe broken\n")
    with pytest.raises(WordorderError) as e:
        tokenize_file(bad, tmp_path / "o2", "en", progress=False)
    assert e.value.line == 2
    assert not (tmp_path / "o2").exists()
