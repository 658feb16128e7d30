"""The RNN family: the attention variants against the numbers of docs/algorithms.md §RNN-ATT, the
source tree inputs, and the model's consistency (teacher forcing = incremental steps, padding
invariance)."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from wordorder.errors import WordorderError
from wordorder.models import build_model
from wordorder.models.rnn_attention import (
    AdditiveScorer,
    FlexibleWeights,
    LocalWeights,
    PositionPredictor,
    SyntaxWeights,
    context,
    gaussian,
)
from wordorder.models.rnn_decoder import GRUCell
from wordorder.models.source_tree import (
    dependency_units,
    subword_distances,
    subword_parents,
    word_heads,
)
from wordorder.specials import BOS_ID, EOS_ID

# "I saw the dog" + EOS: saw is the root, I and dog hang under it, the under dog.
HEADS = [2, 0, 4, 2]


def _tree_inputs(
    words: list[int], heads: list[int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(1, S) word/head inputs for subwords of ``words`` (word index per piece) + EOS."""
    n = max(words) + 1
    word = torch.tensor([words + [n]])
    head = torch.tensor([[heads[w] for w in words] + [0]])
    return word, head, torch.ones_like(word, dtype=torch.bool)


def _set_predictor(pred: PositionPredictor, pre_sigmoid: float) -> None:
    """Make v_pᵀ tanh(W_p q) = pre_sigmoid for the query q = e₀."""
    with torch.no_grad():
        pred.w.weight.zero_()
        pred.w.weight[0, 0] = math.atanh(0.5)
        pred.v.weight.zero_()
        pred.v.weight[0, 0] = pre_sigmoid / 0.5


# --- local-p (docs/algorithms.md §LOCAL) ---------------------------------------------------


@pytest.mark.parametrize("pre, expected", [(0.0, 10.0), (1.0, 14.6212)])
def test_local_p_centre(pre, expected):
    pred = PositionPredictor(4, 3)
    _set_predictor(pred, pre)
    q = torch.tensor([[1.0, 0, 0, 0]])
    assert pred(q, torch.tensor([20]))[0].item() == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    "p, s, factor", [(10.0, 8, 0.92312), (10.0, 15, 0.60653), (14.6212, 12, 0.87161)]
)
def test_local_p_gaussian(p, s, factor):
    assert gaussian(torch.tensor(s - p), 10 / 2).item() == pytest.approx(factor, abs=1e-5)


def test_local_weights_window_and_gaussian():
    local = LocalWeights(4, 3, window=10)
    _set_predictor(local.predict, math.log(0.5))  # p = 30·σ(ln ½) = 10
    scores = torch.randn(1, 30)
    valid = torch.ones(1, 30, dtype=torch.bool)
    w = local(scores, valid, torch.tensor([[1.0, 0, 0, 0]]), torch.tensor([30]))[0]
    inside = torch.arange(30) <= 20  # |s − 10| ≤ 10
    assert torch.all(w[~inside] == 0)
    expected = scores[0, inside].softmax(-1) * gaussian(torch.arange(21.0) - 10, 5.0)
    torch.testing.assert_close(w[inside], expected)
    assert w.sum() < 1  # not renormalised after the Gaussian


# --- cGRU attention (docs/algorithms.md §CGRU) ---------------------------------------------


def test_additive_attention_example():
    """Scores [0, ln 3] give α = [0.25, 0.75]; the context is the weighted annotation."""
    scorer = AdditiveScorer(d_memory=1, d_query=2, d_attention=1)
    with torch.no_grad():
        scorer.key.weight.fill_(1.0)
        scorer.key.bias.zero_()
        scorer.query.weight.zero_()  # the query changes nothing here
        scorer.v.weight.fill_(2.0)
    memory = torch.tensor([[[0.0], [math.atanh(math.log(3) / 2)]]])
    scores = scorer(scorer.keys(memory), torch.randn(1, 2))
    torch.testing.assert_close(scores, torch.tensor([[0.0, math.log(3)]]))
    alpha = scores.softmax(-1)
    torch.testing.assert_close(alpha, torch.tensor([[0.25, 0.75]]))
    torch.testing.assert_close(context(alpha, memory), 0.75 * memory[:, 1])


