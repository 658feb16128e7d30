"""Cross-fitting of the learned preorderers (preorder.<method>.cross_fit): the fold split, fold
models that never see their fold, applying K models (sentence i: model i % K) through the CLI,
and the errors for bad folds and wrong model lists."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from test_btg import _synthetic

from wordorder.cli import main
from wordorder.errors import WordorderError
from wordorder.preorder.btg import BTGPreorderer
from wordorder.preorder.crossfit import check_fold, check_models, training_pool
from wordorder.preorder.permutation import read_permutations
from wordorder.preorder.runner import rvnn_apply_step, rvnn_train_step, sample_indices, train_sample
from wordorder.preorder.rvnn import RvNNPreorderer
from wordorder.syntax.binarize import from_sexpr
from wordorder.syntax.conllu import Sentence, write_conllu

BTG_OPTIONS = json.dumps({"beam": 3, "iterations": 3, "hash_bits": 14})


@pytest.mark.parametrize("n, f", [(10, 3), (7, 7), (100, 4)])
def test_every_sentence_is_held_out_by_exactly_one_fold(n, f):
    held = [sorted(set(range(n)) - set(training_pool(n, (k, f)).tolist())) for k in range(f)]
    assert sorted(i for fold in held for i in fold) == list(range(n))
    assert all(i % f == k for k, fold in enumerate(held) for i in fold)
    assert training_pool(n, None).tolist() == list(range(n))


def test_the_sample_is_drawn_from_outside_the_fold_with_the_usual_seed():
    for k in range(3):
        ids = train_sample(50, 20, 1, (k, 3))
        assert len(ids) == 20 and not (ids % 3 == k).any() and (np.diff(ids) > 0).all()
        assert (ids == train_sample(50, 20, 1, (k, 3))).all()
    # without folds, the sample of before: the default cross_fit 1 keeps its outputs
    assert (train_sample(50, 20, 1, None) == sample_indices(50, 20, 1)).all()
    assert len(train_sample(50, None, 1, (0, 3))) == 50 - 17


@pytest.mark.parametrize(
    "fold, folds, n, message",
    [
        (3, 3, 10, r"--fold 3 is outside \[0, 3\)"),
        (-1, 3, 10, r"--fold -1 is outside \[0, 3\)"),
        (0, 1, 10, "at least 2 folds"),
        (0, None, 10, "go together"),
        (None, 2, 10, "go together"),
        (0, 20, 10, "20 folds for 10 training sentences"),
    ],
)
def test_bad_folds(fold, folds, n, message):
    with pytest.raises(WordorderError, match=message):
        check_fold(fold, folds, n, "btg")
    assert check_fold(None, None, n, "btg") is None and check_fold(1, 3, n, "btg") == (1, 3)


def test_the_model_list_must_be_one_full_model_or_the_folds_in_order(tmp_path):
    paths = [tmp_path / f"m{k}" for k in range(3)]
    check_models([None], paths[:1])
    check_models([(0, 3), (1, 3), (2, 3)], paths)
    cases: list[tuple[list[tuple[int, int] | None], str]] = [
        ([(0, 2)], "fold 0 of 2\\) given alone"),
        ([(1, 2), (0, 2)], "model 1 of 2 is fold 1 of 2, expected fold 0 of 2"),
        ([(0, 3), (1, 3)], "model 1 of 2 is fold 0 of 3"),
        ([(0, 2), None], "model 2 of 2 is the full model"),
    ]
    for tags, message in cases:
        with pytest.raises(WordorderError, match=message):
            check_models(tags, paths[: len(tags)])


# --- the CLI on files ------------------------------------------------------------------------


def _write_corpus(folder, sents, links, unaligned=()):
    """tok, CoNLL-U (POS in both columns), word classes, alignments (and right-branching trees);
    the sentences in ``unaligned`` get no links."""
    folder.mkdir(exist_ok=True)
    lines = [" ".join(w) for w, _, _ in sents]
    (folder / "s.tok").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    with open(folder / "s.conllu", "w", encoding="utf-8") as f:
        write_conllu(f, [Sentence(list(w), list(w), list(p), list(p)) for w, p, _ in sents])
    words = sorted({x for w, _, _ in sents for x in w})
    classes = "".join(f"{x}\t{int(x[1:]) % 3}\n" for x in words)
    (folder / "s.classes").write_text(classes, encoding="utf-8")
    lines = [" ".join(f"{s}-{t}" for s, t in lk) for lk in links]
    lines = ["" if i in unaligned else line for i, line in enumerate(lines)]
    (folder / "s.align").write_text("".join(line + "\n" for line in lines), encoding="utf-8")

    def right_branching(a, n):
        return str(a) if a == n - 1 else f"({a} {right_branching(a + 1, n)})"

    trees = "".join(right_branching(0, len(w)) + "\n" for w, _, _ in sents)
    (folder / "s.tree").write_text(trees, encoding="utf-8")
    return folder


def _btg_train(folder, model, fold=None, folds=None, align="s.align"):
    args = ["btg-train", "--options", BTG_OPTIONS, "--model", str(folder / model)]
    args += ["--stats", str(folder / f"{model}.json"), "--align", str(folder / align)]
    args += [f"--{k}={folder / f's.{k}'}" for k in ("tok", "conllu", "classes")]
    if fold is not None:
        args += ["--fold", str(fold), "--folds", str(folds)]
    return main(args)


def _btg_apply(folder, *models):
    args = ["btg-apply", "--model", *(str(folder / m) for m in models)]
    args += ["--output", str(folder / "o.perm")]
    return main(args + [f"--{k}={folder / f's.{k}'}" for k in ("tok", "conllu", "classes")])


def _perms(path, sents):
    return read_permutations(path, [len(w) for w, _, _ in sents])


def test_a_fold_model_never_trains_on_its_fold(tmp_path, capsys):
    """Fold 1's sentences (i % 3 == 1) have no links: a model trained on any of them counts them
    as skipped; the fold-1 model skips none, the fold-0 model all of them."""
    sents, links = _synthetic(np.random.default_rng(5), 60)
    folder = _write_corpus(tmp_path, sents, links, unaligned=set(range(1, 60, 3)))
    assert _btg_train(folder, "f1.npz", 1, 3) == 0 and _btg_train(folder, "f0.npz", 0, 3) == 0
    f1, f0 = (json.loads((folder / f"{m}.npz.json").read_text()) for m in ("f1", "f0"))
    assert {k: f1[k] for k in ("fold", "folds", "held_out", "sampled")} == {
        "fold": 1,
        "folds": 3,
        "held_out": 20,
        "sampled": 40,
    }
    assert f1["used"] == 40 and f1["skipped"]["unaligned"] == 0
    assert f0["sampled"] == 40 and f0["skipped"]["unaligned"] == 20 and f0["used"] == 20
    assert BTGPreorderer.load(folder / "f1.npz").fold == (1, 3)


def test_k_models_preorder_sentence_i_with_model_i_mod_k(tmp_path, capsys):
    """Two deliberately different fold models (one trained on the SOV alignments, one on
    monotone ones): sentence i gets exactly the preorder of model i % 2."""
    sents, links = _synthetic(np.random.default_rng(7), 80)
    folder = _write_corpus(tmp_path, sents, links)
    monotone = "".join(" ".join(f"{i}-{i}" for i in range(len(w))) + "\n" for w, _, _ in sents)
    (folder / "mono.align").write_text(monotone, encoding="utf-8")
    assert _btg_train(folder, "f0.npz", 0, 2) == 0
    assert _btg_train(folder, "f1.npz", 1, 2, align="mono.align") == 0
    assert _btg_apply(folder, "f0.npz", "f1.npz") == 0
    got = _perms(folder / "o.perm", sents)
    models = [BTGPreorderer.load(folder / m) for m in ("f0.npz", "f1.npz")]
    alone = [m.preorder(sents, progress_bar=False) for m in models]
    differ = [i for i in range(len(sents)) if not np.array_equal(alone[0][i], alone[1][i])]
    assert len(differ) > 20  # the models disagree, so the test sees which one was used
    assert all(np.array_equal(got[i], alone[i % 2][i]) for i in range(len(sents)))
    # the full model (no fold) alone is today's behaviour
    assert _btg_train(folder, "full.npz") == 0 and _btg_apply(folder, "full.npz") == 0
    full = BTGPreorderer.load(folder / "full.npz")
    assert full.fold is None and "fold" not in json.loads((folder / "full.npz.json").read_text())
    expected = full.preorder(sents, progress_bar=False)
    assert all(np.array_equal(a, b) for a, b in zip(_perms(folder / "o.perm", sents), expected))


@pytest.mark.parametrize(
    "case, message",
    [
        ("fold out of range", "--fold 2 is outside [0, 2)"),
        ("more folds than sentences", "70 folds for 30 training sentences"),
        ("models in the wrong order", "f1.npz: model 1 of 2 is fold 1 of 2, expected fold 0 of 2"),
        ("one fold model alone", "f0.npz: a fold model (fold 0 of 2) given alone"),
    ],
)
def test_bad_folds_and_model_lists_are_one_error_and_no_output(tmp_path, capsys, case, message):
    sents, links = _synthetic(np.random.default_rng(3), 30)
    folder = _write_corpus(tmp_path, sents, links)
    if case == "fold out of range":
        assert _btg_train(folder, "bad.npz", 2, 2) == 2
    elif case == "more folds than sentences":
        assert _btg_train(folder, "bad.npz", 0, 70) == 2
    else:
        assert _btg_train(folder, "f0.npz", 0, 2) == 0 and _btg_train(folder, "f1.npz", 1, 2) == 0
        capsys.readouterr()
        models = ["f1.npz", "f0.npz"] if case == "models in the wrong order" else ["f0.npz"]
        assert _btg_apply(folder, *models) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err.splitlines()[0], err
    assert not (folder / "bad.npz").exists() and not (folder / "o.perm").exists()


def test_rvnn_fold_models(tmp_path):
    """RvNN: half of fold 1 (i % 4 == 1) is unaligned: the fold-1 model skips none of them, the
    fold-0 model all; two fold models preorder the sentences i % 2 == k each, as each alone."""
    torch.set_num_threads(1)
    sents, links = _synthetic(np.random.default_rng(11), 40)
    folder = _write_corpus(tmp_path, sents, links, unaligned=set(range(1, 40, 4)))
    options = {"epochs": 1, "batch_size": 10, "embed": 8, "hidden": 8, "device": "cpu"}
    tok, conllu, tree, align = (folder / f"s.{k}" for k in ("tok", "conllu", "tree", "align"))
    out = [(folder / f"r{k}.pt", folder / f"r{k}.json") for k in (0, 1)]
    info = [rvnn_train_step(tok, conllu, tree, align, *out[k], options, k, 2) for k in (0, 1)]
    assert info[1]["skipped"]["no_links"] == 0 and info[1]["used"] == 20
    assert info[0]["skipped"]["no_links"] == 10 and info[0]["used"] == 10
    assert info[0]["held_out"] == 20 and info[0]["fold"] == 0 and info[0]["folds"] == 2
    models = [folder / "r0.pt", folder / "r1.pt"]
    rvnn_apply_step(models, tok, conllu, tree, folder / "o.perm")
    got = _perms(folder / "o.perm", sents)
    words = [list(w) for w, _, _ in sents]
    pos = [list(p) for _, p, _ in sents]
    trees = [from_sexpr(line) for line in (folder / "s.tree").read_text().splitlines()]
    alone = [RvNNPreorderer.load(m).preorder(words, pos, trees, progress_bar=False) for m in models]
    assert [RvNNPreorderer.load(m).fold for m in models] == [(0, 2), (1, 2)]
    assert all(np.array_equal(got[i], alone[i % 2][i]) for i in range(len(sents)))
    with pytest.raises(WordorderError, match="model 1 of 2 is fold 1 of 2"):
        rvnn_apply_step(models[::-1], tok, conllu, tree, folder / "o2.perm")
