"""RvNN preorderer: level-batched network vs a node-by-node reference, learning a synthetic
head-final language, input checks, and the model file."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rvnn_oracle import binary_trees

from wordorder.errors import WordorderError
from wordorder.preorder.rvnn import RvNNOptions, RvNNPreorderer, build_vocab, train_rvnn
from wordorder.preorder.rvnn_net import RvNNNet, collate
from wordorder.preorder.rvnn_oracle import apply_labels, flatten_trees
from wordorder.syntax.binarize import leaves


@pytest.fixture(autouse=True)
def one_torch_thread():
    """These networks are tiny: extra threads only add synchronisation, which costs a lot on a busy
    2-core CI machine (measured 2.4 s with one thread vs 7 s with two for the learning test)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# --- level-batched forward == recursion node by node -------------------------------------------


def recursive_logits(
    net: RvNNNet, tree, words: torch.Tensor, pos: torch.Tensor
) -> list[torch.Tensor]:
    """Post-order logits, one node at a time (the obvious, slow definition)."""
    out: list[torch.Tensor] = []

    def visit(node):
        if isinstance(node, int):
            return net.leaf_states(words[node : node + 1], pos[node : node + 1])
        left, right = visit(node[0]), visit(node[1])
        p = net.node_state(left, right)
        out.append(net.score(p)[0])
        return p

    visit(tree)
    return out


@settings(max_examples=15, deadline=None)
@given(st.lists(binary_trees(1, 15), min_size=1, max_size=6), st.integers(0, 2**31 - 1))
def test_batched_forward_and_gradients_match_recursion(trees, seed):
    torch.manual_seed(seed)
    net = RvNNNet(n_words=11, n_pos=5, embed=6, hidden=7).double()
    lengths = [len(leaves(t)) for t in trees]
    rng = np.random.default_rng(seed)
    word_ids, pos_ids = rng.integers(0, 11, sum(lengths)), rng.integers(0, 5, sum(lengths))
    offsets = np.r_[0, np.cumsum(lengths)]
    flat = flatten_trees(trees, lengths)
    # any order
    batch = collate(flat, word_ids, pos_ids, offsets, np.arange(len(trees))[::-1].copy())
    batched = net(batch)
    expected = torch.zeros(len(flat.spans), 2, dtype=torch.float64)
    expected_rows = []
    for t, tree in enumerate(trees):
        w = torch.from_numpy(word_ids[offsets[t] : offsets[t + 1]])
        p = torch.from_numpy(pos_ids[offsets[t] : offsets[t + 1]])
        expected_rows += recursive_logits(net, tree, w, p)
    if not expected_rows:  # only one-word trees
        assert batched.shape == (0, 2)
        return
    expected = torch.stack(expected_rows)  # rows of flat, i.e. tree after tree in post-order
    torch.testing.assert_close(
        batched, expected[torch.from_numpy(batch.rows)], rtol=1e-12, atol=1e-12
    )
    weights = torch.randn(len(expected), 2, dtype=torch.float64)
    grads = []
    for logits in (batched, expected[torch.from_numpy(batch.rows)]):
        net.zero_grad()
        (logits * weights).sum().backward(retain_graph=True)
        grads.append([p.grad.clone() for p in net.parameters()])
    for g_batched, g_ref in zip(*grads):
        torch.testing.assert_close(g_batched, g_ref, rtol=1e-10, atol=1e-12)


def test_levels_are_computed_in_one_step_each():
    flat = flatten_trees([((0, 1), ((2, (3, 4)), 5)), (0, 1), ((0, 1), 2)])
    batch = collate(
        flat, np.zeros(11, np.int64), np.zeros(11, np.int64), np.array([0, 6, 8, 11]), np.arange(3)
    )
    # heights: tree 0 has 1,1,2,3,4; tree 1 has 1; tree 2 has 1,2 -> 4 nodes
    # at height 1, 2 at 2, ...
    assert batch.bounds == [0, 4, 6, 7, 8]
    heights = flat.height[batch.rows]
    assert heights.tolist() == [1, 1, 1, 1, 2, 2, 3, 4]
    # every child row is a leaf (< 11) or an internal node of a lower level
    child_level = np.where(
        batch.children.numpy() < 11, 0, np.r_[heights][np.maximum(batch.children.numpy() - 11, 0)]
    )
    assert (child_level < heights[:, None]).all()
    assert len(batch.words) == 11 and batch.n_trees == 3


