"""Corpus sources on disk (local, manual), the source registry and key checking."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from wordorder.corpus.sources import SOURCES, fetch_source, make_source
from wordorder.errors import WordorderError


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def fetch(spec, tmp_path, src="en", tgt="ja"):
    out_src, out_tgt = tmp_path / "out" / "corpus.src", tmp_path / "out" / "corpus.tgt"
    n = fetch_source(spec, src, tgt, out_src, out_tgt, tmp_path / "cache")
    return (
        n,
        out_src.read_text(encoding="utf-8").splitlines(),
        out_tgt.read_text(encoding="utf-8").splitlines(),
    )


def no_output(tmp_path) -> bool:
    out = tmp_path / "out"
    return not out.exists() or not any(out.iterdir())


def test_every_kind_is_registered():
    assert set(SOURCES) == {"local", "manual", "url", "sacrebleu", "pypi", "concat"}
    assert all(cls.kind == kind for kind, cls in SOURCES.items())


def test_local_copies_both_sides_with_placeholders_and_gzip(tmp_path):
    write(tmp_path / "c.en", ["Hello .", "  spaced  line ", "Bye ."])
    with gzip.open(tmp_path / "c.ja.gz", "wt", encoding="utf-8") as f:
        f.write("こんにちは 。\n\nさようなら 。\n")  # an empty line stays: cleaning decides later
    spec = {"kind": "local", "src": str(tmp_path / "c.{src}"), "tgt": str(tmp_path / "c.{tgt}.gz")}
    n, src, tgt = fetch(spec, tmp_path)
    assert n == 3
    assert src == ["Hello .", "  spaced  line ", "Bye ."]  # raw: not normalised here
    assert tgt == ["こんにちは 。", "", "さようなら 。"]


def test_local_max_lines_keeps_the_first_lines(tmp_path):
    write(tmp_path / "a.en", [f"e{i}" for i in range(10)])
    write(tmp_path / "a.ja", [f"j{i}" for i in range(10)])
    spec = {
        "kind": "local",
        "src": str(tmp_path / "a.en"),
        "tgt": str(tmp_path / "a.ja"),
        "max_lines": 4,
    }
    assert fetch(spec, tmp_path) == (4, ["e0", "e1", "e2", "e3"], ["j0", "j1", "j2", "j3"])


@pytest.mark.parametrize("n_src, n_tgt", [(3, 5), (5, 3)])
def test_mismatched_line_counts_name_both_files_and_counts(tmp_path, n_src, n_tgt):
    a = write(tmp_path / "a.en", [f"e{i}" for i in range(n_src)])
    b = write(tmp_path / "a.ja", [f"j{i}" for i in range(n_tgt)])
    with pytest.raises(WordorderError) as e:
        fetch({"kind": "local", "src": str(a), "tgt": str(b)}, tmp_path)
    assert f"{a} has {n_src} lines but {b} has {n_tgt}" in str(e.value)
    assert no_output(tmp_path)


def test_mismatch_is_found_even_past_max_lines(tmp_path):
    a = write(tmp_path / "a.en", [f"e{i}" for i in range(6)])
    b = write(tmp_path / "a.ja", [f"j{i}" for i in range(5)])
    with pytest.raises(WordorderError, match="has 6 lines but"):
        fetch({"kind": "local", "src": str(a), "tgt": str(b), "max_lines": 2}, tmp_path)
    assert no_output(tmp_path)


def test_invalid_utf8_names_file_and_line(tmp_path):
    a = write(tmp_path / "a.en", ["one", "two", "three"])
    b = tmp_path / "a.ja"
    b.write_bytes(b"ichi\nn\xffi\nsan\n")
    with pytest.raises(WordorderError) as e:
        fetch({"kind": "local", "src": str(a), "tgt": str(b)}, tmp_path)
    assert e.value.path == str(b) and e.value.line == 2
    assert str(e.value).startswith(f"{b}:2: invalid UTF-8")
    assert no_output(tmp_path)


def test_missing_local_file_is_named(tmp_path):
    a = write(tmp_path / "a.en", ["x"])
    with pytest.raises(WordorderError, match="file not found") as e:
        fetch({"kind": "local", "src": str(a), "tgt": str(tmp_path / "nope.ja")}, tmp_path)
    assert e.value.path == str(tmp_path / "nope.ja")


def test_empty_corpus_is_an_error(tmp_path):
    a, b = write(tmp_path / "a.en", []), write(tmp_path / "a.ja", [])
    with pytest.raises(WordorderError, match="empty"):
        fetch({"kind": "local", "src": str(a), "tgt": str(b)}, tmp_path)
    assert no_output(tmp_path)


def test_manual_missing_lists_exact_paths_and_instructions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "aspec.en", ["there"])
    spec = {
        "kind": "manual",
        "name": "ASPEC-JE",
        "src": "aspec.{src}",
        "tgt": "aspec.{tgt}",
        "instructions": "apply at https://jipsti.jst.go.jp/aspec/ (research licence)",
    }
    with pytest.raises(WordorderError) as e:
        fetch(spec, tmp_path)
    text = str(e.value)
    assert "ASPEC-JE" in text and f"{tmp_path / 'aspec.ja'} (ja side)" in text
    assert str(tmp_path / "aspec.en") not in text  # only what is missing
    assert "https://jipsti.jst.go.jp/aspec/ (research licence)" in text
    write(tmp_path / "aspec.ja", ["そこ"])
    assert fetch(spec, tmp_path) == (1, ["there"], ["そこ"])


def test_manual_with_both_missing_lists_both(tmp_path):
    spec = {
        "kind": "manual",
        "name": "NIST",
        "src": str(tmp_path / "n.{src}"),
        "tgt": str(tmp_path / "n.{tgt}"),
        "instructions": "LDC catalogue",
    }
    with pytest.raises(WordorderError) as e:
        fetch(spec, tmp_path, "zh", "en")
    assert f"{tmp_path / 'n.zh'} (zh side)" in str(e.value)
    assert f"{tmp_path / 'n.en'} (en side)" in str(e.value)


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"kind": "local", "src": "a"}, "missing key 'tgt' in local source"),
        (
            {"kind": "local", "src": "a", "tgt": "b", "sorce": "c"},
            "unknown key 'sorce' in local source",
        ),
        (
            {"kind": "manual", "src": "a", "tgt": "b", "name": "X"},
            "missing key 'instructions' in manual source",
        ),
        ({"kind": "pypi"}, "missing key 'package' in pypi source"),
        (
            {"kind": "sacrebleu", "test_set": "wmt14", "lang": "en-de"},
            "unknown key 'lang' in sacrebleu source",
        ),
        (
            {"kind": "url", "url": "http://x/y.tgz", "src": "a", "tgt": "b"},
            "missing key 'sha256' in url source",
        ),
        ({"kind": "local", "src": "a", "tgt": "b", "max_lines": 0}, "max_lines"),
        ({"kind": "ftp"}, "unknown corpus source kind 'ftp'"),
        ({"src": "a"}, "missing key 'kind'"),
    ],
)
def test_bad_specs_name_the_key_and_kind(spec, message):
    with pytest.raises(WordorderError) as e:
        make_source(spec)
    assert message in str(e.value)


def test_output_is_deterministic(tmp_path):
    a = write(tmp_path / "a.en", [f"e{i}" for i in range(50)])
    b = write(tmp_path / "a.ja", [f"j{i}" for i in range(50)])
    spec = {"kind": "local", "src": str(a), "tgt": str(b)}
    first = fetch(spec, tmp_path)
    assert fetch(spec, tmp_path) == first


def test_real_tanaka_corpus_through_local_source(tmp_path, shared_data):
    folder = shared_data / "ja-en_small_parallel_enja"
    spec = {
        "kind": "local",
        "src": str(folder / "train.{src}.gz"),
        "tgt": str(folder / "train.{tgt}.gz"),
    }
    n, en, ja = fetch(spec, tmp_path, "en", "ja")
    assert n == len(en) == len(ja) == 50_000
    assert en[0] == "i can 't tell who will arrive first ."
    assert ja[0] == "誰 が 一番 に 着 く か 私 に は 分か り ま せ ん 。"
