"""Model sizes as the papers set them: input groups as shares of the heads (Chen et al. 2020,
Table I), a vocabulary per side and untied embedding / output matrices (the OpenNMT-py setup
of Chen et al. 2019/2020), and checkpoints of both kinds."""

from __future__ import annotations

import pytest
import torch

from wordorder.errors import WordorderError
from wordorder.model_io.checkpoint import load_model, save_checkpoint
from wordorder.models import build_model
from wordorder.models.options import TransformerOptions
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID


def heads(n, groups):
    options = TransformerOptions(d_model=64 * n, heads=n, input_groups=groups)
    options.validate()
    return options.group_heads()


REC, LOC, SYN = (
    [["global", 6], ["rec", 2]],
    [["global", 6], ["loc", 2]],
    [["global", 5], ["syn", 3]],
)
FUSING = [["global", 2], ["rec", 2], ["loc", 2], ["syn", 2]]


def test_table_one_splits_at_eight_heads_and_what_other_sizes_get():
    # Table I (base, 8 heads of 64): Rec/Loc 384+128, Syn 320+192, Fusing 4 x 128
    assert heads(8, REC) == [("global", 6), ("rec", 2)]
    assert heads(8, LOC) == [("global", 6), ("loc", 2)]
    assert heads(8, SYN) == [("global", 5), ("syn", 3)]
    assert heads(8, FUSING) == [("global", 2), ("rec", 2), ("loc", 2), ("syn", 2)]
    # the small preset's 4 heads: quotas 3 + 1; Syn's 2.5 + 1.5 tie, the first listed group wins
    assert heads(4, REC) == [("global", 3), ("rec", 1)]
    assert heads(4, SYN) == [("global", 3), ("syn", 1)]
    assert heads(4, FUSING) == [("global", 1), ("rec", 1), ("loc", 1), ("syn", 1)]
    # big, 16 heads: the same shares of the model
    assert heads(16, SYN) == [("global", 10), ("syn", 6)]
    assert heads(16, FUSING) == [("global", 4), ("rec", 4), ("loc", 4), ("syn", 4)]
    # largest remainder, not the first group: 1:1:1 of 4 heads is 2+1+1, 1:2:2 of 4
    # is 0.8/1.6/1.6 -> 1+2+1
    assert heads(4, [["global", 1], ["rec", 1], ["loc", 1]]) == [
        ("global", 2),
        ("rec", 1),
        ("loc", 1),
    ]
    assert heads(4, [["global", 1], ["rec", 2], ["loc", 2]]) == [
        ("global", 1),
        ("rec", 2),
        ("loc", 1),
    ]
    # shares that add up to the heads are heads, as before
    assert heads(4, [["global", 2], ["rec", 1], ["syn", 1]]) == [
        ("global", 2),
        ("rec", 1),
        ("syn", 1),
    ]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 12, 16])
@pytest.mark.parametrize("groups", [REC, SYN, FUSING, [["global", 3], ["rec", 1], ["syn", 7]]])
def test_resolved_heads_add_up_and_stay_within_one_of_the_quota(n, groups):
    total = sum(s for _, s in groups)
    quotas = [s * n / total for _, s in groups]
    try:
        got = [h for _, h in heads(n, groups)]
    except WordorderError as e:
        assert "without a head" in str(e) and any(q < 1 for q in quotas)
        return
    assert sum(got) == n and all(h >= 1 for h in got)
    assert all(abs(h - q) < 1 for h, q in zip(got, quotas))


def test_a_group_without_a_head_is_an_error_naming_it():
    with pytest.raises(
        WordorderError, match=r"leaves the group\(s\) syn without a head of the model's 2"
    ):
        TransformerOptions(
            d_model=128, heads=2, input_groups=[["global", 5], ["rec", 2], ["syn", 1]]
        ).validate()
    with pytest.raises(WordorderError, match="whole share"):
        TransformerOptions(heads=8, input_groups=[["global", 6], ["rec", 1.5]]).validate()


def test_grouped_input_of_the_base_model_has_table_one_sizes():
    model = build_model({"preset": "base", "input_groups": SYN, "feature_sizes": {"pos": 20}}, 50)
    assert model.source_input.groups == [("global", 320), ("syn", 192)]


def batch(src_vocab, tgt_vocab):
    g = torch.Generator().manual_seed(3)
    src = torch.randint(4, src_vocab, (3, 6), generator=g)
    src[:, -1] = EOS_ID
    src[2, 3:] = PAD_ID
    src[2, 2] = EOS_ID
    tgt = torch.randint(4, tgt_vocab, (3, 5), generator=g)
    tgt[:, 0] = BOS_ID
    return src, tgt