def test_gru_cell_is_nematus_gru():
    """Reset gate on (U s + b), z gates the old state: the same function as torch.nn.GRUCell."""
    torch.manual_seed(0)
    cell, ref = GRUCell(5, 4), torch.nn.GRUCell(5, 4)
    with torch.no_grad():
        ref.weight_ih.copy_(cell.input.weight)
        ref.bias_ih.copy_(cell.input.bias)
        ref.weight_hh.copy_(cell.hidden.weight)
        ref.bias_hh.copy_(cell.hidden.bias)
    x, h = torch.randn(3, 5), torch.randn(3, 4)
    torch.testing.assert_close(cell(cell.input(x), h), ref(x, h))


# --- source tree inputs ---------------------------------------------------------------------


def test_distances_on_a_hand_made_tree():
    word, head, valid = _tree_inputs([0, 1, 2, 3], HEADS)
    heads, lengths = word_heads(word, head, valid)
    assert heads.tolist() == [[2, 0, 4, 2, 2]] and lengths.tolist() == [5]  # EOS under "saw"
    d = subword_distances(word, head, valid)[0]
    assert d[1].tolist() == [1, 0, 2, 1, 1]  # from "saw"
    assert d[2].tolist() == [3, 2, 0, 1, 3]  # from "the"


def test_padding_does_not_change_the_tree():
    """Padding (word 0, head 0 by the batching convention) must not touch word 0's head."""
    word, head, valid = _tree_inputs([0, 1, 2, 3], HEADS)
    pad = torch.zeros(1, 3, dtype=torch.long)
    padded = subword_distances(
        torch.cat([word, pad], 1), torch.cat([head, pad], 1), torch.cat([valid, pad.bool()], 1)
    )
    assert torch.equal(padded[0, :5, :5], subword_distances(word, head, valid)[0])
    assert torch.all(padded[0, 5:] == -1) and torch.all(padded[0, :, 5:] == -1)


def test_pieces_of_a_word_share_its_distances():
    # "I saw the dog@@ gy": the last word is split in two pieces.
    word, head, valid = _tree_inputs([0, 1, 2, 3, 3], HEADS)
    d = subword_distances(word, head, valid)[0]
    assert d[3, 4] == 0 and d[4].tolist() == d[3].tolist() == [2, 1, 1, 0, 0, 2]
    # In the subword tree the second piece hangs under the first.
    assert subword_parents(word, head, valid)[0].tolist() == [1, -1, 3, 1, 3, 1]


def test_dependency_unit_example():
    word, head, valid = _tree_inputs([0, 1, 2, 3], HEADS)
    units = dependency_units(subword_parents(word, head, valid), valid, size=4)[0]
    assert units[3].tolist() == [1, 0, 2, -1]  # dog: ⟨saw, [I], [the]⟩
    assert units[1].tolist() == [-2, 0, 3, -1]  # saw: ⟨<null>, [], [I, dog]⟩ (EOS is no member)
    assert units[2].tolist() == [3, -1, -1, -1]  # the: a leaf with no siblings
    assert units[4].tolist() == [1, 0, 3, -1]  # EOS hangs under the root
    # truncated
    assert dependency_units(subword_parents(word, head, valid), valid, size=2)[0, 3].tolist() == [
        1,
        0,
    ]


def test_syntax_attention_normalises_within_distance_n():
    word, head, valid = _tree_inputs([0, 1, 2, 3], HEADS)
    dist = subword_distances(word, head, valid)
    sd = SyntaxWeights(4, 3, n=1)
    # p = (J − 1)·σ(x) = 4·σ(x) = 1.0 exactly (the row of "saw"): x = ln(1/3).
    _set_predictor(sd.predict, math.log(1 / 3))
    scores = torch.tensor([[0.5, 1.0, 2.0, -1.0, 0.3]])
    w = sd(scores, valid, torch.tensor([[1.0, 0, 0, 0]]), torch.tensor([5]), dist)[0]
    support = torch.tensor([True, True, False, True, True])  # "the" is 2 edges away
    assert w[2] == 0
    tuned = scores[0] * gaussian(dist[0, 1].float(), 0.5)
    torch.testing.assert_close(w[support], tuned[support].softmax(-1))
    # With the score bias c (Nematus' c_tt): Eq. 10 on e + c. A bias that a plain softmax would
    # ignore now moves weight towards the syntactically near words ("saw" itself, distance 0).
    with torch.no_grad():
        sd.score_bias.fill_(2.0)
    w2 = sd(scores, valid, torch.tensor([[1.0, 0, 0, 0]]), torch.tensor([5]), dist)[0]
    tuned = (scores[0] + 2.0) * gaussian(dist[0, 1].float(), 0.5)
    torch.testing.assert_close(w2[support], tuned[support].softmax(-1))
    assert w2[1] > w[1]


