"""The Transformer: incremental decoding equals full recomputation, padding invariance,
state reordering, options and presets."""

from __future__ import annotations

import pytest
import torch

from wordorder.errors import WordorderError
from wordorder.models import PRESETS, ModelOptions, build_model
from wordorder.models.options import RNNOptions, TransformerOptions
from wordorder.models.transformer import TransformerModel
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID

V = 40


def random_model(norm="post", tie=True, seed=0):
    torch.manual_seed(seed)
    return build_model(
        {
            "preset": "tiny",
            "norm": norm,
            "tie_embeddings": tie,
            "encoder_layers": 2,
            "decoder_layers": 3,
        },
        V,
    ).eval()


def random_batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, V, (4, 9), generator=g)
    src[:, -1] = EOS_ID
    src[1, 5:] = PAD_ID
    src[1, 4] = EOS_ID
    src[3, 2:] = PAD_ID
    src[3, 1] = EOS_ID
    tgt = torch.randint(4, V, (4, 7), generator=g)
    tgt[:, 0] = BOS_ID
    return src, tgt


def stepwise(model, src, tgt_in, reorder_at=None, index=None):
    """Log-probs from step() token by token, (B, T, V); optionally reorder the state."""
    state = model.init_state(model.encode(src))
    out = []
    for t in range(tgt_in.size(1)):
        if t == reorder_at:
            state = model.reorder_state(state, index)
            tgt_in = tgt_in[index]
            out = [o[index] for o in out]
        lp, state = model.step(tgt_in[:, t], state)
        assert lp.dtype == torch.float32
        out.append(lp)
    return torch.stack(out, dim=1)


@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("tie", [True, False])
def test_incremental_decoding_equals_full_recomputation(norm, tie):
    model = random_model(norm, tie)
    src, tgt = random_batch()
    with torch.no_grad():
        full = torch.log_softmax(model(src, tgt), dim=-1)
        inc = stepwise(model, src, tgt)
    assert full.shape == inc.shape == (4, 7, V)
    assert torch.allclose(inc, full, atol=1e-5)


def test_reorder_state_matches_the_permuted_full_computation():
    model = random_model()
    src, tgt = random_batch(2)
    index = torch.tensor([2, 0, 3, 1])
    with torch.no_grad():
        full = torch.log_softmax(model(src[index], tgt[index]), dim=-1)
        inc = stepwise(model, src, tgt, reorder_at=3, index=index)
    assert torch.allclose(inc, full, atol=1e-5)


def test_reorder_state_can_repeat_and_drop_rows():
    # Beam search expands rows (repeat) and drops finished sentences (shorter index).
    model = random_model()
    src, tgt = random_batch(3)
    index = torch.tensor([1, 1, 3, 0, 0, 0])
    with torch.no_grad():
        full = torch.log_softmax(model(src[index], tgt[index]), dim=-1)
        inc = stepwise(model, src, tgt, reorder_at=2, index=index)
    assert inc.shape[0] == 6
    assert torch.allclose(inc, full, atol=1e-5)
    keep = torch.tensor([3])
    with torch.no_grad():
        inc = stepwise(model, src, tgt, reorder_at=5, index=keep)
        full = torch.log_softmax(model(src[keep], tgt[keep]), dim=-1)
    assert torch.allclose(inc, full, atol=1e-5)


def test_source_padding_does_not_change_a_sentence():
    model = random_model()
    src, tgt = random_batch()
    with torch.no_grad():
        batched = model(src, tgt)
        for b in range(src.size(0)):
            n = int(src[b].ne(PAD_ID).sum())
            alone = model(src[b : b + 1, :n], tgt[b : b + 1])
            assert torch.allclose(batched[b], alone[0], atol=1e-5)
        enc = model.encode(src)
        alone = model.encode(src[1:2, :5])
        assert torch.allclose(enc.memory[1, :5], alone.memory[0], atol=1e-5)
        assert enc.src_pad[1].tolist() == [False] * 5 + [True] * 4


