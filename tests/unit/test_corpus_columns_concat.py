"""Column files (ASPEC / CzEng layouts) and the ``concat`` source."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from wordorder.corpus.sources import fetch_source, make_source
from wordorder.errors import WordorderError


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def fetch(spec, tmp_path, src, tgt):
    out_src, out_tgt = tmp_path / "out" / "c.src", tmp_path / "out" / "c.tgt"
    n = fetch_source(spec, src, tgt, out_src, out_tgt, tmp_path / "cache")
    return (
        n,
        out_src.read_text(encoding="utf-8").splitlines(),
        out_tgt.read_text(encoding="utf-8").splitlines(),
    )


ASPEC = {
    "kind": "manual",
    "name": "ASPEC-JE",
    "instructions": "apply at jipsti",
    "separator": " ||| ",
    "columns": {"ja": 3, "en": 4},
}


def aspec_files(tmp_path):
    # ASPEC-JE train-N.txt: score ||| id ||| index ||| ja ||| en
    write(
        tmp_path / "train-1.txt",
        [
            "0.88 ||| A-1 ||| 1 ||| 猫 が いる 。 ||| There is a cat .",
            "0.87 ||| A-2 ||| 2 ||| 犬 だ 。 ||| A dog .",
        ],
    )
    write(tmp_path / "train-2.txt", ["0.50 ||| B-1 ||| 1 ||| 鳥 。 ||| A bird ."])


def test_aspec_columns_read_in_either_direction_and_globs_sorted(tmp_path):
    aspec_files(tmp_path)
    spec = {**ASPEC, "files": str(tmp_path / "train-*.txt")}
    n, ja, en = fetch(spec, tmp_path, "ja", "en")
    assert (n, ja, en) == (
        3,
        ["猫 が いる 。", "犬 だ 。", "鳥 。"],
        ["There is a cat .", "A dog .", "A bird ."],
    )
    n, en2, ja2 = fetch(spec, tmp_path, "en", "ja")
    assert (en2, ja2) == (en, ja)


def test_columns_from_a_list_of_gzip_files_with_tabs(tmp_path):
    # CzEng 1.0 plaintext: id <tab> score <tab> cs <tab> en
    with gzip.open(tmp_path / "00train.gz", "wt", encoding="utf-8") as f:
        f.write("s-1\t0.9\tAhoj .\tHello .\n")
    with gzip.open(tmp_path / "01train.gz", "wt", encoding="utf-8") as f:
        f.write("s-2\t0.8\tNa shledanou .\tGoodbye .\n")
    spec = {
        "kind": "local",
        "files": [str(tmp_path / "01train.gz"), str(tmp_path / "00train.gz")],
        "columns": {"cs": 2, "en": 3},
    }
    assert fetch(spec, tmp_path, "cs", "en") == (
        2,
        ["Na shledanou .", "Ahoj ."],
        ["Goodbye .", "Hello ."],
    )


def test_a_short_line_names_file_and_line(tmp_path):
    aspec_files(tmp_path)
    with open(tmp_path / "train-2.txt", "a", encoding="utf-8") as f:
        f.write("0.4 ||| B-2 ||| 2 ||| 魚 。\n")
    with pytest.raises(WordorderError) as e:
        fetch(
            {**ASPEC, "files": [str(tmp_path / "train-1.txt"), str(tmp_path / "train-2.txt")]},
            tmp_path,
            "ja",
            "en",
        )
    assert e.value.path == str(tmp_path / "train-2.txt") and e.value.line == 2
    assert "4 field(s)" in e.value.message
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_manual_columns_missing_file_names_it_with_instructions(tmp_path):
    with pytest.raises(WordorderError) as e:
        fetch({**ASPEC, "files": str(tmp_path / "aspec" / "dev.txt")}, tmp_path, "ja", "en")
    assert (
        str(tmp_path / "aspec" / "dev.txt") in e.value.message and "apply at jipsti" in e.value.hint
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            {"kind": "local", "files": "a.txt", "columns": {"ja": 1}},
            "'columns' in local source must map",
        ),
        ({"kind": "local", "files": [], "columns": {"ja": 1, "en": 2}}, "'files' in local source"),
        (
            {"kind": "local", "files": "a", "columns": {"ja": -1, "en": 2}},
            "'columns' in local source",
        ),
        (
            {"kind": "local", "files": "a", "columns": {"ja": 0, "en": 1}, "src": "x"},
            "unknown key 'src'",
        ),
        ({"kind": "local", "files": "a"}, "missing key 'columns'"),
        (
            {"kind": "manual", "files": "a", "columns": {"ja": 0, "en": 1}, "name": "X"},
            "missing key 'instructions'",
        ),
        (
            {"kind": "local", "files": "a", "columns": {"ja": 2, "en": 2}},
            "gives ja and en the same field 2",
        ),
        (
            {"kind": "local", "src": "c.{src}", "tgt": "c.{src}"},
            "'src' and 'tgt' of the local source are the same file",
        ),
        ({"kind": "concat", "parts": []}, "'parts' in concat source must be a non-empty list"),
        (
            {
                "kind": "concat",
                "parts": [{"kind": "local", "src": "a", "tgt": "b"}, {"kind": "url"}],
            },
            "part 2 of the concat source: missing key 'src'",
        ),
    ],
)
def test_bad_specs_are_refused_when_read(spec, message):
    with pytest.raises(WordorderError) as e:
        make_source(spec)
    assert message in str(e.value)


def test_columns_without_the_pairs_language(tmp_path):
    aspec_files(tmp_path)
    with pytest.raises(WordorderError, match="no field for de"):
        fetch({**ASPEC, "files": str(tmp_path / "train-1.txt")}, tmp_path, "en", "de")


def test_concat_reads_parts_in_order_with_per_part_and_total_limits(tmp_path):
    write(tmp_path / "a.en", ["a1", "a2", "a3"])
    write(tmp_path / "a.de", ["A1", "A2", "A3"])
    write(tmp_path / "b.en", ["b1", "b2"])
    write(tmp_path / "b.de", ["B1", "B2"])
    a = {"kind": "local", "src": str(tmp_path / "a.{src}"), "tgt": str(tmp_path / "a.{tgt}")}
    b = {"kind": "local", "src": str(tmp_path / "b.{src}"), "tgt": str(tmp_path / "b.{tgt}")}
    assert fetch({"kind": "concat", "parts": [a, b]}, tmp_path, "en", "de") == (
        5,
        ["a1", "a2", "a3", "b1", "b2"],
        ["A1", "A2", "A3", "B1", "B2"],
    )
    assert fetch({"kind": "concat", "parts": [{**a, "max_lines": 1}, b]}, tmp_path, "en", "de")[
        1
    ] == ["a1", "b1", "b2"]
    assert fetch({"kind": "concat", "max_lines": 4, "parts": [a, b]}, tmp_path, "en", "de")[1] == [
        "a1",
        "a2",
        "a3",
        "b1",
    ]


def test_concat_reports_a_broken_later_part_and_writes_nothing(tmp_path):
    write(tmp_path / "a.en", ["a1"])
    write(tmp_path / "a.de", ["A1"])
    write(tmp_path / "b.en", ["b1", "b2"])
    write(tmp_path / "b.de", ["B1"])
    a = {"kind": "local", "src": str(tmp_path / "a.{src}"), "tgt": str(tmp_path / "a.{tgt}")}
    b = {"kind": "local", "src": str(tmp_path / "b.{src}"), "tgt": str(tmp_path / "b.{tgt}")}
    with pytest.raises(WordorderError, match="line counts differ"):
        fetch({"kind": "concat", "parts": [a, {**b, "max_lines": 1}]}, tmp_path, "en", "de")
    assert not (tmp_path / "out" / "c.src").exists()


def test_concat_of_checksummed_archives_as_wmt_lays_them_out(tmp_path):
    """The WMT14 en-de recipe: members of two archives, downloaded (file://), checked and joined."""
    import hashlib
    import io
    import tarfile

    def archive(name, members):
        path = tmp_path / name
        with tarfile.open(path, "w:gz") as tar:
            for member, text in members.items():
                data = text.encode("utf-8")
                info = tarfile.TarInfo(member)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        return {
            "kind": "url",
            "url": path.as_uri(),
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        }

    europarl = archive(
        "europarl.tgz",
        {
            "training/europarl-v7.de-en.de": "Hallo .\n",
            "training/europarl-v7.de-en.en": "Hello .\n",
        },
    )
    crawl = archive(
        "crawl.tgz", {"commoncrawl.de-en.de": "Ja\nNein\n", "commoncrawl.de-en.en": "Yes\nNo\n"}
    )
    spec = {
        "kind": "concat",
        "parts": [
            {
                **europarl,
                "src": "training/europarl-v7.de-en.{src}",
                "tgt": "training/europarl-v7.de-en.{tgt}",
            },
            {**crawl, "src": "commoncrawl.de-en.{src}", "tgt": "commoncrawl.de-en.{tgt}"},
        ],
    }
    assert fetch(spec, tmp_path, "en", "de") == (
        3,
        ["Hello .", "Yes", "No"],
        ["Hallo .", "Ja", "Nein"],
    )
    bad = {**spec, "parts": [spec["parts"][0], {**spec["parts"][1], "sha256": "0" * 64}]}
    with pytest.raises(WordorderError, match="sha256"):
        fetch(bad, tmp_path, "en", "de")
