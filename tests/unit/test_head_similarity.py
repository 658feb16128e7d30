"""Head similarity between feature groups (Chen et al. 2020, Eq. 14, Table IV)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from wordorder.evaluate.head_similarity import (
    encoder_head_similarity,
    group_similarity,
    head_groups,
    similarity_markdown,
    token_cosines,
)
from wordorder.models import build_model


def test_table_iv_average_is_the_mean_of_the_group_table():
    table = np.array(
        [
            [0.817, 0.415, 0.483, 0.765],
            [0.415, 0.853, 0.382, 0.612],
            [0.483, 0.382, 0.912, 0.717],
            [0.765, 0.612, 0.717, 0.932],
        ]
    )
    assert table.mean() == pytest.approx(0.641, abs=5e-4)


def test_cosines_of_known_heads():
    # 3 heads, one token: heads 0 and 1 point the same way, head 2 is orthogonal to them
    heads = torch.tensor([[[[1.0, 0.0]], [[2.0, 0.0]], [[0.0, 3.0]]]])  # (B=1, H=3, S=1, d=2)
    cos, n = token_cosines(heads, torch.tensor([[True]]))
    assert n == 1
    torch.testing.assert_close(
        cos, torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    )
    sim = group_similarity(cos.numpy(), n, [("global", 1), ("rec", 2)])
    # Eq. 14 averages over all pairs i, j of the two groups (i = j included)
    np.testing.assert_allclose(sim, [[1.0, 0.5], [0.5, 0.5]])


def test_padding_and_token_count():
    heads = torch.randn(2, 2, 3, 4)
    valid = torch.tensor([[True, True, False], [True, False, False]])
    cos, n = token_cosines(heads, valid)
    assert n == 3
    manual = sum(
        torch.nn.functional.cosine_similarity(
            heads[b, :, s, None, :], heads[b, None, :, s, :], dim=-1
        )
        for b, s in [(0, 0), (0, 1), (1, 0)]
    )
    torch.testing.assert_close(cos, manual)


def test_encoder_of_a_grouped_model():
    torch.manual_seed(0)
    model = build_model(
        {"preset": "tiny", "input_groups": [["global", 2], ["rec", 1], ["loc", 1]]}, 30
    )
    assert head_groups(model.options) == [("global", 2), ("rec", 1), ("loc", 1)]
    result = encoder_head_similarity(model, [[5, 6, 7], [8, 9]], None, batch_size=1)
    sim = np.array(result["similarity"])
    assert result["tokens"] == 5 and sim.shape == (3, 3)
    np.testing.assert_allclose(sim, sim.T, atol=1e-6)
    # one head: only i = j
    assert sim[1, 1] == pytest.approx(1.0) and sim[2, 2] == pytest.approx(1.0)
    assert np.all(np.abs(sim) <= 1 + 1e-6) and result["average"] == pytest.approx(sim.mean())
    md = similarity_markdown([("x (seed 1)", result)], "t")
    assert "| group | global | rec | loc |" in md and "| average |" in md
    assert not model.encoder[-1].self_attn.record  # recording is switched off again


def test_rnn_models_are_refused():
    with pytest.raises(ValueError, match="Transformer"):
        encoder_head_similarity(build_model({"preset": "rnn_tiny"}, 30), [[5]], None)


def test_no_sentences_is_a_clear_error():
    # (was an AttributeError: the summed cosines stayed None)
    with pytest.raises(ValueError, match="at least one source sentence"):
        encoder_head_similarity(build_model({"preset": "tiny"}, 30), [], None)
