"""Unpacking archives: where chains of links lead (checked without Python's data filter too),
caps on unpacked bytes, and the byte-bounded line reader."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from wordorder.corpus.archive import safe_extract
from wordorder.corpus.limits import human, parse_size, unpack_cap
from wordorder.errors import WordorderError
from wordorder.io import iter_lines


def make_tar(entries: list[tuple[str, str, object]]) -> bytes:
    """An uncompressed tar of (kind, name, value): file (bytes), dir, sym or hard (link target)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for kind, name, value in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                info.size = len(value)
                tar.addfile(info, io.BytesIO(value))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE}[
                kind
            ]
            info.linkname = value or ""
            tar.addfile(info)
    return buf.getvalue()


HOSTILE = {
    # e -> d/l/.. where d/l -> .. : each link alone stays inside, together they leave
    "chain": (
        [
            ("dir", "d", None),
            ("sym", "d/l", ".."),
            ("sym", "e", "d/l/.."),
            ("file", "e/evil", b"x"),
        ],
        "member 'e': it links to 'd/l/..', outside the archive",
    ),
    # a link that was inside when made, redirected by a later member (b/c -> .)
    "redirected later": (
        [("sym", "a", "b/c/../.."), ("dir", "b", None), ("sym", "b/c", ".")],
        "member 'a': it links to 'b/c/../..', which once later members are in place leads outside",
    ),
    # ... and a file written through it
    "file through a redirected link": (
        [
            ("sym", "a", "b/c/../.."),
            ("dir", "b", None),
            ("sym", "b/c", "."),
            ("file", "a/evil", b"x"),
        ],
        "member 'a/evil': its folder 'a' leads outside the archive through links",
    ),
    "through a link to '.'": (
        [("dir", "a", None), ("sym", "a/self", "."), ("sym", "a/up", "self/../..")],
        "member 'a/up': it links to 'self/../..', outside the archive",
    ),
    "hard link through a link": (
        [("dir", "d", None), ("sym", "d/l", ".."), ("hard", "h", "d/l/../x")],
        "member 'h': it links to 'd/l/../x', outside the archive",
    ),
    "hard link to outside": ([("hard", "h", "d/../../etc/passwd")], "member 'h': it links to"),
    "absolute target": (
        [("sym", "abs", "/etc")],
        "member 'abs': it links to '/etc', outside the archive",
    ),
    "loop": (
        [("sym", "x", "y"), ("sym", "y", "x"), ("file", "x/f", b"z")],
        "member 'x/f': its folder 'x' cannot be reached: its links form a loop",
    ),
    "file replaced by a folder": ([("file", "a", b"x"), ("file", "a/b", b"y")], "member 'a/b'"),
}


@pytest.mark.parametrize(
    "data_filter", [False, True], ids=["own check only", "with the data filter"]
)
@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_link_trees_are_refused_naming_the_member(tmp_path, case, data_filter):
    entries, message = HOSTILE[case]
    archive = tmp_path / "a.tar"
    archive.write_bytes(make_tar(entries))
    box = tmp_path / "box"
    with pytest.raises(WordorderError) as e:
        safe_extract(archive, box / "dest", data_filter=data_filter)
    assert message in e.value.message and str(archive) == e.value.path
    assert not box.exists() or list(box.iterdir()) == []  # nothing unpacked, no temporary left


def test_the_chain_does_escape_when_unpacked_without_any_check(tmp_path):
    """What the check prevents: tarfile without a filter (Python < 3.11.4) writes outside."""
    archive = tmp_path / "a.tar"
    archive.write_bytes(make_tar(HOSTILE["chain"][0]))
    (tmp_path / "box" / "dest").mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(tmp_path / "box" / "dest", filter="fully_trusted")
    assert (tmp_path / "box" / "evil").read_bytes() == b"x"  # dest/e -> dest/.. = box


@pytest.mark.parametrize("data_filter", [False, True])
def test_links_that_stay_inside_are_unpacked(tmp_path, data_filter):
    entries = [
        ("dir", ".", None),
        ("file", "c/a.en", b"x\n"),
        ("sym", "sub/up", "../c/a.en"),
        ("sym", "s2", "sub/up"),
        ("sym", "d", "c"),
        ("file", "d/b.de", b"y\n"),
        ("sym", "e", "d/../c/."),
        ("hard", "h", "s2"),
    ]
    (tmp_path / "a.tar").write_bytes(make_tar(entries))
    safe_extract(tmp_path / "a.tar", tmp_path / "dest", data_filter=data_filter)
    dest = tmp_path / "dest"
    assert (dest / "s2").read_bytes() == (dest / "h").read_bytes() == b"x\n"
    assert (dest / "c" / "b.de").read_bytes() == (dest / "e" / "b.de").read_bytes() == b"y\n"