def test_syntax_attention_score_bias_learns_and_old_checkpoints_fail_clearly(tmp_path):
    word, head, valid = _tree_inputs([0, 1, 2, 3], HEADS)
    dist = subword_distances(word, head, valid)
    sd = SyntaxWeights(4, 3, n=4)
    scores = torch.tensor([[0.5, 1.0, 2.0, -1.0, 0.3]])
    w = sd(scores, valid, torch.tensor([[1.0, 0, 0, 0]]), torch.tensor([5]), dist)[0]
    w[1].backward()
    assert sd.score_bias.grad is not None and sd.score_bias.grad.abs() > 1e-4
    # A checkpoint from before the bias (an older version's SDAtt) is refused in one clear line.
    from wordorder.model_io.checkpoint import load_model, save_checkpoint

    options = {"preset": "rnn_tiny", "dropout": 0.0, "attention": "syntax"}
    model = build_model(options, 30)
    path = tmp_path / "best.pt"
    save_checkpoint(path, model, options, {})
    load_model(path)  # as written: loads
    obj = torch.load(path, weights_only=True)
    del obj["state_dict"]["decoder.first.score_bias"]
    torch.save(obj, path)
    with pytest.raises(
        WordorderError, match="(?s)do not fit the model.*missing decoder.first.score_bias.*retrain"
    ):
        load_model(path)


@pytest.mark.parametrize("pre", [-3.0, 0.0, 3.0])
def test_syntax_attention_predictor_gets_a_gradient_at_every_centre(pre):
    # The centre p = (J − 1)·σ(x) spans exactly the rows 0..J−1 of M. With p = J·σ(x) capped at
    # J − 1, every step whose p fell in (J − 1, J) gave the predictor no gradient: a trained
    # chen2018_sdatt (effects, seed 1) had 67 % of its dev steps there, p frozen at EOS.
    word, head, valid = _tree_inputs([0, 1, 2, 3], HEADS)
    dist = subword_distances(word, head, valid)
    sd = SyntaxWeights(4, 3, n=4)
    _set_predictor(sd.predict, pre)
    scores = torch.tensor([[0.5, 1.0, 2.0, -1.0, 0.3]])
    w = sd(scores, valid, torch.tensor([[1.0, 0, 0, 0]]), torch.tensor([5]), dist)[0]
    w[0].backward()
    assert sd.predict.v.weight.grad is not None
    assert sd.predict.v.weight.grad[0, 0].abs() > 1e-4


def test_flexible_attention_skips_heavy_penalties_at_test_time():
    flex = FlexibleWeights(2, skip=4.0)
    with torch.no_grad():
        flex.kappa.weight.zero_()
        flex.kappa.bias.fill_(math.log(math.e - 1))  # κ = softplus(.) = 1
    previous = F.one_hot(torch.tensor([5]), 12).float()  # centre 5
    scores, valid, q = torch.zeros(1, 12), torch.ones(1, 12, dtype=torch.bool), torch.zeros(1, 2)
    train_w = flex(scores, valid, q, previous)[0]
    expected = (-((torch.arange(12.0) - 5) ** 2)).softmax(-1)
    torch.testing.assert_close(train_w, expected)
    flex.eval()
    test_w = flex(scores, valid, q, previous)[0]
    assert test_w.nonzero().flatten().tolist() == [4, 5, 6]  # penalty (s − 5)² < 4
    assert flex.span == [3, 12]
    # the translate step's summary: the share scored, counted anew for each source it decodes
    from wordorder.decode.runner import reset_vision_span, vision_span

    model = torch.nn.Sequential(flex, torch.nn.Linear(2, 2))
    assert vision_span(model) == {"flexible_scored_fraction": 0.25}
    reset_vision_span(model)
    assert flex.span == [0, 0] and vision_span(model) == {}
    flex(scores, valid, q, previous)
    assert vision_span(model) == {"flexible_scored_fraction": 0.25}


# --- the model ------------------------------------------------------------------------------

VARIANTS = {
    "rnnsearch": {"decoder": "rnnsearch"},
    "cgru_global": {},
    "local": {"attention": "local"},
    "flexible": {"attention": "flexible"},
    "sdatt": {"attention": "syntax"},
    "double_sdatt": {"second_context": "syntax"},
    "double_local": {"second_context": "local"},
    "double_flexible": {"second_context": "flexible"},
    "double_chen2017": {"second_context": "sdr"},
    "sdrnmt1": {"source_dependency": True},
    "rnmt": {"relation_layers": True},  # Zhang 2018: RNNsearch* (cGRU) with relation layers
    "rnmt_ende": {"relation_layers": True, "relation_convs": [[3, 24]], "relation_width": 32},
    "rnmt_rnnsearch": {"relation_layers": True, "decoder": "rnnsearch"},
}


