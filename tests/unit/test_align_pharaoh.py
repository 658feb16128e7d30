"""Pharaoh alignment files: parsing, validation with file:line errors, writing."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wordorder.align.pharaoh import (
    flatten,
    format_links,
    parse_gold_line,
    parse_links,
    parse_pharaoh,
    read_alignments,
    read_pharaoh,
    unflatten,
    write_alignments,
)
from wordorder.errors import WordorderError


def test_parse_lines():
    assert parse_links("0-1 2-3 10-0").tolist() == [[0, 1], [2, 3], [10, 0]]
    assert parse_links("").shape == (0, 2)
    assert parse_links("  1-1\t2-0 \r").tolist() == [[1, 1], [2, 0]]
    assert parse_links("1-2 3-1", one_based=True).tolist() == [[0, 1], [2, 0]]
    sure, possible = parse_gold_line("1-1 2p3 4-4")
    assert sure.tolist() == [[0, 0], [3, 3]] and possible.tolist() == [[1, 2]]
    assert format_links(np.array([[0, 1], [12, 3]])) == "0-1 12-3"
    assert format_links(np.empty((0, 2), int)) == ""


@pytest.mark.parametrize(
    "bad, what",
    [
        ("0-1 1-", "incomplete"),
        ("0-1 x", "unexpected character"),
        ("1p2", "possible links"),
        ("0--1", "incomplete"),
        ("-1", "unexpected"),
        ("1 2", "incomplete"),
        ("0-1-2", "unexpected"),
        ("99999999999-1", "too large"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, bad, what):
    path = tmp_path / "a.align"
    path.write_text(f"0-0\n\n{bad}\n1-1\n")
    with pytest.raises(WordorderError, match=rf"a\.align:3: .*{what}"):
        read_pharaoh(path)


def test_line_structure():
    # empty lines are sentences without links; a last line without newline still counts
    flat, poss, off = parse_pharaoh(b"0-1\n\n2-2 3-3")
    assert (
        off.tolist() == [0, 1, 1, 3]
        and flat.tolist() == [[0, 1], [2, 2], [3, 3]]
        and not poss.any()
    )
    assert parse_pharaoh(b"")[2].tolist() == [0]
    assert parse_pharaoh(b"\n")[2].tolist() == [0, 0]
    assert parse_pharaoh(b"0-0\r\n1-1\r\n")[2].tolist() == [0, 1, 2]
    with pytest.raises(WordorderError, match=r"g:2: index 0 in a 1-based file"):
        parse_pharaoh(b"1-1\n0-1\n", one_based=True, path="g")


def test_read_checks_ranges_and_line_counts(tmp_path):
    path = tmp_path / "x.align"
    path.write_text("0-0 1-2\n\n2-0\n")
    links = read_alignments(path, [2, 1, 3], [3, 1, 1])
    assert [a.tolist() for a in links] == [[[0, 0], [1, 2]], [], [[2, 0]]]
    assert all(a.dtype == np.int64 and a.shape[1] == 2 for a in links)
    with pytest.raises(WordorderError, match=r"x\.align:1: link 1-2 .* 2 source and 2 target"):
        read_alignments(path, [2, 1, 3], [2, 1, 1])
    with pytest.raises(WordorderError, match=r"x\.align:3: link 2-0"):
        read_alignments(path, [2, 1, 2], [3, 1, 1])
    with pytest.raises(WordorderError, match="3 alignment lines for 4 source"):
        read_alignments(path, [2, 1, 3, 1], [3, 1, 1, 1])


def test_write_round_trip_and_gzip(tmp_path):
    links = [np.array([[0, 3], [11, 2]]), np.empty((0, 2), np.int64), np.array([[5, 5]])]
    write_alignments(tmp_path / "a.align", links)
    assert (tmp_path / "a.align").read_text() == "0-3 11-2\n\n5-5\n"
    write_alignments(tmp_path / "a.align.gz", links)
    assert gzip.decompress((tmp_path / "a.align.gz").read_bytes()) == b"0-3 11-2\n\n5-5\n"
    back = read_alignments(tmp_path / "a.align.gz", [12, 1, 6], [4, 1, 6])
    assert [a.tolist() for a in back] == [a.tolist() for a in links]
    write_alignments(tmp_path / "e.align", [])
    assert (tmp_path / "e.align").read_text() == ""


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.tuples(st.integers(0, 120), st.integers(0, 120)), max_size=6), max_size=8)
)
def test_flat_text_round_trip(sentences):
    links = [np.array(s, np.int64).reshape(-1, 2) for s in sentences]
    flat, offsets = flatten(links)
    text = "".join(format_links(a) + "\n" for a in links).encode()
    parsed, _, parsed_offsets = parse_pharaoh(text)
    assert parsed.tolist() == flat.tolist() and parsed_offsets.tolist() == offsets.tolist()
    assert [a.tolist() for a in unflatten(parsed, parsed_offsets)] == [a.tolist() for a in links]
