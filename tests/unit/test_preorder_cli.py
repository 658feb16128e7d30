"""The preorder stage's CLI on small files: outputs, and bad input giving one
clear error and no output."""

from __future__ import annotations

import json

import pytest

from wordorder.cli import main


@pytest.fixture
def corpus(tmp_path):
    (tmp_path / "s.tok").write_text(
        "i bought a book yesterday\nhello\n\nyes no\n", encoding="utf-8"
    )
    (tmp_path / "s.align").write_text("0-0 1-3 3-2 4-1\n0-0\n\n0-1 1-0\n", encoding="utf-8")
    return tmp_path


def test_gold_and_report(corpus, capsys):
    assert (
        main(
            [
                "preorder-gold",
                "--align",
                str(corpus / "s.align"),
                "--tok",
                str(corpus / "s.tok"),
                "--attach",
                "right",
                "--output",
                str(corpus / "gold.perm"),
            ]
        )
        == 0
    )
    assert (corpus / "gold.perm").read_text() == "0 4 2 3 1\n0\n\n1 0\n"
    out = {k: str(corpus / f"q.{k}") for k in ("json", "csv", "md", "png")}
    assert (
        main(
            [
                "preorder-report",
                "--pair",
                "en-ja",
                "--splits",
                "test",
                "--tok",
                str(corpus / "s.tok"),
                "--align",
                str(corpus / "s.align"),
                "--methods",
                "gold",
                "--perms",
                str(corpus / "gold.perm"),
                "--json",
                out["json"],
                "--csv",
                out["csv"],
                "--md",
                out["md"],
                "--figure",
                out["png"],
            ]
        )
        == 0
    )
    quality = json.loads((corpus / "q.json").read_text())["splits"]["test"]
    # identity: 0.5 (book sentence), 1 (one word), 1 (empty), 0 (swap) -> mean tau 0.625
    assert quality["identity"]["tau"] == pytest.approx(0.625)
    assert quality["identity"]["frs"] == pytest.approx((0.2 + 1 + 1 + 0) / 4)
    assert quality["gold"]["tau"] == 1.0 and quality["gold"]["complete_match"] == 1.0
    # Kawara's Eq. 7 on [-1, 1]: 0 (book), 1, 1, -1 (swap) -> 0.25; gold is 1 on both scales
    assert (
        quality["identity"]["tau_eq7"] == pytest.approx(0.25) and quality["gold"]["tau_eq7"] == 1.0
    )
    md = (corpus / "q.md").read_text()
    assert "| method | test tau | test tau_eq7 | test FRS | test CM |" in md
    assert "| identity | 0.625 | 0.250 |" in md


