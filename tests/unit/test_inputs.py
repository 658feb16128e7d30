"""Chen 2020's grouped input and Sennrich & Haddow's factored input."""

from __future__ import annotations

import math

import pytest
import torch

from wordorder.models.inputs import FactoredInput, GroupedInput
from wordorder.models.positions import sinusoidal_table

FUSING = [("global", 4), ("rec", 4), ("loc", 6), ("syn", 2)]  # every kind, d = 16


def _identity(module: GroupedInput) -> GroupedInput:
    """Make Eq. 5's projection the identity, so group g reads x[..., slice_g] as is."""
    with torch.no_grad():
        module.proj.weight.copy_(torch.eye(module.d_model))
    return module


def _no_pad(b: int, s: int) -> torch.Tensor:
    return torch.zeros(b, s, dtype=torch.bool)


def _params(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


# --- construction ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "groups, kwargs, message",
    [
        ([("global", 8), ("rec", 4)], {}, "sum to 12"),
        ([("global", 13), ("rec", 3)], {}, "even"),
        ([("global", 8), ("conv", 8)], {}, "unknown"),
        ([("global", 8), ("syn", 8)], {}, "pos_vocab"),
        ([("global", 8), ("rec", 8)], {"rec_cell": "tanh"}, "rec_cell"),
        ([("global", 8), ("loc", 8)], {"loc_kernel": 4}, "odd"),
    ],
)
def test_invalid_groups_are_rejected(groups, kwargs, message):
    with pytest.raises(ValueError, match=message):
        GroupedInput(16, groups, **kwargs)


def test_group_slices_follow_the_listed_order():
    module = GroupedInput(16, FUSING, pos_vocab=5)
    assert module.group_slices() == [
        ("global", slice(0, 4)),
        ("rec", slice(4, 8)),
        ("loc", slice(8, 14)),
        ("syn", slice(14, 16)),
    ]


# --- each group's function ---------------------------------------------------------------


def test_global_and_syn_groups_with_identity_projection():
    torch.manual_seed(0)
    module = _identity(GroupedInput(10, [("global", 4), ("syn", 6)], pos_vocab=7))
    x = torch.randn(2, 5, 10)
    pos = torch.tensor([[1, 2, 3, 4, 6], [5, 5, 1, 0, 0]])
    out = module(x, pos.eq(0), {"pos": pos})
    assert torch.equal(out[..., :4], x[..., :4] + sinusoidal_table(5, 4))
    syn = module.funcs[1]
    expected = x[..., 4:] + sinusoidal_table(5, 6) + syn.tags.weight[pos]
    assert torch.equal(out[..., 4:], expected)
    assert torch.equal(syn.tags.weight[0], torch.zeros(6))  # tag 0 = PAD adds nothing


def test_syn_group_follows_the_pos_tag():
    torch.manual_seed(1)
    module = GroupedInput(8, [("global", 4), ("syn", 4)], pos_vocab=4)
    x = torch.randn(1, 3, 8)
    tags = torch.tensor([[1, 2, 3]])
    retagged = torch.tensor([[1, 3, 3]])
    a = module(x, _no_pad(1, 3), {"pos": tags})
    b = module(x, _no_pad(1, 3), {"pos": retagged})
    syn_emb = module.funcs[1].tags.weight
    torch.testing.assert_close(b[0, 1, 4:] - a[0, 1, 4:], syn_emb[3] - syn_emb[2])
    assert torch.equal(a[..., :4], b[..., :4])  # other groups ignore the tags
    assert torch.equal(a[:, [0, 2]], b[:, [0, 2]])  # other tokens too
    with pytest.raises(ValueError, match='feats\\["pos"\\]'):
        module(x, _no_pad(1, 3), {})


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_rec_group_equals_the_rnn_on_the_sentence_alone(cell):
    torch.manual_seed(2)
    module = GroupedInput(12, [("global", 6), ("rec", 6)], rec_cell=cell)
    rec = module.funcs[1]
    assert rec.rnn.hidden_size == 6 and rec.rnn.bidirectional  # d_r units per direction
    x = torch.randn(2, 7, 12)
    pad = torch.tensor([[False] * 7, [False] * 4 + [True] * 3])
    out = module(x, pad, {})
    for b, length in ((0, 7), (1, 4)):
        x_r = module.proj(x[b : b + 1, :length])[..., 6:]  # this sentence only, no padding
        h, _ = rec.rnn(x_r)  # (1, length, 12) = [fw; bw]
        torch.testing.assert_close(out[b : b + 1, :length, 6:], rec.out(h), atol=1e-6, rtol=1e-5)
    assert torch.equal(out[1, 4:, 6:], torch.zeros(3, 6))  # padded outputs are zero