@pytest.mark.parametrize("family", ["transformer", "rnn"])
def test_a_vocabulary_per_side_with_untied_matrices(family):
    preset = "tiny" if family == "transformer" else "rnn_tiny"
    opts = {"preset": preset, "tie_embeddings": False, "tie_output": False}
    model = build_model(opts, 30, 50).eval()
    e = model.src_embed.weight.size(1)
    assert model.src_embed.weight.shape == (30, e) and model.tgt_embed.weight.shape == (50, e)
    assert model.output_weight.shape == (50, e)
    assert model.output_weight is not model.tgt_embed.weight
    src, tgt = batch(30, 50)
    with torch.no_grad():
        assert model(src, tgt).shape == (3, 5, 50)
        log_probs, _ = model.step(tgt[:, 0], model.init_state(model.encode(src)))
    assert log_probs.shape == (3, 50)
    # parameters: the tied-output model plus one (V_tgt, e) matrix; tied sides need one vocabulary
    tied_output = build_model({**opts, "tie_output": True}, 30, 50)
    count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert count(model) - count(tied_output) == 50 * e
    assert tied_output.output_weight is tied_output.tgt_embed.weight
    with pytest.raises(WordorderError, match="tie_embeddings"):
        build_model({"preset": preset}, 30, 50)


def test_defaults_are_the_joint_tied_model():
    torch.manual_seed(0)
    model = build_model({"preset": "tiny"}, 40)
    assert model.tgt_vocab_size == 40 and model.output_proj is None
    assert model.src_embed.weight is model.tgt_embed.weight is model.output_weight
    assert not any(name.startswith("output_proj") for name in model.state_dict())
    torch.manual_seed(0)
    same = build_model({"preset": "tiny"}, 40, 40)
    assert all(
        torch.equal(a, b) for a, b in zip(model.state_dict().values(), same.state_dict().values())
    )


def test_factored_input_with_an_untied_source_matrix_holds_only_the_word_part():
    model = build_model(
        {
            "preset": "tiny",
            "tie_embeddings": False,
            "factors": {"pos": 6, "bieo": 2},
            "feature_sizes": {"pos": 20, "bieo": 7},
        },
        30,
        50,
    )
    assert model.src_embed.weight.shape == (30, 64 - 8) and model.tgt_embed.weight.shape == (50, 64)
    src, tgt = batch(30, 50)
    feats = {"pos": torch.randint(1, 20, src.shape), "bieo": torch.randint(1, 7, src.shape)}
    assert model(src, tgt, feats).shape == (3, 5, 50)


def test_checkpoint_of_separate_vocabularies_round_trips(tmp_path):
    torch.manual_seed(0)
    model = build_model(
        {"preset": "tiny", "tie_embeddings": False, "tie_output": False}, 30, 50
    ).eval()
    path = tmp_path / "best.pt"
    save_checkpoint(path, model, model.options.to_dict(), {"spm": "a.model", "spm_tgt": "b.model"})
    assert torch.load(path, weights_only=True)["tgt_vocab_size"] == 50
    loaded, meta = load_model(path)
    assert (meta["vocab_size"], meta["tgt_vocab_size"], meta["spm_tgt"]) == (30, 50, "b.model")
    src, tgt = batch(30, 50)
    with torch.no_grad():
        assert torch.equal(model(src, tgt), loaded(src, tgt))


def test_a_checkpoint_written_before_these_options_still_loads(tmp_path):
    """Older checkpoints have no tgt_vocab_size and options without tie_output: they are joint
    and tied, and load as before."""
    torch.manual_seed(0)
    model = build_model({"preset": "tiny"}, 40).eval()
    options = model.options.to_dict()
    del options["tie_output"]
    obj = {
        "format": 1,
        "options": options,
        "vocab_size": 40,
        "state_dict": model.state_dict(),
        "meta": {},
    }
    from wordorder.model_io import checkpoint

    obj["format"] = checkpoint.FORMAT
    torch.save(obj, tmp_path / "old.pt")
    loaded, meta = load_model(tmp_path / "old.pt")
    assert meta["tgt_vocab_size"] == 40 and loaded.options.tie_output is True
    src, tgt = batch(40, 40)
    with torch.no_grad():
        assert torch.equal(model(src, tgt), loaded(src, tgt))
    save_checkpoint(tmp_path / "joint.pt", loaded, loaded.options.to_dict(), {})
    assert "tgt_vocab_size" not in torch.load(tmp_path / "joint.pt", weights_only=True)