@pytest.mark.parametrize(
    "links, message",
    [
        ("0-0 1-3 3-2 9-1\n0-0\n\n0-1 1-0\n", "s.align:1"),  # source index out of range
        ("0-0 1-3 3-2 4-1\n0-0\n\n0-1 1_0\n", "s.align:4"),  # malformed link
        ("0-0 1-3 3-2 4-1\n0-0\n", "s.align"),  # too few lines
    ],
)
def test_bad_alignment_is_one_error_and_no_output(corpus, capsys, links, message):
    (corpus / "s.align").write_text(links, encoding="utf-8")
    assert (
        main(
            [
                "preorder-gold",
                "--align",
                str(corpus / "s.align"),
                "--tok",
                str(corpus / "s.tok"),
                "--output",
                str(corpus / "gold.perm"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert not (corpus / "gold.perm").exists() and not list(corpus.glob(".*"))


def test_bad_permutation_file_in_projection(corpus, capsys):
    (corpus / "s.bpe").write_text(
        "▁i ▁bou ght ▁a ▁book ▁yes ter day\n▁hello\n\n▁yes ▁no\n", encoding="utf-8"
    )
    (corpus / "p.perm").write_text("0 4 2 3 1\n0\n\n1 1\n", encoding="utf-8")
    outs = [str(corpus / n) for n in ("o.tok", "o.bpe", "o.pos")]
    assert (
        main(
            [
                "preorder-project",
                "--perm",
                str(corpus / "p.perm"),
                "--tok",
                str(corpus / "s.tok"),
                "--bpe",
                str(corpus / "s.bpe"),
                "--out-tok",
                outs[0],
                "--out-bpe",
                outs[1],
                "--out-positions",
                outs[2],
            ]
        )
        == 2
    )
    assert "p.perm:4" in capsys.readouterr().err
    assert not list(corpus.glob("o.*"))


def test_projection_writes_the_unit_it_is_given(corpus, capsys):
    (corpus / "s.bpe").write_text(
        "▁i ▁bou ght ▁a ▁book ▁yes ter day\n▁hello\n\n▁yes ▁no\n", encoding="utf-8"
    )
    (corpus / "p.perm").write_text("0 4 2 3 1\n0\n\n1 0\n", encoding="utf-8")
    outs = [str(corpus / n) for n in ("o.tok", "o.bpe", "o.pos")]
    args = [
        "preorder-project",
        "--perm",
        str(corpus / "p.perm"),
        "--tok",
        str(corpus / "s.tok"),
        "--bpe",
        str(corpus / "s.bpe"),
        "--out-tok",
        outs[0],
        "--out-bpe",
        outs[1],
        "--out-positions",
        outs[2],
    ]
    assert main(args) == 0  # subword positions by default
    assert (corpus / "o.pos").read_text() == "0 6 7 4 5 1 2 3\n0\n\n1 0\n"
    assert main([*args, "--unit", "word"]) == 0
    assert (corpus / "o.pos").read_text() == "0 4 4 2 3 1 1 1\n0\n\n1 0\n"


def test_projection_of_several_permutations_needs_outputs_for_each(corpus, capsys):
    (corpus / "s.bpe").write_text(
        "▁i ▁bou ght ▁a ▁book ▁yes ter day\n▁hello\n\n▁yes ▁no\n", encoding="utf-8"
    )
    (corpus / "p.perm").write_text("0 4 2 3 1\n0\n\n1 0\n", encoding="utf-8")
    perm = str(corpus / "p.perm")
    args = ["preorder-project", "--perm", perm, perm, "--tok", str(corpus / "s.tok")]
    args += ["--bpe", str(corpus / "s.bpe"), "--out-tok", str(corpus / "a.tok")]
    args += ["--out-bpe", str(corpus / "a.bpe"), str(corpus / "b.bpe")]
    args += ["--out-positions", str(corpus / "a.pos"), str(corpus / "b.pos")]
    assert main(args) == 2
    assert "2 --perm, 1 --out-tok, 2 --out-bpe and 2 --out-positions" in capsys.readouterr().err
    assert not list(corpus.glob("[ab].*"))
    assert main([*args[:10], str(corpus / "b.tok"), *args[10:]]) == 0
    assert (corpus / "a.bpe").read_text() == (corpus / "b.bpe").read_text()


def test_align_scores_aer_on_a_gold_set(shared_data, tmp_path):
    """The en-fr gold set (447 pairs) aligned as an extra split: AER in the stats,
    not in the joint file."""
    from wordorder.align.aer import read_src_tgt

    gold = shared_data / "word-alignment-gold_awesome-align"
    en, fr = read_src_tgt(gold / "enfr.src-tgt.gz")
    (tmp_path / "t.en").write_text("".join(" ".join(s) + "\n" for s in en[:100]), encoding="utf-8")
    (tmp_path / "t.fr").write_text("".join(" ".join(s) + "\n" for s in fr[:100]), encoding="utf-8")
    assert (
        main(
            [
                "align",
                "--src",
                str(tmp_path / "t.en"),
                "--tgt",
                str(tmp_path / "t.fr"),
                "--splits",
                "train",
                "--options",
                '{"length": 0.5}',
                "--gold-pairs",
                str(gold / "enfr.src-tgt.gz"),
                "--gold-links",
                str(gold / "enfr.gold.gz"),
                "--output",
                str(tmp_path / "joint.align"),
                "--stats",
                str(tmp_path / "stats.json"),
            ]
        )
        == 0
    )
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["splits"] == {"train": 100}
    assert len((tmp_path / "joint.align").read_text().splitlines()) == 100
    assert stats["aer"]["sentences"] == 447 and stats["aer"]["sure"] == 4038
    assert stats["aer"]["aer"] < 0.3  # eflomal + grow-diag-final-and gives ~0.18 on this set