def test_target_padding_does_not_change_earlier_positions():
    model = random_model()
    src, tgt = random_batch()
    with torch.no_grad():
        short = model(src, tgt[:, :4])
        padded = tgt.clone()
        padded[:, 4:] = PAD_ID
        assert torch.allclose(model(src, padded)[:, :4], short, atol=1e-5)


def test_fully_padded_source_row_gives_finite_outputs():
    model = random_model()
    src, tgt = random_batch()
    src[2] = PAD_ID
    with torch.no_grad():
        assert torch.isfinite(model(src, tgt)).all()
        assert torch.isfinite(stepwise(model, src, tgt)).all()


def test_embeddings_tied_and_scaled():
    model = random_model()
    assert isinstance(model, TransformerModel)
    assert model.src_embed.weight is model.tgt_embed.weight
    assert model.src_embed.weight[PAD_ID].abs().sum() == 0
    assert model.embed_scale == pytest.approx(64**0.5)
    untied = random_model(tie=False)
    assert untied.src_embed.weight is not untied.tgt_embed.weight
    n_tied = sum(p.numel() for p in model.parameters())
    n_untied = sum(p.numel() for p in untied.parameters())
    assert n_untied - n_tied == V * 64


def test_dropout_only_in_training():
    model = random_model()
    src, tgt = random_batch()
    with torch.no_grad():
        assert torch.equal(model(src, tgt), model(src, tgt))
        model.train()
        assert not torch.equal(model(src, tgt), model(src, tgt))


@pytest.mark.parametrize("p_self, expected", [(None, 0.1), (0.3, 0.3)])
def test_decoder_self_attention_dropout(p_self, expected):
    """OpenNMT-py 1.0.0 drops the decoder self-attention's weights at ``dropout`` (issue 48):
    ``decoder_self_attention_dropout`` sets that rate alone; None keeps attention_dropout."""
    options = {"preset": "tiny", "attention_dropout": 0.1, "decoder_self_attention_dropout": p_self}
    model = build_model(options, 100)
    assert [layer.self_attn.dropout for layer in model.decoder] == [expected] * len(model.decoder)
    assert {layer.cross_attn.dropout for layer in model.decoder} == {0.1}
    assert {layer.self_attn.dropout for layer in model.encoder} == {0.1}
    with pytest.raises(WordorderError, match="decoder_self_attention_dropout must be in"):
        build_model({**options, "decoder_self_attention_dropout": 1.5}, 100)


def test_presets_and_explicit_keys():
    small = build_model({"family": "transformer", "preset": "small"}, 100)
    assert small.options.d_model == 256 and small.options.d_ff == 1024 and small.options.heads == 4
    assert len(small.encoder) == 3 and len(small.decoder) == 3
    assert PRESETS["base"]["d_model"] == 512 and PRESETS["big"]["dropout"] == 0.3
    tweaked = build_model({"preset": "tiny", "dropout": 0.3, "decoder_layers": 1}, 100)
    assert tweaked.options.dropout == 0.3 and len(tweaked.decoder) == 1
    assert ModelOptions().d_model == 512 and ModelOptions().norm == "post"


def test_unknown_option_names_the_key_and_lists_valid_ones():
    with pytest.raises(WordorderError) as e:
        ModelOptions.from_dict({"d_modle": 64})
    assert "d_modle" in str(e.value) and "d_model" in str(e.value) and "heads" in str(e.value)
    with pytest.raises(WordorderError, match="preset"):
        build_model({"preset": "huge"}, 100)
    with pytest.raises(WordorderError, match="family"):
        build_model({"family": "lstm"}, 100)
    with pytest.raises(WordorderError, match="divisible"):
        build_model({"preset": "tiny", "heads": 5}, 100)
    with pytest.raises(WordorderError, match="norm"):
        build_model({"preset": "tiny", "norm": "sandwich"}, 100)