def test_loc_group_window_is_five_tokens():
    torch.manual_seed(3)
    module = _identity(GroupedInput(8, [("global", 4), ("loc", 4)]))
    x = torch.randn(1, 9, 8)
    base = module(x, _no_pad(1, 9), {})[0, :, 4:]
    for changed_at in range(9):
        y = x.clone()
        y[0, changed_at, 4:] += 3.0
        diff = (module(y, _no_pad(1, 9), {})[0, :, 4:] - base).abs().sum(-1)
        far = [j for j in range(9) if abs(j - changed_at) > 2]
        assert torch.equal(diff[far], torch.zeros(len(far)))  # only j−2..j+2 can see it
        assert diff[changed_at] > 0  # the residual, at least
    # Eq. 10 by hand for token 0: ReLU(conv over [0, 0, x0, x1, x2]) + x0.
    conv = module.funcs[1].conv
    window = torch.cat([torch.zeros(4, 2), x[0, :3, 4:].T], dim=1)  # (d_l, m)
    expected = torch.relu((conv.weight * window).sum((1, 2)) + conv.bias) + x[0, 0, 4:]
    torch.testing.assert_close(base[0], expected)


# --- padding -----------------------------------------------------------------------------


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_padding_invariance_for_every_group_kind(cell):
    torch.manual_seed(4)
    module = GroupedInput(16, FUSING, pos_vocab=6, rec_cell=cell)
    x = torch.randn(1, 5, 16)
    pos = torch.tensor([[1, 2, 5, 3, 4]])
    alone = module(x, _no_pad(1, 5), {"pos": pos})
    # Extra padding, with garbage word vectors in it.
    xp = torch.cat([x, 50 * torch.randn(1, 4, 16)], dim=1)
    posp = torch.cat([pos, torch.zeros(1, 4, dtype=torch.long)], dim=1)
    padded = module(xp, posp.eq(0), {"pos": posp})
    torch.testing.assert_close(padded[:, :5], alone, atol=1e-6, rtol=1e-5)
    # Batched (second row) with a longer sentence.
    xb = torch.cat([torch.randn(1, 9, 16), xp])
    posb = torch.cat([torch.randint(1, 6, (1, 9)), posp])
    batched = module(xb, posb.eq(0), {"pos": posb})
    torch.testing.assert_close(batched[1:, :5], alone, atol=1e-6, rtol=1e-5)


def test_left_padding_is_rejected_by_the_rec_group():
    module = GroupedInput(8, [("global", 4), ("rec", 4)])
    with pytest.raises(ValueError, match="right-padded"):
        module(torch.randn(1, 3, 8), torch.tensor([[True, False, False]]), {})


# --- sizes -------------------------------------------------------------------------------


def _gru_params(d_r: int) -> int:
    # BiGRU + Linear(2d_r→d_r)
    return 2 * 3 * (d_r * d_r + d_r * d_r + 2 * d_r) + (2 * d_r * d_r + d_r)


def _conv_params(d_l: int, m: int = 5) -> int:
    return m * d_l * d_l + d_l


def test_parameter_count_formula_per_group():
    d, pos_vocab = 24, 9
    module = GroupedInput(
        d, [("global", 6), ("rec", 6), ("loc", 8), ("syn", 4)], pos_vocab=pos_vocab
    )
    assert _params(module) == d * d + _gru_params(6) + _conv_params(8) + pos_vocab * 4
    lstm = GroupedInput(d, [("global", 18), ("rec", 6)], rec_cell="lstm")
    assert _params(lstm) == d * d + 2 * 4 * (2 * 6 * 6 + 2 * 6) + (2 * 6 * 6 + 6)
    assert _params(GroupedInput(d, [("global", d)])) == d * d