def _batch():
    src = torch.tensor([[5, 6, 7, 8, 9, EOS_ID], [10, 11, EOS_ID, 0, 0, 0]])
    tgt = torch.tensor([[BOS_ID, 12, 13, 14, 15], [BOS_ID, 16, 17, 0, 0]])
    feats = {
        "word": torch.tensor([[0, 1, 1, 2, 3, 4], [0, 1, 2, 0, 0, 0]]),
        "head": torch.tensor([[2, 0, 0, 2, 3, 0], [2, 0, 0, 0, 0, 0]]),
    }
    return src, tgt, feats


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_teacher_forcing_equals_incremental_steps(name):
    torch.manual_seed(0)
    model = build_model({"preset": "rnn_tiny", "dropout": 0.0, **VARIANTS[name]}, 30).eval()
    src, tgt, feats = _batch()
    with torch.no_grad():
        full = model(src, tgt, feats).log_softmax(-1)
        state = model.init_state(model.encode(src, feats))
        for t in range(tgt.size(1)):
            lp, state = model.step(tgt[:, t], state)
            torch.testing.assert_close(lp[0], full[0, t], atol=1e-5, rtol=1e-5)
            if t < 3:  # the second sentence's real positions
                torch.testing.assert_close(lp[1], full[1, t], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_padding_does_not_change_a_sentence(name):
    torch.manual_seed(0)
    model = build_model({"preset": "rnn_tiny", "dropout": 0.0, **VARIANTS[name]}, 30).eval()
    src, tgt, feats = _batch()
    with torch.no_grad():
        both = model(src, tgt, feats)
        alone = model(src[1:, :3], tgt[1:, :3], {k: v[1:, :3] for k, v in feats.items()})
    torch.testing.assert_close(both[1, :3], alone[0], atol=1e-5, rtol=1e-5)


def test_forced_decoding_returns_the_attention_matrix():
    torch.manual_seed(0)
    model = build_model({"preset": "rnn_tiny", "dropout": 0.0}, 30).eval()
    src, tgt, feats = _batch()
    with torch.no_grad():
        att = model.attention_weights(src, tgt, feats)
    assert att.shape == (2, 5, 6)
    torch.testing.assert_close(att.sum(-1), torch.ones(2, 5))
    assert torch.all(att[1, :, 3:] == 0)  # padding gets no weight
    assert model.attention is None and not model.record_attention


def test_gradients_reach_every_parameter():
    torch.manual_seed(0)
    model = build_model(
        {"preset": "rnn_tiny", "second_context": "sdr", "tie_embeddings": False}, 30
    )
    src, tgt, feats = _batch()
    model(src, tgt, feats).sum().backward()
    missing = [
        n for n, p in model.named_parameters() if p.grad is None or not torch.any(p.grad != 0)
    ]
    assert missing == []


@pytest.mark.parametrize(
    "options, message",
    [
        ({"preset": "rnn_tiny", "relative_k": 4}, "relative_k does not apply to the rnn family"),
        (
            {"preset": "tiny", "attention": "syntax"},
            "attention does not apply to the transformer family",
        ),
        (
            {"preset": "rnn_tiny", "attention": "local", "second_context": "syntax"},
            "double-context",
        ),
        ({"preset": "rnn_tiny", "decoder": "lstm"}, "decoder must be one of"),
        (
            {"preset": "rnn_tiny", "relation_layers": True, "relation_convs": [[2, 96]]},
            "kernel widths must be odd",
        ),
        (
            {"preset": "rnn_tiny", "relation_convs": [[3]]},
            r"relation_convs must be a non-empty list of \[kernel",
        ),
        ({"preset": "rnn_tiny", "relation_convs": []}, "relation_convs must be a non-empty list"),
        (
            {"preset": "rnn_tiny", "relation_convs": [[3, 0]]},
            "relation_convs must be a non-empty list",
        ),
        (
            {"preset": "tiny", "relation_convs": [[3, 96]]},
            "relation_convs does not apply to the transformer family",
        ),
        (
            {"preset": "tiny", "output_dropout": 0.5},
            "output_dropout does not apply to the transformer family",
        ),
        ({"preset": "rnn_tiny", "output_dropout": 1.0}, r"output_dropout must be in \[0, 1\)"),
        (
            {"preset": "rnn_tiny", "init_uniform": -0.1},
            "init_uniform must be a non-negative number",
        ),
        (
            {"preset": "rnn_tiny", "attention_dim": -1},
            "attention_dim must be a non-negative integer",
        ),
    ],
)
def test_option_conflicts(options, message):
    with pytest.raises(WordorderError, match=message):
        build_model(options, 30)


def test_syntax_variants_need_the_tree():
    model = build_model({"preset": "rnn_tiny", "attention": "syntax"}, 30)
    assert model.options.required_features() == {"word", "head"}
    src, tgt, _ = _batch()
    with pytest.raises(ValueError, match="word"):
        model(src, tgt)


# --- Zhang et al. 2018's training setup and the RNMT system (§5.2) --------------------------


def test_output_dropout_drops_the_readout_and_nothing_else():
    torch.manual_seed(0)
    model = build_model(
        {"preset": "rnn_tiny", "dropout": 0.0, "output_dropout": 0.5, "relation_layers": True}, 30
    )
    assert model.dropout.p == 0.0 and model.decoder.dropout.p == 0.5
    src, tgt, _ = _batch()
    model.train()
    enc1, enc2 = model.encode(src), model.encode(src)
    torch.testing.assert_close(enc1.memory, enc2.memory)  # no dropout before the readout
    readout = model.decode_hidden(enc1, tgt)  # (B, T, e)
    dropped = readout.eq(0).float().mean().item()
    assert 0.4 < dropped < 0.6
    model.eval()
    assert model.decode_hidden(model.encode(src), tgt).eq(0).float().mean().item() < 0.01
    # None (the default) follows `dropout`
    assert build_model({"preset": "rnn_tiny", "dropout": 0.3}, 30).decoder.dropout.p == 0.3


def test_init_uniform_draws_every_parameter_from_the_interval():
    torch.manual_seed(0)
    model = build_model(
        {
            "preset": "rnn_tiny",
            "relation_layers": True,
            "init_uniform": 0.1,
            "tie_embeddings": False,
        },
        30,
    )
    values = torch.cat([p.detach().flatten() for p in model.parameters()])
    assert values.abs().max() <= 0.1 and values.abs().max() > 0.099  # many draws reach the ends
    assert abs(values.mean().item()) < 0.005 and values.std().item() == pytest.approx(
        0.1 / 3**0.5, rel=0.02
    )
    # PAD
    assert model.src_embed.weight[0].abs().max() == 0 and model.tgt_embed.weight[0].abs().max() == 0
    default = build_model({"preset": "rnn_tiny"}, 30)
    assert any(p.abs().max() > 0.1 for p in default.parameters())  # 0 keeps the layers' own init


def test_attention_dim_sizes_the_scorer():
    model = build_model({"preset": "rnn_tiny", "attention_dim": 48, "second_context": "sdr"}, 30)
    assert model.decoder.scorer.key.weight.shape == (48, 128)  # annotations 2·d_model wide
    assert model.decoder.scorer.query.weight.shape == (48, 64)
    assert model.decoder.scorer.v.weight.shape == (1, 48)
    assert model.decoder.unit_scorer.key.weight.shape == (48, 128)
    # 0 = d_model
    assert build_model({"preset": "rnn_tiny"}, 30).decoder.scorer.key.weight.shape == (64, 128)


@pytest.mark.parametrize("name", ["rnmt", "rnmt_ende"])
def test_rnmt_with_the_cgru_decoder_beam_search(name):
    from wordorder.decode.beam import beam_search, beam_search_hypotheses, greedy_decode

    torch.manual_seed(3)
    model = build_model({"preset": "rnn_tiny", "dropout": 0.0, **VARIANTS[name]}, 30).eval()
    assert model.decoder.cgru and model.decoder.gru1 is not None
    src, _, _ = _batch()
    assert beam_search(model, src, beam_size=1, length_penalty=0.0) == [
        [h] for h in greedy_decode(model, src)
    ]
    hyps = beam_search_hypotheses(model, src, beam_size=4, length_penalty=0.0, n_best=2)
    for b, sent in enumerate(hyps):
        assert len(sent) == 2 and sent[0].score >= sent[1].score
        best = sent[0].tokens
        tgt_in = torch.tensor([[BOS_ID, *best]])
        gold = torch.tensor([[*best, EOS_ID]])
        n = int(src[b].ne(0).sum())
        with torch.no_grad():
            forced = (
                model(src[b : b + 1, :n], tgt_in)
                .log_softmax(-1)
                .gather(-1, gold[..., None])
                .sum()
                .item()
            )
        assert sent[0].score == pytest.approx(forced, abs=1e-4)
