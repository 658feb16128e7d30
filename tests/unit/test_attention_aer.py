"""Attention alignments (docs/algorithms.md §AER-ATTENTION): subword → word mapping, forced
decoding of both families, and AER on a gold set."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from wordorder.evaluate.attention_aer import (
    aer_table,
    attention_alignments,
    evaluate_attention_aer,
    word_links,
)
from wordorder.models import build_model
from wordorder.models.base import Seq2SeqModel
from wordorder.specials import BOS_ID, EOS_ID


def test_worked_example_method_b():
    """Source subwords [a@@, b, c] → words [0, 0, 1]; target rows x = [.3,.3,.4], y = [.1,.1,.8]:
    summed columns give x → word 0 (0.6 > 0.4) and y → word 1."""
    links = word_links(np.array([[0.3, 0.3, 0.4], [0.1, 0.1, 0.8]]), [0, 0, 1], [0, 1])
    assert {tuple(x) for x in links.tolist()} == {(0, 0), (1, 1)}


def test_target_word_rows_are_averaged():
    # target word 0 = two subwords whose mean row points to source word 1
    att = np.array([[0.6, 0.4], [0.0, 1.0], [1.0, 0.0]])
    assert word_links(att, [0, 1], [0, 0, 1]).tolist() == [[1, 0], [0, 1]]


class Diagonal(Seq2SeqModel):
    """A test double whose attention is known: target subword t attends to source subword t
    (the last one when the source is shorter)."""

    def __init__(self) -> None:
        super().__init__()
        self.options = build_model({"preset": "rnn_tiny"}, 10).options
        self.w = torch.nn.Parameter(torch.zeros(1))

    def attention_weights(self, src, tgt_in, feats=None):
        b, s = src.shape
        n = src.ne(0).sum(1) - 1  # real source subwords (without EOS)
        t = torch.arange(tgt_in.size(1))[None, :].expand(b, -1)
        col = torch.minimum(t, (n - 1)[:, None])
        return torch.nn.functional.one_hot(col, s).float()


class FakeSubwords:
    """Every word becomes one id per character: word boundaries are known exactly."""

    def encode_ids(self, tokens):
        return [5 + (ord(c) % 20) for t in tokens for c in t]


def test_diagonal_attention_on_a_monotone_gold_has_aer_zero(tmp_path):
    # one-character words: subwords = words, so the diagonal attention is the monotone alignment
    (tmp_path / "g.src-tgt").write_text("a b c ||| x y z\na b ||| x y\n", encoding="utf-8")
    (tmp_path / "g.gold").write_text("1-1 2-2 3-3\n1-1 2-2 1p2\n", encoding="utf-8")
    scores, links = evaluate_attention_aer(
        Diagonal(), FakeSubwords(), tmp_path / "g.src-tgt", tmp_path / "g.gold"
    )
    assert scores["aer"] == 0.0 and scores["precision"] == scores["recall"] == 1.0
    assert [x.tolist() for x in links] == [[[0, 0], [1, 1], [2, 2]], [[0, 0], [1, 1]]]
    # the same files read as target ||| source: links flip sides
    (tmp_path / "r.gold").write_text("1-1 2-2 3-3\n1-2 2-1\n", encoding="utf-8")
    scores, _ = evaluate_attention_aer(
        Diagonal(), FakeSubwords(), tmp_path / "g.src-tgt", tmp_path / "r.gold", swap=True
    )
    assert (
        scores["a_and_s"] == 3
        and scores["predicted"] == 5
        and scores["aer"] == pytest.approx(1 - 6 / 10)
    )


def test_multi_character_words_map_back_to_words(tmp_path):
    (tmp_path / "g.src-tgt").write_text("ab c ||| xy z\n", encoding="utf-8")
    (tmp_path / "g.gold").write_text("1-1 2-2\n", encoding="utf-8")
    # diagonal over subwords a b c / x y z: rows of x, y (word 0) point to a, b (word 0), z to c
    scores, links = evaluate_attention_aer(
        Diagonal(), FakeSubwords(), tmp_path / "g.src-tgt", tmp_path / "g.gold"
    )
    assert links[0].tolist() == [[0, 0], [1, 1]] and scores["aer"] == 0.0


@pytest.mark.parametrize(
    "options",
    [
        {"preset": "tiny"},
        {"preset": "tiny", "relative_k": 4},
        {"preset": "rnn_tiny"},
        {"preset": "rnn_tiny", "attention": "local"},
    ],
)
def test_forced_decoding_attention_of_both_families(options):
    torch.manual_seed(0)
    model = build_model({**options, "dropout": 0.0}, 30).eval()
    src = torch.tensor([[5, 6, 7, EOS_ID], [8, EOS_ID, 0, 0]])
    tgt = torch.tensor([[BOS_ID, 9, 10], [BOS_ID, 11, 0]])
    with torch.no_grad():
        before = model(src, tgt)
        att = model.attention_weights(src, tgt)
        after = model(src, tgt)
    assert att.shape == (2, 3, 4)
    assert torch.all(att[1, :, 2:] == 0)  # padding
    sums = att.sum(-1)
    if options.get("attention") == "local":
        assert torch.all(sums <= 1 + 1e-6)  # local-p is not renormalised after the Gaussian
    else:
        torch.testing.assert_close(sums, torch.ones(2, 3))
    torch.testing.assert_close(before, after)  # recording changes nothing


def test_models_reading_features_are_refused():
    model = build_model({"preset": "rnn_tiny", "attention": "syntax"}, 30)
    with pytest.raises(Exception, match="reads the source features"):
        attention_alignments(model, [([5], [0])], [([6], [0])])


def test_aer_table_lists_the_aligner_and_the_systems(tmp_path):
    import json

    stats = tmp_path / "en-de" / "align" / "stats.json"
    stats.parent.mkdir(parents=True)
    stats.write_text(
        json.dumps({"aer": {"precision": 0.8, "recall": 0.7, "aer": 0.25}}), encoding="utf-8"
    )
    res = tmp_path / "r.json"
    res.write_text(
        json.dumps(
            {
                "precision": 0.5,
                "recall": 0.4,
                "aer": 0.55,
                "meta": {"pair": "en-de", "variant": "rnn_small", "seed": 1},
            }
        ),
        encoding="utf-8",
    )
    rows, md = aer_table([res], [stats])
    assert [r["system"] for r in rows] == ["eflomal (word aligner)", "rnn_small (attention)"]
    assert "| en-de | eflomal (word aligner) |  | 80.0 | 70.0 | 25.0 |" in md
    assert "| en-de | rnn_small (attention) | 1 | 50.0 | 40.0 | 55.0 |" in md
