"""The split and select steps: cleaning the training corpus, holdouts, explicit test sets."""

from __future__ import annotations

import json

import pytest

from wordorder.corpus.runner import make_splits, select_split, write_splits
from wordorder.errors import WordorderError


def corpus(tmp_path, name, src_lines, tgt_lines):
    (tmp_path / f"{name}.en").write_text("".join(s + "\n" for s in src_lines), encoding="utf-8")
    (tmp_path / f"{name}.ja").write_text("".join(s + "\n" for s in tgt_lines), encoding="utf-8")


def test_holdouts_come_from_cleaned_training_lines_and_leave_training(tmp_path):
    src = [f"w{i} x" for i in range(30)] + ["", "a " * 60]  # line 30 empty, line 31 too long
    tgt = [f"v{i} y" for i in range(30)] + ["z", "b"]
    corpus(tmp_path, "train", src, tgt)
    # explicit sets are not filtered
    corpus(tmp_path, "news", ["n1", "n2", "a " * 60], ["m1", "m2", "m3"])
    data = {
        "train": {"kind": "local"},
        "dev": {"holdout": 5},
        "test": {"held": {"holdout": 4}, "news": {"kind": "local"}},
    }
    table = make_splits("en-ja", data, {"max_len": 50}, seed=3, tok_dir=tmp_path)
    assert table["sizes"] == {"train": 21, "dev": 5, "held": 4, "news": 3}
    assert table["clean"]["empty"] == 1 and table["clean"]["too_long"] == 1
    lines = {name: set(s["lines"]) for name, s in table["splits"].items()}
    assert lines["train"] | lines["dev"] | lines["held"] == set(range(30))
    assert not lines["train"] & lines["dev"] and not lines["dev"] & lines["held"]
    assert table["splits"]["news"] == {"corpus": "news", "lines": [0, 1, 2]}
    # Deterministic for a seed.
    assert make_splits("en-ja", data, {"max_len": 50}, seed=3, tok_dir=tmp_path) == table


def test_an_empty_line_in_a_test_set_is_refused(tmp_path):
    corpus(tmp_path, "train", [f"w{i} x" for i in range(20)], [f"v{i} y" for i in range(20)])
    corpus(tmp_path, "news", ["n1", "n2", "n3"], ["m1", " ", "m3"])
    data = {"train": {"kind": "local"}, "dev": {"holdout": 5}, "test": {"news": {"kind": "local"}}}
    with pytest.raises(WordorderError, match=r"raw/news.ja:2: empty line in the 'news' set") as e:
        make_splits("en-ja", data, {}, seed=3, tok_dir=tmp_path)
    assert "remove the pair from both files" in e.value.hint


def test_select_writes_both_files_of_a_split(tmp_path):
    corpus(tmp_path, "train", [f"w{i}" for i in range(10)], [f"v{i}" for i in range(10)])
    (tmp_path / "raw.en").write_text("".join(f"W{i}\t!\n" for i in range(10)), encoding="utf-8")
    data = {"train": {"kind": "local"}, "dev": {"holdout": 3}, "test": {"t": {"holdout": 2}}}
    table = make_splits("en-ja", data, {}, seed=1, tok_dir=tmp_path)
    write_splits(table, tmp_path / "splits.json")
    n = select_split(
        tmp_path / "splits.json",
        "dev",
        tmp_path / "raw.en",
        tmp_path / "train.en",
        tmp_path / "dev.en",
        tmp_path / "dev.tok.en",
    )
    assert n == 3
    picked = json.loads((tmp_path / "splits.json").read_text())["splits"]["dev"]["lines"]
    # tab normalised
    assert (tmp_path / "dev.en").read_text().splitlines() == [f"W{i} !" for i in picked]
    assert (tmp_path / "dev.tok.en").read_text().splitlines() == [f"w{i}" for i in picked]


def test_select_refuses_raw_and_tokenized_files_that_disagree(tmp_path):
    corpus(tmp_path, "train", [f"w{i}" for i in range(10)], [f"v{i}" for i in range(10)])
    (tmp_path / "raw.en").write_text("only\none\n", encoding="utf-8")
    data = {"train": {"kind": "local"}, "dev": {"holdout": 3}, "test": {"t": {"holdout": 2}}}
    write_splits(make_splits("en-ja", data, {}, seed=1, tok_dir=tmp_path), tmp_path / "splits.json")
    with pytest.raises(WordorderError, match="2 lines but the tokenized file"):
        select_split(
            tmp_path / "splits.json",
            "dev",
            tmp_path / "raw.en",
            tmp_path / "train.en",
            tmp_path / "dev.en",
            tmp_path / "dev.tok.en",
        )
    assert not (tmp_path / "dev.en").exists() and not (tmp_path / "dev.tok.en").exists()


def test_holdouts_larger_than_the_corpus_are_an_error(tmp_path):
    corpus(tmp_path, "train", ["a", "b", "c"], ["x", "y", "z"])
    data = {"train": {"kind": "local"}, "dev": {"holdout": 2}, "test": {"t": {"holdout": 2}}}
    with pytest.raises(WordorderError):
        make_splits("en-ja", data, {}, seed=1, tok_dir=tmp_path)


