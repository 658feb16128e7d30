"""eflomal alignment of several splits together: outputs, empty lines, errors, atomicity."""

from __future__ import annotations

import random

import numpy as np
import pytest

from wordorder.align.eflomal_run import align_corpus, check_options
from wordorder.align.pharaoh import read_alignments
from wordorder.errors import WordorderError


def toy_corpus(n: int, seed: int) -> tuple[list[str], list[str]]:
    """Source words s0..s29, target word tK translates sK, target order reversed."""
    rng = random.Random(seed)
    src, tgt = [], []
    for _ in range(n):
        ids = [rng.randrange(30) for _ in range(rng.randint(2, 7))]
        src.append(" ".join(f"s{i}" for i in ids))
        tgt.append(" ".join(f"t{i}" for i in reversed(ids)))
    return src, tgt


def write_split(path_stem, src, tgt):
    s, t = path_stem.with_suffix(".src"), path_stem.with_suffix(".tgt")
    s.write_text("".join(x + "\n" for x in src))
    t.write_text("".join(x + "\n" for x in tgt))
    return s, t


def test_align_splits_together(tmp_path):
    train = toy_corpus(400, 1)
    test = toy_corpus(20, 2)
    # an empty side on either end, and a pair with both sides empty, get empty alignment lines
    test = (test[0] + ["s1 s2", "", ""], test[1] + ["", "t3", ""])
    paths = [write_split(tmp_path / "train", *train), write_split(tmp_path / "test", *test)]
    outs = [tmp_path / "train.align", tmp_path / "test.align"]
    stats = align_corpus(
        [p[0] for p in paths], [p[1] for p in paths], outs, {"model": 2}, work_dir=tmp_path
    )
    assert stats["sentences_per_split"] == [400, 23] and stats["sentences"] == 423
    assert stats["left_out_pairs"] == 3 and stats["options"]["symmetrize"] == "grow-diag-final-and"
    assert 0 <= stats["unaligned_source"] <= 1 and stats["links_per_sentence"] > 1
    lines = outs[1].read_text().split("\n")
    assert len(lines) == 24 and lines[-4:] == ["", "", "", ""]
    correct = total = 0
    for (src, tgt), out in zip((train, test), outs):
        links = read_alignments(out, [len(x.split()) for x in src], [len(x.split()) for x in tgt])
        for s, t, a in zip(src, tgt, links):
            s, t = s.split(), t.split()
            correct += sum(s[i][1:] == t[j][1:] for i, j in a.tolist())
            total += len(a)
    # a perfectly consistent toy pair: nearly every link joins a word and its translation
    assert total > 1500 and correct / total > 0.9
    assert not list(tmp_path.glob(".eflomal.*"))  # temporary files are gone


def test_errors_leave_no_outputs(tmp_path):
    s, t = write_split(tmp_path / "a", ["s1 s2", "s3"], ["t1 t2"])
    out = tmp_path / "a.align"
    with pytest.raises(WordorderError, match="line counts differ"):
        align_corpus([s], [t], [out], {})
    assert not out.exists()
    with pytest.raises(WordorderError, match="unknown align option"):
        align_corpus([s], [t], [out], {"modle": 3})
    with pytest.raises(WordorderError, match="symmetrize"):
        check_options({"symmetrize": "gdfa"})
    with pytest.raises(WordorderError, match="model"):
        check_options({"model": 4})
    with pytest.raises(WordorderError, match="one source, target and output"):
        align_corpus([s], [t], [], {})


def test_all_pairs_empty(tmp_path):
    s, t = write_split(tmp_path / "e", ["", "a"], ["b", ""])
    stats = align_corpus([s], [t], [tmp_path / "e.align"], {"symmetrize": "union"})
    assert (
        (tmp_path / "e.align").read_text() == "\n\n"
        and stats["links"] == 0
        and stats["left_out_pairs"] == 2
    )
    assert np.isclose(stats["unaligned_source"], 1.0)
