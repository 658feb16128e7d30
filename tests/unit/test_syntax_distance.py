"""Syntax-distance masks (Chen et al. 2018 §3.1): worked example, properties, batched form."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tree_strategies import trees

from wordorder.syntax.distance import (
    PAD_DISTANCE,
    ancestor_matrix,
    batch_project_to_subwords,
    batch_tree_distances,
    project_to_subwords,
    tree_distances,
)

# Chen 2018, Figure 1(c)/2: "zhexie weixian fenzi yanzhong yingxiang zhengchang yimin de zhengce"
# (these dangerous elements seriously affect normal immigration policies), tree built by hand:
# yingxiang is the root; fenzi (subject), yanzhong (adverb) and zhengce (object) depend on it;
# zhexie and weixian modify fenzi; yimin modifies zhengce; zhengchang and de attach to yimin.
WORDS = "zhexie weixian fenzi yanzhong yingxiang zhengchang yimin de zhengce".split()
HEADS = [3, 3, 5, 5, 0, 7, 9, 7, 5]


def test_chen2018_figure2_row_of_fenzi():
    m = tree_distances(HEADS)
    row = dict(zip(WORDS, m[WORDS.index("fenzi")].tolist()))
    # §3.1: fenzi itself 0; zhexie, weixian, yingxiang 1; yanzhong and zhengce 2.
    assert row["fenzi"] == 0
    assert row["zhexie"] == row["weixian"] == row["yingxiang"] == 1
    assert row["yanzhong"] == row["zhengce"] == 2
    # The prose gives 4 for zhengchang, yimin and de; in a tree over these nine words where
    # zhengce is at 2, some word must be at 3: here yimin (3), with zhengchang and de at 4.
    assert row["zhengchang"] == row["de"] == 4 and row["yimin"] == 3


def test_chen2018_full_matrix():
    expected = np.array(
        [
            [0, 2, 1, 3, 2, 5, 4, 5, 3],
            [2, 0, 1, 3, 2, 5, 4, 5, 3],
            [1, 1, 0, 2, 1, 4, 3, 4, 2],
            [3, 3, 2, 0, 1, 4, 3, 4, 2],
            [2, 2, 1, 1, 0, 3, 2, 3, 1],
            [5, 5, 4, 4, 3, 0, 1, 2, 2],
            [4, 4, 3, 3, 2, 1, 0, 1, 1],
            [5, 5, 4, 4, 3, 2, 1, 0, 2],
            [3, 3, 2, 2, 1, 2, 1, 2, 0],
        ]
    )
    np.testing.assert_array_equal(tree_distances(HEADS), expected)


def test_ancestor_matrix_and_errors():
    anc = ancestor_matrix([2, 0, 2])
    assert anc.tolist() == [[True, True, False], [False, True, False], [False, True, True]]
    with pytest.raises(ValueError, match="cycle"):
        ancestor_matrix([2, 1, 0])
    with pytest.raises(ValueError, match="values in 0..3"):
        ancestor_matrix([2, 0, 4])
    assert tree_distances([0]).tolist() == [[0]]


@settings(max_examples=150, deadline=None)
@given(trees(max_n=25))
def test_mask_properties(heads):
    m = tree_distances(heads)
    n = len(heads)
    assert (m == m.T).all()
    assert (np.diag(m) == 0).all()
    assert (m[~np.eye(n, dtype=bool)] > 0).all()
    edges = np.zeros((n, n), dtype=bool)
    for d, h in enumerate(heads):
        if h:
            edges[d, h - 1] = edges[h - 1, d] = True
    assert ((m == 1) == edges).all()  # 1 exactly on tree edges
    assert (m[:, :, None] <= m[:, None, :] + m.T[None, :, :]).all()  # M[i,k] <= M[i,j] + M[j,k]
    assert m.max() <= n - 1


@settings(max_examples=40, deadline=None)
@given(st.lists(trees(max_n=12), min_size=1, max_size=5))
def test_batched_equals_single(batch):
    lengths = torch.tensor([len(h) for h in batch])
    heads = torch.full((len(batch), int(lengths.max())), 7)  # junk at padding is ignored
    for b, h in enumerate(batch):
        heads[b, : len(h)] = torch.tensor(h)
    out = batch_tree_distances(heads, lengths)
    for b, h in enumerate(batch):
        n = len(h)
        np.testing.assert_array_equal(out[b, :n, :n].numpy(), tree_distances(h))
        assert (out[b, n:, :] == PAD_DISTANCE).all() and (out[b, :, n:] == PAD_DISTANCE).all()


def test_projection_to_subwords():
    m = tree_distances([2, 0, 2])  # words 0 1 2
    wi = [0, 0, 1, 2, 2, 2]  # word 0 has two pieces, word 2 three
    s = project_to_subwords(m, wi)
    assert s.shape == (6, 6)
    assert s[0, 1] == 0 and s[3, 5] == 0  # pieces of one word share the word's row
    np.testing.assert_array_equal(s[1], [0, 0, 1, 2, 2, 2])
    batched = batch_project_to_subwords(torch.from_numpy(m)[None], torch.tensor([wi]))
    np.testing.assert_array_equal(batched[0].numpy(), s)
