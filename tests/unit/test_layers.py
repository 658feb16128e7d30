"""Multi-head attention against a hand-written reference; masks; cache; FFN."""

from __future__ import annotations

import math

import torch

from wordorder.models.layers import FeedForward, MultiHeadAttention, key_padding_mask


def reference_attention(mha: MultiHeadAttention, query, memory, allowed=None, causal=False):
    """softmax(Q K^T / sqrt(d_head) + mask) V per head, written out with plain matmuls."""
    d, h = mha.d_model, mha.heads
    dh = d // h
    wk, wv = mha.kv_proj.weight[:d], mha.kv_proj.weight[d:]
    bk, bv = mha.kv_proj.bias[:d], mha.kv_proj.bias[d:]
    q = query @ mha.q_proj.weight.T + mha.q_proj.bias
    k = memory @ wk.T + bk
    v = memory @ wv.T + bv
    outs = []
    for head in range(h):
        sl = slice(head * dh, (head + 1) * dh)
        scores = q[..., sl] @ k[..., sl].transpose(-1, -2) / math.sqrt(dh)  # (B, T, S)
        if allowed is not None:
            scores = scores.masked_fill(~allowed, float("-inf"))
        if causal:
            t, s = scores.shape[-2:]
            scores = scores.masked_fill(torch.ones(t, s, dtype=torch.bool).triu(1), float("-inf"))
        outs.append(torch.softmax(scores, dim=-1) @ v[..., sl])
    return torch.cat(outs, dim=-1) @ mha.out_proj.weight.T + mha.out_proj.bias


def make_mha(d=8, heads=2):
    torch.manual_seed(0)
    mha = MultiHeadAttention(d, heads).double().eval()
    with torch.no_grad():  # non-zero biases so that they are checked too
        for lin in (mha.q_proj, mha.kv_proj, mha.out_proj):
            lin.bias.normal_()
    return mha


def test_cross_attention_equals_reference():
    mha = make_mha()
    x, mem = torch.randn(2, 5, 8, dtype=torch.double), torch.randn(2, 4, 8, dtype=torch.double)
    out, (k, v) = mha(x, mem)
    assert out.shape == (2, 5, 8) and k.shape == (2, 2, 4, 4) and v.shape == (2, 2, 4, 4)
    assert torch.allclose(out, reference_attention(mha, x, mem), atol=1e-6)


def test_self_attention_with_padding_equals_reference():
    mha = make_mha(12, 3)
    x = torch.randn(3, 6, 12, dtype=torch.double)
    pad = torch.tensor(
        [[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1], [0, 1, 1, 1, 1, 1]], dtype=torch.bool
    )
    out, _ = mha(x, mask=key_padding_mask(pad))
    ref = reference_attention(mha, x, x, allowed=~pad[:, None, :])
    assert torch.allclose(out, ref, atol=1e-6)


def test_padded_keys_get_zero_weight():
    mha = make_mha()
    x, mem = torch.randn(2, 3, 8, dtype=torch.double), torch.randn(2, 5, 8, dtype=torch.double)
    pad = torch.zeros(2, 5, dtype=torch.bool)
    pad[0, 3:] = True
    pad[1, 1:] = True
    mask = key_padding_mask(pad)
    out1, _ = mha(x, mem, mask=mask)
    mem2 = mem.clone()
    mem2[pad] = torch.randn(int(pad.sum()), 8, dtype=torch.double) * 100
    out2, _ = mha(x, mem2, mask=mask)
    assert torch.allclose(out1, out2, atol=1e-10)


def test_causal_mask_hides_the_future():
    mha = make_mha()
    x = torch.randn(2, 6, 8, dtype=torch.double)
    out1, _ = mha(x, causal=True)
    assert torch.allclose(out1, reference_attention(mha, x, x, causal=True), atol=1e-6)
    for t in range(5):
        y = x.clone()
        y[:, t + 1 :] = torch.randn_like(y[:, t + 1 :])
        out2, _ = mha(y, causal=True)
        assert torch.allclose(out1[:, : t + 1], out2[:, : t + 1], atol=1e-10)
        assert not torch.allclose(out1[:, t + 1 :], out2[:, t + 1 :])


def test_incremental_cache_equals_causal_attention():
    mha = make_mha()
    x = torch.randn(3, 5, 8, dtype=torch.double)
    full, _ = mha(x, causal=True)
    kv = None
    for t in range(5):
        out, kv = mha(x[:, t : t + 1], past_kv=kv)
        assert kv[0].shape == (3, 2, t + 1, 4)
        assert torch.allclose(out[:, 0], full[:, t], atol=1e-10)


def test_static_kv_equals_recomputing_from_memory():
    mha = make_mha()
    x, mem = torch.randn(2, 3, 8, dtype=torch.double), torch.randn(2, 4, 8, dtype=torch.double)
    out, _ = mha(x, mem)
    out_static, _ = mha(x, static_kv=mha.project_kv(mem))
    assert torch.equal(out, out_static)


def test_fully_padded_row_gives_no_nan():
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(2, 4, 8)
    pad = torch.tensor([[False, False, True, True], [True, True, True, True]])
    mask = key_padding_mask(pad)
    assert mask.shape == (2, 1, 1, 4)
    assert mask[1].all()  # no allowed key: allowed everywhere instead of NaN
    out, _ = mha(x, mask=mask)
    assert torch.isfinite(out).all()


def test_feed_forward_formula():
    torch.manual_seed(0)
    ffn = FeedForward(6, 10, activation_dropout=0.5).eval()
    x = torch.randn(2, 3, 6)
    expected = torch.relu(x @ ffn.fc1.weight.T + ffn.fc1.bias) @ ffn.fc2.weight.T + ffn.fc2.bias
    assert torch.allclose(ffn(x), expected, atol=1e-6)
    ffn.train()
    assert not torch.allclose(ffn(x), expected)  # activation dropout active in training


def test_bf16_attention_on_the_cpu_equals_float32_within_bf16_precision():
    """Under the CPU's bf16 autocast attention takes the explicit path (torch's fused CPU
    kernel is slow in bf16): same outputs as float32 up to bf16 rounding, padding and the
    causal mask respected, and gradients flow to every projection."""
    torch.manual_seed(3)
    attn = MultiHeadAttention(32, 4)
    x = torch.randn(3, 7, 32)
    pad = torch.zeros(3, 7, dtype=torch.bool)
    pad[1, 4:] = True
    mask = key_padding_mask(pad)
    for kwargs in ({"mask": mask}, {"causal": True}):
        ref, _ = attn(x, **kwargs)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out, _ = attn(x, **kwargs)
        assert out.dtype == torch.bfloat16
        torch.testing.assert_close(out.float(), ref, rtol=0.05, atol=0.03)
    # a padded key changes nothing, in bf16 as in float32
    x2 = x.clone()
    x2[1, 4:] = 100.0
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a, _ = attn(x, mask=mask)
        b, _ = attn(x2, mask=mask)
    assert torch.equal(a[1, :4], b[1, :4])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = attn(x, causal=True)
    out.float().sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in attn.parameters())