# --- a synthetic head-final language -------------------------------------------------------------

# Binary rules (parent, left, right, inverted in the target language): verbs and postpositions
# go after their objects, and PP modifiers go before the noun phrase, as in Japanese.
RULES = {
    "S": [("NP", "VP", 0)],
    "VP": [("V", "NP", 1), ("V", "PP", 1), ("VP", "PP", 1), ("ADV", "VP", 0)],
    "NP": [("DET", "N", 0), ("ADJ", "N", 0), ("NP", "PP", 1)],
    "PP": [("P", "NP", 1)],
}
TAGS = {"V": "VERB", "N": "NOUN", "DET": "DET", "ADJ": "ADJ", "P": "ADP", "ADV": "ADV"}


def generate(rng: np.random.Generator, cat: str = "S", depth: int = 0):
    """(tree over local leaves as nested tuples of (pos, word), labels in post-order)."""
    if cat in TAGS:
        tag = TAGS[cat]
        return (tag, f"{tag.lower()}{rng.integers(12)}"), []
    options = RULES[cat]
    if depth > 3:  # stop recursing: only rules whose children are all preterminal or NP
        options = [r for r in options if r[0] in TAGS and r[1] in TAGS] or options[:1]
    left, right, inv = options[rng.integers(len(options))]
    lt, ll = generate(rng, left, depth + 1)
    rt, rl = generate(rng, right, depth + 1)
    return (lt, rt), ll + rl + [inv]


def synthetic_corpus(n_sent: int, seed: int, drop: float = 0.1):
    rng = np.random.default_rng(seed)
    words, pos, trees, links = [], [], [], []
    for _ in range(n_sent):
        shape, labels = generate(rng)
        toks: list[tuple[str, str]] = []

        def number(node, toks=toks):
            if isinstance(node[0], str):
                toks.append(node)
                return len(toks) - 1
            return (number(node[0], toks), number(node[1], toks))

        tree = number(shape)
        perm = apply_labels(tree, np.array(labels, dtype=np.int8))
        target = np.argsort(perm)  # target position of each source word
        keep = rng.random(len(toks)) >= drop  # some words unaligned
        links.append(np.stack([np.flatnonzero(keep), target[keep]], axis=1))
        words.append([w for _, w in toks])
        pos.append([p for p, _ in toks])
        trees.append(tree)
    return words, pos, trees, links


def nkt(perm: np.ndarray, links: np.ndarray) -> float:
    """Share of ascending pairs of the target positions read in the order
    of ``perm`` (1-1 links)."""
    where = dict(map(tuple, links.tolist()))
    r = np.array([where[i] for i in perm.tolist() if i in where])
    m = len(r)
    if m <= 1:
        return 1.0
    return float(np.triu(r[:, None] < r[None, :], k=1).sum() / (m * (m - 1) / 2))


def test_learns_a_head_final_language(tmp_path):
    words, pos, trees, links = synthetic_corpus(1700, seed=0)
    train, test = slice(0, 1500), slice(1500, 1700)
    options = RvNNOptions(
        epochs=6, batch_size=50, embed=24, hidden=48, lr=5e-3, device="cpu", seed=3
    )
    model, stats = train_rvnn(
        words[train], pos[train], trees[train], links[train], options, progress_bar=False
    )
    assert stats["used"] == 1500 and stats["skipped"] == {"empty": 0, "one_word": 0, "no_links": 0}
    assert 0.2 < stats["label_share_inverted"] < 0.8
    assert stats["epochs"][-1]["loss"] < stats["epochs"][0]["loss"]
    perms = model.preorder(words[test], pos[test], trees[test], batch_size=64, progress_bar=False)
    rvnn = np.mean([nkt(p, lk) for p, lk in zip(perms, links[test])])
    identity = np.mean([nkt(np.arange(len(w)), lk) for w, lk in zip(words[test], links[test])])
    assert identity < 0.7
    assert rvnn > 0.95 and rvnn > identity + 0.25, (rvnn, identity, stats["epochs"])

    path = tmp_path / "m.pt"
    model.save(path)
    loaded = RvNNPreorderer.load(path, device="cpu")
    assert (
        loaded.words == model.words and loaded.pos == model.pos and loaded.options == model.options
    )
    again = loaded.preorder(words[test], pos[test], trees[test], progress_bar=False)
    assert all(np.array_equal(a, b) for a, b in zip(perms, again))