def test_a_hard_link_to_a_member_that_is_not_there(tmp_path):
    (tmp_path / "a.tar").write_bytes(make_tar([("hard", "h", "nothere")]))
    with pytest.raises(
        WordorderError, match="cannot unpack the archive: linkname 'nothere' not found"
    ):
        safe_extract(tmp_path / "a.tar", tmp_path / "dest")


def test_tar_above_the_cap_is_refused_before_unpacking(tmp_path):
    (tmp_path / "a.tar").write_bytes(
        make_tar([("file", "a", b"x" * 600), ("file", "b", b"y" * 600)])
    )
    with pytest.raises(
        WordorderError,
        match=r"unpacks to 1,200 bytes, more than max_unpacked_bytes \(1,024 bytes\)",
    ):
        safe_extract(tmp_path / "a.tar", tmp_path / "dest", max_bytes=1024)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar"]
    safe_extract(tmp_path / "a.tar", tmp_path / "dest", max_bytes=1200)  # at the cap: fine


def _zip(claimed: int | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.en", b"a b c\n" * 20_000)
    data = bytearray(buf.getvalue())
    if claimed is not None:  # the central directory lies about the size (120,000 bytes)
        at = data.rindex(b"PK\x01\x02")
        data[at + 24 : at + 28] = claimed.to_bytes(4, "little")
    return bytes(data)


def test_zip_cap_and_a_zip_whose_header_lies(tmp_path):
    (tmp_path / "z.zip").write_bytes(_zip())
    with pytest.raises(
        WordorderError, match=r"unpacks to 120,000 bytes, more than max_unpacked_bytes \(102,400"
    ):
        safe_extract(tmp_path / "z.zip", tmp_path / "dest", max_bytes=100 * 1024)
    safe_extract(tmp_path / "z.zip", tmp_path / "dest")
    assert (tmp_path / "dest" / "a.en").stat().st_size == 120_000
    # A header claiming 100 bytes: reading stops there and the checksum refuses the member.
    (tmp_path / "lie.zip").write_bytes(_zip(claimed=100))
    with pytest.raises(WordorderError, match="cannot unpack the archive"):
        safe_extract(tmp_path / "lie.zip", tmp_path / "dest2", max_bytes=1000)
    assert not (tmp_path / "dest2").exists()


def test_default_unpack_cap_is_a_multiple_of_the_archive_size_with_a_floor(tmp_path):
    small, large = tmp_path / "small", tmp_path / "large"
    small.write_bytes(b"x" * 100)
    with open(large, "wb") as f:
        f.truncate(10 << 20)  # 10 MiB (sparse)
    assert unpack_cap(small, None)[0] == 1 << 30
    assert unpack_cap(large, None)[0] == 200 * (10 << 20)
    assert unpack_cap(large, 5000) == (5000, "max_unpacked_bytes (5,000 bytes)")


@pytest.mark.parametrize(
    "value, expected",
    [
        (1, 1),
        ("500M", 500 << 20),
        ("80G", 80 << 30),
        ("1.5T", 3 << 39),
        ("64 GiB", 64 << 30),
        ("2k", 2048),
        ("7", 7),
    ],
)
def test_parse_size(value, expected):
    assert parse_size(value, "max_download_bytes", "url source") == expected


@pytest.mark.parametrize("value", [0, -5, True, "", "10X", "G", 1.5, "0.1"])
def test_parse_size_refuses(value):
    with pytest.raises(
        WordorderError, match="'max_unpacked_bytes' in url source must be a positive number"
    ):
        parse_size(value, "max_unpacked_bytes", "url source")


def test_human():
    assert [human(n) for n in (5, 2048, 3 << 19, 3 << 29, 1 << 40)] == [
        "5 bytes",
        "2,048 bytes",
        "1.5 MiB",
        "1.5 GiB",
        "1.0 TiB",
    ]


def test_line_reader_reads_at_most_4_bytes_per_character_and_the_line_end(tmp_path):
    path = Path(tmp_path / "t.txt")
    clef = "\U0001d11e"  # 4 bytes in UTF-8
    path.write_bytes((clef * 10 + "\r\n" + "a" * 41 + "\n").encode())
    # 42 bytes each: at the bound
    assert list(iter_lines(path, max_chars=10)) == [clef * 10, "a" * 41]
    path.write_bytes(b"ok\n" + b"a" * 42 + b"\n")
    lines = iter_lines(path, max_chars=10)
    assert next(lines) == "ok"
    with pytest.raises(WordorderError, match=r"t.txt:2: the line has more than 10 characters"):
        next(lines)
    assert len(list(iter_lines(path))) == 2  # no limit unless asked
