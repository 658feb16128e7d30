"""DiSAN: direction masks, a loop-by-loop reference, empty rows, padding invariance, size."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from wordorder.models.disan import DirectionalSelfAttention, direction_mask


def _keys_per_row(mask: torch.Tensor) -> list[set[int]]:
    return [set(torch.nonzero(row).flatten().tolist()) for row in mask]


def test_direction_masks():
    assert _keys_per_row(direction_mask(3, forward=True)) == [set(), {0}, {0, 1}]
    assert _keys_per_row(direction_mask(3, forward=False)) == [{1, 2}, {2}, set()]
    assert direction_mask(1, True).tolist() == [[False]]


def _reference_direction(direction, x: torch.Tensor, length: int, forward: bool) -> torch.Tensor:
    """The DiSAN equations for one unpadded sentence x (S, d), token by token."""
    h = F.elu(direction.dense(x[:length]))
    out = []
    for i in range(length):
        keys = range(i) if forward else range(i + 1, length)
        s = torch.zeros_like(h[i])
        if keys:
            # (|keys|, dim)
            logits = torch.stack(
                [
                    5
                    * torch.tanh(
                        (direction.key(h[j]) + direction.query(h[i]) + direction.logit_bias) / 5
                    )
                    for j in keys
                ]
            )
            probs = torch.softmax(logits, dim=0)  # per feature
            s = (probs * h[list(keys)]).sum(0)
        gate = torch.sigmoid(direction.fusion(torch.cat([h[i], s])))
        out.append(gate * h[i] + (1 - gate) * s)
    return torch.stack(out)


def test_matches_token_by_token_reference_with_padding():
    torch.manual_seed(0)
    layer = DirectionalSelfAttention(8)
    x = torch.randn(2, 5, 8)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
    out = layer(x, pad)
    assert out.shape == (2, 5, 8)
    for b, length in enumerate((5, 3)):
        fw = _reference_direction(layer.fw, x[b], length, True)
        bw = _reference_direction(layer.bw, x[b], length, False)
        torch.testing.assert_close(out[b, :length], torch.cat([fw, bw], -1), atol=1e-6, rtol=1e-5)
    assert torch.equal(out[1, 3:], torch.zeros(2, 8))


def test_queries_without_keys_get_s_zero_not_nan():
    torch.manual_seed(1)
    layer = DirectionalSelfAttention(6)
    x = torch.randn(1, 1, 6)  # a one-token sentence: no key in either direction
    out = layer(x, torch.zeros(1, 1, dtype=torch.bool))
    assert torch.isfinite(out).all()
    for part, direction in ((out[0, 0, :3], layer.fw), (out[0, 0, 3:], layer.bw)):
        h = F.elu(direction.dense(x[0, 0]))
        gate = torch.sigmoid(direction.fusion(torch.cat([h, torch.zeros(3)])))
        torch.testing.assert_close(part, gate * h)  # u = F⊙h + (1−F)⊙0
    # Gradients stay finite as well (softmax over -inf only would give NaN).
    x.requires_grad_()
    layer(x, torch.zeros(1, 1, dtype=torch.bool)).sum().backward()
    assert torch.isfinite(x.grad).all()


def test_forward_half_only_sees_the_past():
    torch.manual_seed(2)
    layer = DirectionalSelfAttention(8)
    x = torch.randn(1, 6, 8)
    pad = torch.zeros(1, 6, dtype=torch.bool)
    changed = x.clone()
    changed[0, 3] += 1.0
    a, b = layer(x, pad), layer(changed, pad)
    # Token 3 changed: forward outputs of 0..2 and backward outputs of 4..5 are unchanged.
    assert torch.equal(a[0, :3, :4], b[0, :3, :4])
    assert torch.equal(a[0, 4:, 4:], b[0, 4:, 4:])
    assert not torch.allclose(a[0, 4:, :4], b[0, 4:, :4])
    assert not torch.allclose(a[0, :3, 4:], b[0, :3, 4:])


def test_padding_invariance():
    torch.manual_seed(3)
    layer = DirectionalSelfAttention(8)
    sent = torch.randn(1, 4, 8)
    alone = layer(sent, torch.zeros(1, 4, dtype=torch.bool))
    # Extra padding (with garbage in it) appended.
    padded = torch.cat([sent, 100 * torch.randn(1, 3, 8)], dim=1)
    pad = torch.tensor([[False] * 4 + [True] * 3])
    torch.testing.assert_close(layer(padded, pad)[:, :4], alone, atol=1e-6, rtol=1e-5)
    # Batched with a longer sentence.
    batch = torch.cat([padded, torch.randn(1, 7, 8)])
    pad2 = torch.cat([pad, torch.zeros(1, 7, dtype=torch.bool)])
    torch.testing.assert_close(layer(batch, pad2)[:1, :4], alone, atol=1e-6, rtol=1e-5)


def test_parameter_count_formula():
    d = 512
    h = d // 2
    per_direction = (d * h + h) + 2 * h * h + h + (2 * h * h + h)  # W_h,b; W_1,W_2,b; W_f1,W_f2,b_f
    layer = DirectionalSelfAttention(d)
    assert sum(p.numel() for p in layer.parameters()) == 2 * per_direction == 12 * h * h + 6 * h


def test_odd_model_dimension_is_rejected():
    with pytest.raises(ValueError, match="even"):
        DirectionalSelfAttention(7)
