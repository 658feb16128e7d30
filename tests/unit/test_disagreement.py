"""Li et al. 2018's disagreement terms: the examples of docs/algorithms.md §DISREG,
brute-force agreement, masking."""

from __future__ import annotations

import itertools

import pytest
import torch

from wordorder.models.disagreement import (
    output_disagreement,
    position_disagreement,
    subspace_disagreement,
)


def _one_token(*head_vectors: list[float]) -> torch.Tensor:
    """Per-head vectors of one token → (B=1, H, T=1, d)."""
    return torch.tensor(head_vectors, dtype=torch.float32)[None, :, None, :]


ONE = torch.ones(1, 1, dtype=torch.bool)


def test_orthogonal_and_identical_heads():
    assert output_disagreement(_one_token([1, 0], [0, 1]), ONE).item() == pytest.approx(-0.5)
    assert output_disagreement(_one_token([1, 0], [1, 0]), ONE).item() == pytest.approx(-1.0)
    # Cosine ignores the length: parallel heads of different norms still agree fully.
    assert output_disagreement(_one_token([2, 0], [0.5, 0]), ONE).item() == pytest.approx(-1.0)
    # Opposite heads: (1 + 1 − 1 − 1) / 4 = 0, the maximum.
    assert output_disagreement(_one_token([1, 0], [-1, 0]), ONE).item() == pytest.approx(0.0)


def test_zero_vector_counts_as_cosine_zero():
    # Heads [1,0] and [0,0]: only cos(h1, h1) = 1 survives → −1/4, and no NaN.
    d = output_disagreement(_one_token([1, 0], [0, 0]), ONE)
    assert torch.isfinite(d) and d.item() == pytest.approx(-0.25)
    assert output_disagreement(_one_token([0, 0], [0, 0]), ONE).item() == 0.0


def test_matches_pairwise_cosine_sum():
    torch.manual_seed(0)
    heads = torch.randn(2, 3, 4, 5)
    valid = torch.tensor([[True, True, True, False], [True, False, False, False]])
    expected, count = 0.0, 0
    for b, t in itertools.product(range(2), range(4)):
        if not valid[b, t]:
            continue
        total = sum(
            torch.cosine_similarity(heads[b, i, t], heads[b, j, t], dim=0).item()
            for i in range(3)
            for j in range(3)
        )
        expected += -total / 9
        count += 1
    assert output_disagreement(heads, valid).item() == pytest.approx(expected / count, abs=1e-6)
    assert subspace_disagreement(heads, valid).item() == pytest.approx(expected / count, abs=1e-6)


def test_padding_tokens_are_ignored():
    agree = _one_token([1, 0], [1, 0])[0, :, 0]  # (H, d)
    disagree = _one_token([1, 0], [0, 1])[0, :, 0]
    heads = torch.stack([agree, disagree], dim=1)[None]  # (1, H=2, T=2, 2)
    both = torch.tensor([[True, True]])
    assert output_disagreement(heads, both).item() == pytest.approx(-0.75)
    assert output_disagreement(heads, torch.tensor([[False, True]])).item() == pytest.approx(-0.5)
    # Garbage (even NaN-free huge values) at a padded token changes nothing.
    noisy = heads.clone()
    noisy[0, :, 0] = torch.tensor([[1e6, -3.0], [0.0, 7.0]])
    assert output_disagreement(noisy, torch.tensor([[False, True]])).item() == pytest.approx(-0.5)
    # No valid token at all: 0, not NaN.
    assert output_disagreement(heads, torch.zeros(1, 2, dtype=torch.bool)).item() == 0.0


def test_position_disagreement_worked_example():
    # One query, H = 2, three keys. A¹ = [1, 0, 0], A² = [0.5, 0.5, 0]:
    # Σ_{i,j} Σ_s A^i A^j = 1 + 0.5 + 0.5 + 0.5 = 2.5 → D = −2.5 / 4.
    attn = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])[None, :, None, :]
    assert position_disagreement(attn, ONE).item() == pytest.approx(-0.625)
    # Heads on disjoint keys only agree with themselves: −(1 + 1)/4.
    apart = torch.tensor([[1.0, 0.0], [0.0, 1.0]])[None, :, None, :]
    assert position_disagreement(apart, ONE).item() == pytest.approx(-0.5)
    same = torch.tensor([[0.2, 0.8], [0.2, 0.8]])[None, :, None, :]
    assert position_disagreement(same, ONE).item() == pytest.approx(-(0.04 + 0.64))


def test_gradient_pushes_heads_apart():
    heads = _one_token([1.0, 0.1], [1.0, -0.1]).requires_grad_()
    d = output_disagreement(heads, ONE)
    d.backward()
    step = heads + 0.1 * heads.grad  # ascend D
    assert output_disagreement(step.detach(), ONE).item() > d.item()