# The flat options dict of an RNN checkpoint written before the options had a class per family
# (every option of both families, the Transformer's at their defaults).
FLAT_RNN = {
    "family": "rnn",
    "d_model": 64,
    "d_ff": 2048,
    "heads": 1,
    "encoder_layers": 6,
    "decoder_layers": 6,
    "dropout": 0.1,
    "attention_dropout": 0.0,
    "activation_dropout": 0.0,
    "tie_embeddings": True,
    "tie_output": True,
    "norm": "post",
    "max_positions": 1024,
    "positions": "absolute",
    "additional_pe": "none",
    "relative_k": 0,
    "relative_sides": "both",
    "reordering_embeddings": "none",
    "preorder_encoding": "none",
    "preorder_k": 4,
    "input_groups": None,
    "rec_cell": "gru",
    "loc_kernel": 5,
    "factors": None,
    "directional": False,
    "disagreement": "none",
    "disagreement_weight": 1.0,
    "feature_sizes": {},
    "embed_dim": 64,
    "decoder": "cgru",
    "attention": "local",
    "second_context": "none",
    "source_dependency": False,
    "local_window": 10,
    "syntax_n": 4,
    "flexible_skip": 10.0,
    "unit_size": 8,
    "relation_layers": False,
    "relation_width": 64,
    "relation_convs": None,
    "relation_chunk": 16,
    "relation_pad_quirk": False,
    "attention_dim": 0,
    "output_dropout": None,
    "init_uniform": 0.0,
}


def test_family_picks_the_options_class_and_the_flat_dict_round_trips():
    rnn = ModelOptions.from_dict(FLAT_RNN)
    assert type(rnn) is RNNOptions and rnn.attention == "local" and not hasattr(rnn, "relative_k")
    assert rnn.to_dict() == FLAT_RNN  # what checkpoints and resume fingerprints store, unchanged
    transformer = build_model({"preset": "tiny", "relative_k": 4}, 100).options
    assert type(transformer) is TransformerOptions and not hasattr(transformer, "attention")
    flat = transformer.to_dict()
    assert (
        flat.keys() == FLAT_RNN.keys() and flat["attention"] == "global" and flat["relative_k"] == 4
    )
    assert ModelOptions.from_dict(flat) == transformer


def test_another_familys_option_or_class_is_an_error_naming_the_family_that_has_it():
    with pytest.raises(WordorderError, match="relative_k does not apply to the rnn family") as e:
        ModelOptions.from_dict({**FLAT_RNN, "relative_k": 4})
    assert "family: transformer" in e.value.hint
    with pytest.raises(
        WordorderError, match="decoder does not apply to the transformer family"
    ) as e:
        build_model({"preset": "tiny", "decoder": "rnnsearch"}, 100)
    assert "family: rnn" in e.value.hint
    with pytest.raises(
        WordorderError, match="the options of a transformer model are TransformerOptions, not Mo"
    ):
        build_model(ModelOptions(d_model=64, heads=4), 100)
    with pytest.raises(
        WordorderError, match="the options of a transformer model are TransformerOptions, not RNN"
    ):
        build_model(RNNOptions(family="transformer"), 100)


def test_reorder_within_beams_of_the_same_sentence():
    # Rows 0,1 decode sentence 0 and rows 2,3 sentence 1 (as after beam expansion); a reorder
    # that keeps the row → sentence mapping may reuse the memory's keys/values.
    model = random_model()
    src, tgt = random_batch(4)
    expand = torch.tensor([0, 0, 1, 1])
    g = torch.Generator().manual_seed(5)
    tgt4 = torch.randint(4, V, (4, 6), generator=g)
    tgt4[:, 0] = BOS_ID
    with torch.no_grad():
        state = model.reorder_state(model.init_state(model.encode(src)), expand)
        out = []
        for t in range(6):
            if t == 3:
                index = torch.tensor([1, 0, 2, 2])
                state = model.reorder_state(state, index)
                tgt4, out = tgt4[index], [o[index] for o in out]
            lp, state = model.step(tgt4[:, t], state)
            out.append(lp)
        full = torch.log_softmax(model(src[expand], tgt4), dim=-1)
    assert torch.allclose(torch.stack(out, 1), full, atol=1e-5)
