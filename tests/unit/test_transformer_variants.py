"""Word-order options of the Transformer: Shaw's relative positions (docs/algorithms.md §SHAW),
reordering embeddings, preordering encodings, Chen 2020 inputs; incremental decoding equals
full recomputation for every decoder-side option; parameter counts follow the papers."""

from __future__ import annotations

import pytest
import torch

from wordorder.errors import WordorderError
from wordorder.models import build_model
from wordorder.models.relative import RelativeTable, relative_attention, sequence_buckets
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID

V = 40
SIZES = {"pos": 12, "bieo": 7, "dep": 15}


def test_shaw_bucket_matrix():
    assert sequence_buckets(4, 2).tolist() == [
        [2, 3, 4, 4],
        [1, 2, 3, 4],
        [0, 1, 2, 3],
        [0, 0, 1, 2],
    ]
    # incremental: query t=3 against keys 0..3 is row 3 of the full matrix
    assert sequence_buckets(4, 2, offset=3, queries=1).tolist() == [[0, 0, 1, 2]]


def test_shaw_scores_row():
    # d = 1, q0 = 1, all keys 1, w^K = [-2,-1,0,1,2], k = 2: e_0j = q0·(k_j + w^K[r_0j]) = [1,2,3,3]
    table = RelativeTable(2, 1)
    with torch.no_grad():
        table.keys.copy_(torch.tensor([[-2.0], [-1.0], [0.0], [1.0], [2.0]]))
        table.values.zero_()
    q = torch.ones(1, 1, 4, 1)
    k = torch.ones(1, 1, 4, 1)
    _, weights = relative_attention(
        q, k, torch.zeros(1, 1, 4, 1), [(sequence_buckets(4, 2), table)], None, False
    )
    expected = torch.softmax(torch.tensor([1.0, 2.0, 3.0, 3.0]), dim=0)
    assert torch.allclose(weights[0, 0, 0], expected)


def test_relative_value_term_equals_naive_sum():
    torch.manual_seed(0)
    table = RelativeTable(2, 3)
    q, k, v = torch.randn(2, 2, 5, 3), torch.randn(2, 2, 5, 3), torch.randn(2, 2, 5, 3)
    buckets = sequence_buckets(5, 2)
    out, weights = relative_attention(q, k, v, [(buckets, table)], None, False)
    a_k, a_v = table.keys[buckets], table.values[buckets]  # (T, S, d)
    scores = (
        torch.einsum("bhid,bhjd->bhij", q, k) + torch.einsum("bhid,ijd->bhij", q, a_k)
    ) / 3**0.5
    alpha = scores.softmax(-1)
    naive = alpha @ v + torch.einsum("bhij,ijd->bhid", alpha, a_v)
    assert torch.allclose(weights, alpha, atol=1e-6)
    assert torch.allclose(out, naive, atol=1e-5)


def make(options, seed=0):
    torch.manual_seed(seed)
    opts = {
        "preset": "tiny",
        "encoder_layers": 2,
        "decoder_layers": 2,
        "feature_sizes": SIZES,
        **options,
    }
    return build_model(opts, V).eval()


def batch(seed=1):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, V, (3, 7), generator=g)
    src[:, -1] = EOS_ID
    src[1, 4:] = PAD_ID
    src[1, 3] = EOS_ID
    tgt = torch.randint(4, V, (3, 6), generator=g)
    tgt[:, 0] = BOS_ID
    lengths = [6, 3, 6]
    order = torch.zeros(3, 7, dtype=torch.long)
    feats = {name: torch.randint(3, SIZES[name], (3, 7), generator=g) for name in SIZES}
    for i, n in enumerate(lengths):
        order[i, :n] = torch.randperm(n, generator=g)
        order[i, n] = n
        for f in feats.values():
            f[i, n] = 2
            f[i, n + 1 :] = 0
    feats["order"] = order
    return src, tgt, feats


DECODER_OPTIONS = [
    {},
    {"relative_k": 2},
    {"relative_k": 3, "relative_sides": "decoder"},
    {"reordering_embeddings": "decoder"},
    {
        "reordering_embeddings": "both",
        "relative_k": 2,
        "preorder_encoding": "relative",
        "preorder_k": 2,
    },
    {"additional_pe": "both"},
    {"positions": "none", "relative_k": 4},
]


@pytest.mark.parametrize("options", DECODER_OPTIONS)
def test_incremental_decoding_equals_full_recomputation(options):
    model = make(options)
    src, tgt, feats = batch()
    with torch.no_grad():
        enc = model.encode(src, feats)
        full = torch.log_softmax(model.decode(enc, tgt), dim=-1)
        state = model.init_state(enc)
        steps = []
        for t in range(tgt.size(1)):
            lp, state = model.step(tgt[:, t], state)
            steps.append(lp)
    assert torch.allclose(torch.stack(steps, 1), full, atol=1e-5)


ENCODER_OPTIONS = [
    {"preorder_encoding": "absolute"},
    {"preorder_encoding": "relative"},
    {"reordering_embeddings": "encoder"},
    {"input_groups": [["global", 1], ["rec", 1], ["loc", 1], ["syn", 1]]},
    {"factors": {"bieo": 4, "pos": 4, "dep": 4}},
    {"directional": True},
    {"relative_k": 2, "relative_sides": "encoder"},
]


