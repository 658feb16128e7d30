"""Reordering embeddings (docs/algorithms.md §RE): a layer computes Chen et al. 2019's Eq. 6-9
exactly, with the penalty on the layer input Hⁿ⁻¹ (Wⁿ) and the self-attention output H̄ⁿ (W̄ⁿ),
Cⁿ read by the next sublayer and H̄ⁿ its residual. Written out by hand with the layer's own
weights, so that swapping an input, dropping Cⁿ or taking Cⁿ as the residual fails."""

from __future__ import annotations

import torch

from wordorder.models import build_model
from wordorder.models.layers import key_padding_mask
from wordorder.models.transformer_layers import SourceContext

B, T, S = 2, 5, 6


def model(side):
    torch.manual_seed(0)
    return build_model({"preset": "tiny", "reordering_embeddings": side}, 40).eval()


def eq_6_8(slot, h_prev, h_bar, pe):
    """Cⁿ = LN(H̄ⁿ + PE ⊙ sigmoid(V̄ⁿ tanh(Wⁿ Hⁿ⁻¹ + W̄ⁿ H̄ⁿ))) from the raw matrices."""
    pp = torch.sigmoid(
        torch.tanh(h_prev @ slot.w.weight.T + h_bar @ slot.w_bar.weight.T) @ slot.v_bar.weight.T
    )
    assert 0 < pp.min() and pp.max() < 1
    return slot.norm(h_bar + pe * pp)


def test_encoder_layer_is_eq_9():
    m = model("encoder")
    layer = m.encoder[1]
    g = torch.Generator().manual_seed(1)
    x = torch.randn(B, T, m.options.d_model, generator=g)
    pe = m.positions(T)
    mask = key_padding_mask(torch.zeros(B, T, dtype=torch.bool))
    with torch.no_grad():
        h_bar = layer.sub_attn.norm(layer.self_attn(x, mask=mask)[0] + x)
        c = eq_6_8(layer.slot, x, h_bar, pe)
        expected = layer.sub_ffn.norm(layer.ffn(c) + h_bar)
        got = layer(x, SourceContext(mask=mask, pe=pe))
        plain = layer.sub_ffn.norm(layer.ffn(h_bar) + h_bar)
    assert torch.allclose(got, expected, atol=1e-5)
    assert not torch.allclose(got, plain, atol=1e-3)  # the REs change the layer's output


def test_decoder_layer_feeds_cn_to_cross_attention_with_hbar_residual():
    m = model("decoder")
    layer = m.decoder[0]
    g = torch.Generator().manual_seed(2)
    d = m.options.d_model
    x, memory = torch.randn(B, T, d, generator=g), torch.randn(B, S, d, generator=g)
    pe = m.positions(T)
    src_mask = key_padding_mask(torch.zeros(B, S, dtype=torch.bool))
    with torch.no_grad():
        kv = layer.cross_attn.project_kv(memory)
        h_bar = layer.sub_self.norm(layer.self_attn(x, causal=True)[0] + x)
        c = eq_6_8(layer.slot, x, h_bar, pe)
        y = layer.sub_cross.norm(layer.cross_attn(c, mask=src_mask, static_kv=kv)[0] + h_bar)
        expected = layer.sub_ffn.norm(layer.ffn(y) + y)
        got, _ = layer(x, src_mask, kv, pe=pe)
    assert torch.allclose(got, expected, atol=1e-5)
