"""Top-down BTG preorderer: features, beam search, training, model files
(docs/algorithms.md §BTG)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from wordorder.errors import WordorderError
from wordorder.preorder.btg import BTGOptions, BTGPreorderer
from wordorder.preorder.btg_features import (
    DEPENDENT,
    EMPTY,
    INDEPENDENT,
    N_FEATURES,
    TEMPLATE_NAMES,
    feature_rows,
    feature_templates,
    hash_tokens,
    template_key,
    token_hash,
)
from wordorder.preorder.btg_search import search
from wordorder.preorder.constraint import (
    actions_to_subtrees,
    btg_constraint,
    derivation_valid,
    permutation_from_actions,
)
from wordorder.preorder.metrics import score_orders

SENT = (
    ["i", "bought", "a", "book", "yesterday"],
    ["PRP", "VBD", "DT", "NN", "NN"],
    ["c1", "c2", "c3", "c4", "c5"],
)


def test_template_inventory():
    assert N_FEATURES == 78 == len(TEMPLATE_NAMES) == len(set(TEMPLATE_NAMES))
    assert len(DEPENDENT) == 17 and len(INDEPENDENT) == 61
    assert [TEMPLATE_NAMES[t] for t in DEPENDENT[:2]] == ["NT", "NT&SIDE"]
    assert all("NT&SIDE" in TEMPLATE_NAMES[t] for t in DEPENDENT[2:])
    assert TEMPLATE_NAMES[6] == "word:Ll-" and TEMPLATE_NAMES[30] == "pos:Ll-"
    assert TEMPLATE_NAMES[77] == "class:NT&SIDE&Ll&Rr"


def test_templates_on_a_hand_example():
    # Span [1, 5) = "bought a book yesterday" split at 4, the right child of an INV node.
    f = feature_templates(SENT, 1, 5, 4, nt=1, side=1)
    assert len(f) == 78 and [t[0] for t in f] == list(range(78))
    assert f[:6] == [(0,), (1, 0), (2, 4), (3, 3, 1), (4, 1), (5, 1, 1)]
    word = {TEMPLATE_NAMES[t[0]][5:]: t[1:] for t in f[6:30]}
    assert word == {
        "Ll-": ("i",),
        "Ll": ("bought",),
        "Lr": ("book",),
        "Rl": ("yesterday",),
        "Rr": ("yesterday",),
        "Rr+": (None,),
        "Ll-&Ll": ("i", "bought"),
        "Ll&Lr": ("bought", "book"),
        "Ll&Rl": ("bought", "yesterday"),
        "Ll&Rr": ("bought", "yesterday"),
        "Lr&Rl": ("book", "yesterday"),
        "Lr&Rr": ("book", "yesterday"),
        "Rl&Rr": ("yesterday", "yesterday"),
        "Rr&Rr+": ("yesterday", None),
        "Lr-&Lr&Rl": ("a", "book", "yesterday"),
        "Ll&Lr&Rl": ("bought", "book", "yesterday"),
        "Lr&Rl&Rr": ("book", "yesterday", "yesterday"),
        "Lr&Rl&Rl+": ("book", "yesterday", None),
        "Ll&Lr&Rl&Rr": ("bought", "book", "yesterday", "yesterday"),
        "NT&SIDE&Ll": (1, 1, "bought"),
        "NT&SIDE&Lr": (1, 1, "book"),
        "NT&SIDE&Rl": (1, 1, "yesterday"),
        "NT&SIDE&Rr": (1, 1, "yesterday"),
        "NT&SIDE&Ll&Rr": (1, 1, "bought", "yesterday"),
    }
    assert f[30 + 1] == (31, "VBD") and f[54 + 2] == (56, "c4")  # pos:Ll, class:Lr
    root = feature_templates(SENT, 0, 5, 2, nt=2, side=2)
    assert root[1:6] == [(1, 1), (2, 5), (3, 2, 3), (4, 2), (5, 2, 2)] and root[6] == (6, None)


@pytest.mark.parametrize(
    "split", [(0, 5, 1, 2, 2), (1, 5, 4, 1, 1), (1, 4, 2, 1, 0), (2, 4, 3, 0, 1), (0, 2, 1, 0, 0)]
)
def test_feature_rows_hash_the_templates(split):
    b, e, p, nt, side = split
    hashes, _ = hash_tokens([SENT])
    rows = feature_rows(hashes, b, e, p, nt, side, hash_bits=22)
    keys = [template_key(f) for f in feature_templates(SENT, b, e, p, nt, side)]
    assert rows.tolist() == [k >> 42 for k in keys]
    assert len(set(keys)) == 78  # template ids keep equal values apart
    other = feature_rows(hashes, b, e, p, 0 if nt else 1, 1 - side if side < 2 else 0, hash_bits=22)
    assert (other[INDEPENDENT] == rows[INDEPENDENT]).all() and (
        other[DEPENDENT] != rows[DEPENDENT]
    ).all()


def test_token_hashes_are_stable():
    hashes, offsets = hash_tokens([SENT, (["a"], ["DT"], ["c3"])])
    assert offsets.tolist() == [0, 5, 6] and hashes.shape == (6, 3) and hashes.dtype == np.uint64
    assert int(hashes[2, 0]) == int(hashes[5, 0]) == token_hash("a") != token_hash("A")
    assert token_hash("a") == int.from_bytes(
        hashlib.blake2b(b"a", digest_size=8).digest(), "little"
    )
    assert EMPTY not in {int(h) for h in hashes.ravel()}


# --- beam search against exhaustive enumeration -------------------------------------------------


def _derivations(n):
    """All (actions, [(b, e, p, label, nt, side)]) of an n-word sentence."""

    def rec(stack, acts, nodes):
        if not stack:
            yield acts, nodes
            return
        b, e, nt, side = stack[-1]
        for p in range(b + 1, e):
            for lab in (0, 1):
                kids = ([(b, p, lab, 0)] if p - b >= 2 else []) + (
                    [(p, e, lab, 1)] if e - p >= 2 else []
                )
                yield from rec(
                    stack[:-1] + kids, acts + [(p, lab)], nodes + [(b, e, p, lab, nt, side)]
                )

    yield from rec([(0, n, 2, 2)], [], [])


def _score(hashes, W, bits, nodes, cache):
    total = 0.0
    for b, e, p, lab, nt, side in nodes:
        key = (b, e, p, nt, side)
        if key not in cache:
            cache[key] = feature_rows(hashes, b, e, p, nt, side, bits)
        total += float(W[cache[key], lab].astype(np.float64).sum())
    return total


def _random_sentence(rng, n):
    return (
        [f"w{rng.integers(4)}" for _ in range(n)],
        [f"P{rng.integers(3)}" for _ in range(n)],
        [f"c{rng.integers(2)}" for _ in range(n)],
    )


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_beam_search_is_exact_with_a_wide_beam_and_valid_with_a_narrow_one(n):
    rng = np.random.default_rng(n)
    bits = 10
    W = rng.normal(size=(1 << bits, 2)).astype(np.float32)
    hashes, _ = hash_tokens([_random_sentence(rng, n)])
    cache: dict = {}
    scores = [_score(hashes, W, bits, nodes, cache) for _, nodes in _derivations(n)]
    for memo in (True, False):
        best, _, _ = search(hashes, W, bits, beam=1500, memo=memo)
        assert len(best) == n - 1
        nodes = next(
            nd for acts, nd in _derivations(n) if acts == [tuple(a) for a in best.tolist()]
        )
        assert _score(hashes, W, bits, nodes, cache) == pytest.approx(max(scores), abs=1e-4)
    for beam in (1, 3):
        acts, _, _ = search(hashes, W, bits, beam=beam)
        order = permutation_from_actions(
            n, actions_to_subtrees(n, [tuple(a) for a in acts.tolist()])
        )
        assert sorted(order.tolist()) == list(range(n))


@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_oracle_is_the_best_valid_derivation(n):
    rng = np.random.default_rng(10 + n)
    bits = 10
    W = rng.normal(size=(1 << bits, 2)).astype(np.float32)
    hashes, _ = hash_tokens([_random_sentence(rng, n)])
    target = rng.permutation(n)
    links = np.array([[i, target[i]] for i in range(n) if rng.random() < 0.8] or [[0, 0]])
    ranks, reason = btg_constraint(links, n)
    if ranks is None:
        ranks = np.full(n, -1)  # not parsable / unaligned: everything is valid
    cache: dict = {}
    valid = {
        tuple(acts): _score(hashes, W, bits, nodes, cache)
        for acts, nodes in _derivations(n)
        if derivation_valid(ranks, n, acts)
    }
    _, ref, early = search(hashes, W, bits, beam=1500, ranks=ranks)
    assert not early and len(ref) == n - 1
    ref_acts = tuple(tuple(a) for a in ref.tolist())
    assert ref_acts in valid and valid[ref_acts] == pytest.approx(max(valid.values()), abs=1e-4)


def test_early_update_when_no_valid_state_survives():
    hashes, _ = hash_tokens([(["b", "a"], ["X", "Y"], ["1", "2"])])
    W = np.zeros((1 << 10, 2), np.float32)
    sys, ref, early = search(hashes, W, 10, beam=1, ranks=np.array([1, 0]))
    assert early and sys.tolist() == [[1, 0]] and ref.tolist() == [[1, 1]]
    sys, ref, early = search(hashes, W, 10, beam=2, ranks=np.array([1, 0]))
    assert not early and sys.tolist() == [[1, 0]] and ref.tolist() == [[1, 1]]


# --- training -------------------------------------------------------------------------------------


def test_one_pa_update_is_exact():
    sents = [(["b", "a"], ["X", "Y"], ["1", "2"])]
    links = [np.array([[0, 1], [1, 0]])]
    model, info = BTGPreorderer.train(sents, links, BTGOptions(iterations=5), progress_bar=False)
    assert [it["errors"] for it in info["iterations"]] == [1, 0] and info["converged"]
    # PA-I: loss = 0 + sqrt(1), ||Δ||² = 2 × 78, so τ = 1/156; averaged over N = 5 × 1
    # steps with (N - 0)/N = 1.
    w = model.weights
    assert np.count_nonzero(w) == 156
    assert np.allclose(w[w != 0], np.where(w[w != 0] > 0, 1, -1) / 156)
    assert (w[:, 1] >= 0).all() and (w[:, 0] <= 0).all()
    assert model.preorder(sents, progress_bar=False)[0].tolist() == [1, 0]
    perceptron, _ = BTGPreorderer.train(
        sents, links, BTGOptions(update="perceptron"), progress_bar=False
    )
    assert set(np.unique(perceptron.weights).tolist()) == {-1.0, 0.0, 1.0}
    pruned, _ = BTGPreorderer.train(sents, links, BTGOptions(min_updates=2), progress_bar=False)
    assert np.count_nonzero(pruned.weights) == 0


_LEX = {pos: [f"{pos.lower()}{i}" for i in range(12)] for pos in ("D", "A", "N", "V", "P")}


def _synthetic(rng, count):
    """English-like clauses NP V NP [P NP] whose target is SOV, noun-adjective, postpositional."""
    sents, links = [], []
    for _ in range(count):

        def np_():
            tags = ["D", "A", "N"] if rng.random() < 0.5 else ["D", "N"]
            return tags, ([0, 2, 1] if len(tags) == 3 else [0, 1])  # target order within the phrase

        parts = [np_(), (["V"], [0]), np_()] + ([(["P"], [0]), np_()] if rng.random() < 0.5 else [])
        src, pos = [], []
        for tags, _ in parts:
            start = len(src)
            src += [start + k for k in range(len(tags))]
            pos += tags
        starts = np.cumsum([0] + [len(t) for t, _ in parts])
        phrase_order = [0, 2] + ([4, 3] if len(parts) == 5 else []) + [1]
        tgt = [starts[k] + i for k in phrase_order for i in parts[k][1]]
        words = [str(rng.choice(_LEX[t])) for t in pos]
        sents.append((words, pos, [w[:1] + str(int(w[1:]) % 3) for w in words]))
        links.append(np.array([[s, j] for j, s in enumerate(tgt)]))
    return sents, links


@pytest.mark.parametrize("update", ["pa", "perceptron"])
def test_training_learns_a_reordering_rule(update):
    rng = np.random.default_rng(7)
    train, train_links = _synthetic(rng, 300)
    test, test_links = _synthetic(rng, 100)
    lens = [len(s[0]) for s in test]
    model, info = BTGPreorderer.train(
        train,
        train_links,
        BTGOptions(beam=5, iterations=6, update=update, hash_bits=16),
        progress_bar=False,
    )
    assert info["used"] == 300 and info["skipped"] == {
        "unaligned": 0,
        "incomparable": 0,
        "not_btg": 0,
    }
    assert info["iterations"][0]["errors"] > info["iterations"][-1]["errors"]
    btg = score_orders(model.preorder(test, progress_bar=False), test_links, lens).summary()
    ident = score_orders([np.arange(n) for n in lens], test_links, lens).summary()
    assert ident["tau"] < 0.8 and btg["tau"] > 0.98 and btg["complete_match"] > 0.9


def test_training_stats_and_determinism():
    rng = np.random.default_rng(3)
    sents, links = _synthetic(rng, 40)
    sents += [(["x", "y"], ["X", "Y"], ["1", "1"])] * 3 + [(["x"], ["X"], ["1"])]
    links += [
        np.array([[0, 1], [0, 3], [1, 2], [1, 4]]),
        np.array([[1, 0]]),
        np.zeros((0, 2), int),
        np.array([[0, 0]]),
    ]
    opts = BTGOptions(beam=3, iterations=2, hash_bits=12, seed=5)
    a, info = BTGPreorderer.train(sents, links, opts, progress_bar=False)
    b, _ = BTGPreorderer.train(sents, links, opts, progress_bar=False)
    assert (a.weights == b.weights).all()
    assert info["sentences"] == 44 and info["used"] == 40
    assert info["skipped"] == {"unaligned": 3, "incomparable": 1, "not_btg": 0}
    assert set(info["iterations"][0]) == {"iteration", "errors", "early_updates", "seconds"}
    perms = a.preorder(sents[-4:] + [([], [], [])], progress_bar=False)
    assert [p.tolist() for p in perms[-2:]] == [[0], []] and all(p.dtype == np.int64 for p in perms)
    assert a.preorder([], progress_bar=False) == []
    threaded = a.preorder(sents, progress_bar=False, threads=3)
    assert all(
        (x == y).all() for x, y in zip(threaded, a.preorder(sents, progress_bar=False, threads=1))
    )


def test_file_order_ignores_the_seed_and_shuffled_order_follows_it():
    sents, links = _synthetic(np.random.default_rng(3), 60)

    def train(**o):
        options = BTGOptions(beam=3, iterations=2, hash_bits=12, **o)
        return BTGPreorderer.train(sents, links, options, progress_bar=False)[0].weights

    assert (train(order="file", seed=1) == train(order="file", seed=2)).all()
    assert not (train(seed=1) == train(seed=2)).all()
    assert not (train(order="file", seed=1) == train(seed=1)).all()
    with pytest.raises(WordorderError, match="order must be 'shuffled' or 'file'"):
        BTGOptions(order="sorted").check()


def test_bad_training_input():
    sents = [(["a", "b"], ["X", "Y"], ["1", "2"])]
    with pytest.raises(WordorderError, match="alignments for"):
        BTGPreorderer.train(sents, [], progress_bar=False)
    with pytest.raises(WordorderError, match="sentence 1"):
        BTGPreorderer.train(sents, [np.array([[5, 0]])], progress_bar=False)
    with pytest.raises(WordorderError, match="differ in length"):
        BTGPreorderer.train(
            [(["a", "b"], ["X"], ["1", "2"])], [np.array([[0, 0]])], progress_bar=False
        )
    with pytest.raises(WordorderError, match="usable"):
        BTGPreorderer.train(sents, [np.array([[0, 0]])], progress_bar=False)
    with pytest.raises(WordorderError, match="update"):
        BTGPreorderer.train(
            sents, [np.array([[0, 1], [1, 0]])], BTGOptions(update="sgd"), progress_bar=False
        )


# --- model files ----------------------------------------------------------------------------------


def test_save_load_round_trip_and_corrupt_files(tmp_path):
    rng = np.random.default_rng(1)
    sents, links = _synthetic(rng, 60)
    model, _ = BTGPreorderer.train(
        sents, links, BTGOptions(beam=4, iterations=2, hash_bits=14), progress_bar=False
    )
    path = tmp_path / "btg.npz"
    model.save(path)
    loaded = BTGPreorderer.load(path)
    assert loaded.options == model.options and (loaded.weights == model.weights).all()
    before, after = (
        model.preorder(sents, progress_bar=False),
        loaded.preorder(sents, progress_bar=False),
    )
    assert all((x == y).all() for x, y in zip(before, after))
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(b"not a zip file at all")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(path.read_bytes()[:200])
    other = tmp_path / "other.npz"
    np.savez(other, x=np.arange(3))
    out_of_range = tmp_path / "out_of_range.npz"
    with np.load(path) as z:
        np.savez(
            out_of_range,
            format=z["format"],
            options=z["options"],
            values=z["values"][:1],
            index_gaps=np.array([1 << 20], np.uint32),
        )
    for bad in (garbage, truncated, other, out_of_range, tmp_path / "missing.npz"):
        with pytest.raises(WordorderError) as err:
            BTGPreorderer.load(bad)
        assert str(bad) in str(err.value)