TRANSFORMER_BASE = (
    32000 * 512
    + 6 * (4 * 512**2 + 4 * 512 + 2 * 512 * 2048 + 2048 + 512 + 4 * 512)
    + 6 * (8 * 512**2 + 8 * 512 + 2 * 512 * 2048 + 2048 + 512 + 6 * 512)
)


@pytest.mark.parametrize(
    "groups, extra",
    [
        ([("global", 384), ("rec", 128)], _gru_params(128)),  # Rec_Diverse
        ([("global", 384), ("loc", 128)], _conv_params(128)),  # Loc_Diverse
        ([("global", 320), ("syn", 192)], 64 * 192),  # Syn_Diverse
        (
            [("global", 128), ("rec", 128), ("loc", 128), ("syn", 128)],  # Fusing_Diverse
            _gru_params(128) + _conv_params(128) + 64 * 128,
        ),
    ],
)
def test_table_one_settings_add_under_one_percent(groups, extra):
    module = GroupedInput(512, groups, pos_vocab=64)  # 64 ≥ any POS tag set + specials
    added = _params(module)
    assert added == 512 * 512 + extra
    assert TRANSFORMER_BASE == 60_522_496
    assert added < 0.01 * TRANSFORMER_BASE


# --- factored input ----------------------------------------------------------------------


def _factored() -> FactoredInput:
    torch.manual_seed(5)
    return FactoredInput(12, {"bieo": 2, "pos": 3}, {"bieo": 5, "pos": 8})


def test_factored_layout_word_columns_then_factors_in_order():
    module = _factored()
    assert module.word_dim == 7
    word = torch.randn(2, 4, 12)
    feats = {
        "pos": torch.tensor([[1, 2, 3, 0], [7, 7, 1, 0]]),
        "bieo": torch.tensor([[1, 2, 4, 0], [3, 3, 3, 0]]),
    }
    out = module(word, feats)
    unscaled = (out - sinusoidal_table(4, 12)) / math.sqrt(12)
    torch.testing.assert_close(unscaled[..., :7], word[..., :7])
    torch.testing.assert_close(unscaled[..., 7:9], module.embeddings["bieo"].weight[feats["bieo"]])
    torch.testing.assert_close(unscaled[..., 9:], module.embeddings["pos"].weight[feats["pos"]])
    # Padding ids embed to zero; columns 7.. of the word rows are not used at all.
    assert torch.equal(unscaled[:, 3, 7:], torch.zeros(2, 5))
    word2 = word.clone()
    word2[..., 7:] = 99.0
    assert torch.equal(module(word2, feats), out)


def test_changing_a_factor_changes_only_its_slice():
    module = _factored()
    word = torch.randn(1, 3, 12)
    feats = {"bieo": torch.tensor([[1, 2, 3]]), "pos": torch.tensor([[4, 5, 6]])}
    a = module(word, feats)
    b = module(word, {**feats, "pos": torch.tensor([[4, 1, 6]])})
    changed = (a != b).nonzero().tolist()
    assert changed and all(t == 1 and 9 <= c < 12 for _, t, c in changed)


def test_factored_init_and_errors():
    module = FactoredInput(512, {"pos": 10}, {"pos": 50})
    weight = module.embeddings["pos"].weight
    assert torch.equal(weight[0], torch.zeros(10))
    assert weight[1:].std().item() == pytest.approx(512**-0.5, rel=0.15)
    with pytest.raises(ValueError, match="no room"):
        FactoredInput(8, {"pos": 5, "dep": 3}, {"pos": 4, "dep": 4})
    with pytest.raises(ValueError, match="vocabulary"):
        FactoredInput(8, {"pos": 2}, {"pos": 0})
    with pytest.raises(ValueError, match="dep"):
        FactoredInput(8, {"pos": 2, "dep": 2}, {"pos": 4, "dep": 4})(
            torch.randn(1, 2, 8), {"pos": torch.ones(1, 2, dtype=torch.long)}
        )