# --- inputs, skips and files ----------------------------------------------------------------------


def test_skips_are_counted_and_short_sentences_preordered():
    words = [["a", "b"], [], ["c"], ["d", "e", "f"]]
    pos = [["X", "Y"], [], ["X"], ["X", "Y", "X"]]
    trees = [(0, 1), None, 0, (0, (1, 2))]
    links = [
        np.array([[0, 1], [1, 0]]),
        np.zeros((0, 2), np.int64),
        np.array([[0, 0]]),
        np.zeros((0, 2), np.int64),
    ]
    model, stats = train_rvnn(
        words,
        pos,
        trees,
        links,
        RvNNOptions(epochs=1, embed=4, hidden=4, device="cpu"),
        progress_bar=False,
    )
    assert stats["used"] == 1 and stats["skipped"] == {"empty": 1, "one_word": 1, "no_links": 1}
    assert stats["label_share_inverted"] == 1.0 and stats["nodes"] == 1
    perms = model.preorder(
        words + [["zzz-unknown", "q"]], pos + [["NOPE", "X"]], trees + [(0, 1)], progress_bar=False
    )
    assert [sorted(p.tolist()) for p in perms] == [[0, 1], [], [0], [0, 1, 2], [0, 1]]


def test_input_errors_name_the_line():
    opts = RvNNOptions(epochs=1, embed=4, hidden=4, device="cpu")
    words, pos = [["a", "b"], ["c", "d"]], [["X", "Y"], ["X", "Y"]]
    ok = [np.array([[0, 0]]), np.array([[0, 0]])]
    with pytest.raises(WordorderError, match="leaves") as err:
        train_rvnn(
            words, pos, [(0, 1), ((0, 1), 2)], ok, opts, progress_bar=False, tree_path="t.tree"
        )
    assert err.value.line == 2 and err.value.path == "t.tree"
    with pytest.raises(WordorderError, match="POS") as err:
        train_rvnn(words, [["X", "Y"], ["X"]], [(0, 1), (0, 1)], ok, opts, progress_bar=False)
    assert err.value.line == 2
    with pytest.raises(WordorderError, match="outside"):
        train_rvnn(
            words,
            pos,
            [(0, 1), (0, 1)],
            [np.array([[0, 0]]), np.array([[5, 0]])],
            opts,
            progress_bar=False,
        )
    with pytest.raises(WordorderError, match="no sentence"):
        train_rvnn(
            words, pos, [(0, 1), (0, 1)], [np.zeros((0, 2), np.int64)] * 2, opts, progress_bar=False
        )


def test_vocabulary_by_frequency_capped():
    vocab = build_vocab([["b", "A", "a"], ["c", "B", "b"], ["c"]], size=3, lower=True)
    assert vocab == ["<unk>", "b", "a"]  # b: 3, a: 2, c: 2 (a seen first)


def test_corrupt_or_foreign_model_files(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a torch file")
    with pytest.raises(WordorderError) as err:
        RvNNPreorderer.load(bad)
    assert err.value.path == str(bad)
    foreign = tmp_path / "foreign.pt"
    torch.save({"format": "something-else"}, foreign)
    with pytest.raises(WordorderError, match="not an RvNN"):
        RvNNPreorderer.load(foreign)
    broken = tmp_path / "broken.pt"
    torch.save(
        {
            "format": "wordorder-rvnn",
            "version": 1,
            "options": {},
            "words": ["<unk>"],
            "pos": ["<unk>"],
            "state": {},
        },
        broken,
    )
    with pytest.raises(WordorderError, match="incomplete"):
        RvNNPreorderer.load(broken)
    with pytest.raises(WordorderError, match="not found"):
        RvNNPreorderer.load(tmp_path / "missing.pt")