@pytest.mark.parametrize("options", ENCODER_OPTIONS)
def test_encoder_padding_invariance(options):
    """A sentence encodes the same alone and in a padded batch."""
    model = make(options)
    src, _, feats = batch()
    with torch.no_grad():
        memory = model.encode(src, feats).memory
        alone = model.encode(src[1:2, :4], {k: v[1:2, :4] for k, v in feats.items()}).memory
    assert torch.allclose(memory[1, :4], alone[0], atol=1e-5)


def test_preorder_encoding_uses_the_order():
    for kind in ("absolute", "relative"):
        model = make({"preorder_encoding": kind})
        src, _, feats = batch()
        other = dict(feats, order=feats["order"].clone())
        other["order"][0, :6] = feats["order"][0, :6].flip(0)  # a different permutation of 0..5
        with torch.no_grad():
            a = model.encode(src, feats).memory
            b = model.encode(src, other).memory
        assert not torch.allclose(a[0], b[0])
        assert torch.allclose(a[2], b[2])  # other sentences untouched


def count(model):
    return sum(p.numel() for p in model.parameters())


def test_parameter_formulas():
    d, layers = 64, 2
    base = count(make({}))
    assert count(make({"reordering_embeddings": "encoder"})) - base == layers * (3 * d * d + 2 * d)
    assert count(make({"reordering_embeddings": "both"})) - base == 2 * layers * (3 * d * d + 2 * d)
    assert count(make({"additional_pe": "both"})) - base == 2 * layers * 2 * d
    head = d // 4
    # Shaw: 2 tables of (2k+1) x d_z per layer and side
    assert count(make({"relative_k": 4})) - base == 2 * layers * 2 * 9 * head
    assert count(
        make({"relative_k": 4, "preorder_encoding": "relative", "preorder_k": 3})
    ) - base == (2 * layers * 2 * 9 * head + layers * 2 * 7 * head)
    assert count(make({"preorder_encoding": "absolute"})) == base


def test_reordering_embeddings_base_share():
    """Chen 2019, Table 1: REs add 3·d² per layer and side (4.7M of ~60M for the base encoder)."""
    base = build_model({"preset": "base"}, 32000)
    enc = build_model({"preset": "base", "reordering_embeddings": "encoder"}, 32000)
    assert count(enc) - count(base) == 6 * (3 * 512 * 512 + 2 * 512)


@pytest.mark.parametrize(
    "groups",
    [
        [["global", 6], ["rec", 2]],
        [["global", 6], ["loc", 2]],
        [["global", 5], ["syn", 3]],
        [["global", 2], ["rec", 2], ["loc", 2], ["syn", 2]],
    ],
)
def test_diverse_inputs_change_parameters_by_less_than_one_percent(groups):
    base = count(build_model({"preset": "base"}, 32000))
    model = build_model(
        {"preset": "base", "input_groups": groups, "feature_sizes": {"pos": 20}}, 32000
    )
    assert 0 < count(model) - base < 0.01 * base


@pytest.mark.parametrize(
    "options, message",
    [
        # 3.5 + 0.5 of 4 heads → 4 + 0
        ({"input_groups": [["global", 7], ["rec", 1]]}, "without a head"),
        ({"input_groups": [["global", 4]], "factors": {"pos": 4}}, "conflict"),
        ({"reordering_embeddings": "both", "additional_pe": "encoder"}, "same slot"),
        ({"reordering_embeddings": "encoder", "norm": "pre"}, "post-norm"),
        ({"factors": {"pos": 64}}, "nothing"),
        ({"relative_sides": "sideways"}, "relative_sides"),
    ],
)
def test_conflicts_fail_at_validation(options, message):
    with pytest.raises(WordorderError, match=message):
        build_model({"preset": "tiny", **options}, V)


def test_missing_feature_vocabulary_is_a_clear_error():
    with pytest.raises(WordorderError, match="feature_sizes"):
        build_model({"preset": "tiny", "factors": {"pos": 4}}, V)


def test_disagreement_adds_an_auxiliary_loss():
    model = make({"disagreement": "output", "disagreement_weight": 1.0}).train()
    src, tgt, feats = batch()
    model(src, tgt)
    aux = model.auxiliary_loss
    assert aux is not None and 0.0 <= float(aux.detach()) <= 1.0  # λ·(−D), D in [−1, 0]
    aux.backward()
    assert model.encoder[0].self_attn.qkv_proj.weight.grad is not None


def test_disagreement_without_encoder_layers_is_a_zero_tensor():
    """No layer to disagree: D = 0, and a tensor, so that the training loss can add it (it was a
    Python float, on which batch_loss failed with an AttributeError)."""
    from wordorder.model_io.batching import Batch
    from wordorder.train.update import batch_loss

    model = make({"disagreement": "output", "encoder_layers": 0}).train()
    src, tgt, _ = batch()
    out = torch.cat([tgt[:, 1:], torch.full((3, 1), EOS_ID)], dim=1)
    loss, _ = batch_loss(model, Batch(src, tgt, out), 0.1, None)
    assert torch.isfinite(loss)
    model(src, tgt)
    assert isinstance(model.auxiliary_loss, torch.Tensor) and model.auxiliary_loss.item() == 0.0