def _norm(line):
    return " ".join(line.split())


def test_dev_and_test_sentences_leave_training_counted_per_reason(tmp_path):
    src = [f"w{i} x" for i in range(20)] + ["n1 a", "n1 a", "w3  x ", "p q", "n2 b", "s t"]
    tgt = [f"v{i} y" for i in range(20)] + ["m1 a", "other", "new", "m2 b", "zz", "d5 y"]
    corpus(tmp_path, "train", src, tgt)
    corpus(tmp_path, "news", ["n1 a", "n2  b"], ["m1  a", "m2 b"])  # external test set
    corpus(tmp_path, "dev", ["w3 x", "dd"], ["v3 y", "d5 y"])  # external dev set
    data = {
        "train": {"kind": "local"},
        "dev": {"kind": "local"},
        "test": {"news": {"kind": "local"}},
    }
    table = make_splits("en-ja", data, {}, seed=1, tok_dir=tmp_path)
    # line 20 is a news pair; 21 and 24 have a news source, 22 (spaced) and 3 a dev source;
    # 23 has a news target, 25 a dev target
    assert table["overlap"] == {"pair": 2, "source": 3, "target": 2, "removed": 7}
    assert table["splits"]["train"]["lines"] == [i for i in range(20) if i != 3]
    assert table["sizes"] == {"train": 19, "dev": 2, "news": 2}


def test_every_copy_of_a_held_out_sentence_leaves_training(tmp_path):
    # 60 distinct pairs, each repeated (same pair, same source only, or same target only)
    src = (
        [f"s{i} a" for i in range(60)] * 2
        + [f"s{i} a" for i in range(0, 60, 3)]
        + ["u1", "u2"] * 10
    )
    tgt = (
        [f"t{i} b" for i in range(60)] * 2
        + [f"x{i}" for i in range(0, 60, 3)]
        + ["t5 b", "t7 b"] * 10
    )
    corpus(tmp_path, "train", src, tgt)
    data = {"train": {"kind": "local"}, "dev": {"holdout": 10}, "test": {"held": {"holdout": 15}}}
    table = make_splits("en-ja", data, {}, seed=4, tok_dir=tmp_path)
    held = [i for name in ("dev", "held") for i in table["splits"][name]["lines"]]
    train = table["splits"]["train"]["lines"]
    held_src, held_tgt = {_norm(src[i]) for i in held}, {_norm(tgt[i]) for i in held}
    assert not any(src[i] in held_src or tgt[i] in held_tgt for i in train)
    candidates = set(range(len(src))) - set(held)  # nothing was cleaned away here
    removed = candidates - set(train)
    # nothing removed without cause
    assert all(src[i] in held_src or tgt[i] in held_tgt for i in removed)
    assert table["overlap"]["removed"] == len(removed) > 0
    assert sum(table["overlap"][r] for r in ("pair", "source", "target")) == len(removed)
    assert make_splits("en-ja", data, {}, seed=4, tok_dir=tmp_path) == table


def test_copies_of_test_pairs_in_the_corpus_are_never_drawn_into_dev(tmp_path):
    """Issue 49, case 2: test pairs copied into the training corpus were drawn into the dev
    holdout before the overlap removal (3 of 20 dev sentences were test sentences), so the best
    checkpoint was chosen partly on the test set. The holdouts are drawn from the rest."""
    test_src, test_tgt = [f"t{i} q" for i in range(10)], [f"u{i} r" for i in range(10)]
    src = [f"w{i} x" for i in range(40)] + test_src * 3
    tgt = [f"v{i} y" for i in range(40)] + test_tgt * 3
    corpus(tmp_path, "train", src, tgt)
    corpus(tmp_path, "news", test_src, test_tgt)
    data = {"train": {"kind": "local"}, "dev": {"holdout": 20}, "test": {"news": {"kind": "local"}}}
    for seed in range(5):
        table = make_splits("en-ja", data, {}, seed=seed, tok_dir=tmp_path)
        dev = table["splits"]["dev"]["lines"]
        assert len(dev) == 20 and all(i < 40 for i in dev), (seed, dev)
        assert table["overlap"]["removed"] == 30 and table["sizes"]["train"] == 20
        assert table["dev_test"] == {}


def test_dev_pairs_repeated_in_a_held_out_test_set_are_counted(tmp_path):
    """A corpus that repeats a sentence can place one copy in dev and another in a held-out
    test set: splits.json counts them (``dev_test``) and the step warns."""
    src = [f"s{i} a" for i in range(30)] * 2
    tgt = [f"t{i} b" for i in range(30)] * 2
    corpus(tmp_path, "train", src, tgt)
    data = {"train": {"kind": "local"}, "dev": {"holdout": 10}, "test": {"held": {"holdout": 10}}}
    table = make_splits("en-ja", data, {}, seed=2, tok_dir=tmp_path)
    dev = {src[i] for i in table["splits"]["dev"]["lines"]}
    held = {src[i] for i in table["splits"]["held"]["lines"]}
    assert table["dev_test"] == ({"held": len(dev & held)} if dev & held else {})
    assert dev & held  # this seed draws some (the count above is then not vacuous)
