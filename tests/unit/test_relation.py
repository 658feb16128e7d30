"""Relation networks (Zhang et al. 2018): the toy of docs/algorithms.md §RN, chunked = naive,
masking, memory, encoder."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from wordorder.models.relation import (
    RelationLayer,
    RNMTEncoder,
    graph_propagation,
    naive_graph_propagation,
    reverse_padded,
)

SMALL = {"channels": ((1, 4), (3, 6)), "gp_hidden": 8, "gp_layers": 3, "chunk": 3}


def _pad_mask(lengths: list[int], total: int) -> torch.Tensor:
    return torch.arange(total)[None, :] >= torch.tensor(lengths)[:, None]


def _gp_layers(n_c: int, h: int, n: int, seed: int = 0) -> nn.ModuleList:
    torch.manual_seed(seed)
    return nn.ModuleList(nn.Linear(2 * n_c if k == 0 else h, h) for k in range(n)).double()


def test_toy_example():
    c = torch.tensor([[[1.0], [-1.0]]])  # B=1, L=2, C=1
    valid = torch.ones(1, 2, dtype=torch.bool)
    lin = nn.Linear(2, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0]]))
        lin.bias.zero_()
    layers = nn.ModuleList([lin])
    seen = []
    handle = lin.register_forward_hook(lambda m, i, o: seen.append(o.detach()))
    r_naive = naive_graph_propagation(c, valid, layers, pad_quirk=False, slope=0.0)
    handle.remove()
    assert seen[0][0, :, :, 0].tolist() == [[3.0, -1.0], [1.0, -3.0]]
    assert r_naive.flatten().tolist() == [1.5, 0.5]
    for chunk in (1, 2, 5):
        r = graph_propagation(c, valid, layers, chunk, False, 0.0, checkpoint=False)
        assert r.flatten().tolist() == [1.5, 0.5]
        # identity activation exposes the mean of the pre-activations of the chunked path
        r_lin = graph_propagation(c, valid, layers, chunk, False, 1.0, checkpoint=False)
        assert r_lin.flatten().tolist() == [1.0, -1.0]


@pytest.mark.parametrize("pad_quirk", [False, True])
@pytest.mark.parametrize("chunk", [1, 3, 7, 10])
def test_chunked_equals_naive(chunk, pad_quirk):
    torch.manual_seed(1)
    c = torch.randn(3, 7, 5, dtype=torch.float64)
    valid = ~_pad_mask([7, 4, 1], 7)
    layers = _gp_layers(5, 6, 3)
    want = naive_graph_propagation(c, valid, layers, pad_quirk, 0.1)
    got = graph_propagation(c, valid, layers, chunk, pad_quirk, 0.1, checkpoint=False)
    torch.testing.assert_close(got, want, atol=1e-6, rtol=0)
    assert got[~valid].abs().max() == 0


def test_quirk_matters_only_with_padding():
    torch.manual_seed(2)
    c = torch.randn(2, 6, 4, dtype=torch.float64)
    layers = _gp_layers(4, 5, 2)
    padded = ~_pad_mask([6, 3], 6)
    full = torch.ones(2, 6, dtype=torch.bool)

    def gp(valid: torch.Tensor, quirk: bool) -> torch.Tensor:
        return graph_propagation(c, valid, layers, 4, quirk, 0.1, False)

    torch.testing.assert_close(gp(full, True), gp(full, False), atol=1e-12, rtol=0)
    diff = (gp(padded, True) - gp(padded, False))[1, :3].abs().max()
    assert diff > 1e-3
    # the fixed version of the short row equals the same sentence without padding
    torch.testing.assert_close(
        gp(padded, False)[1, :3],
        graph_propagation(c[1:, :3], full[1:, :3], layers, 4, False, 0.1, False)[0],
        atol=1e-12,
        rtol=0,
    )


def test_checkpointed_gradient_equals_naive():
    torch.manual_seed(3)
    c = torch.randn(2, 5, 3, dtype=torch.float64, requires_grad=True)
    valid = ~_pad_mask([5, 2], 5)
    layers = _gp_layers(3, 4, 3)
    weight = torch.randn(2, 5, 4, dtype=torch.float64)

    def grads(fn):
        loss = (fn() * weight).sum()
        return torch.autograd.grad(loss, [c, *layers.parameters()])

    for quirk in (False, True):
        naive = grads(lambda quirk=quirk: naive_graph_propagation(c, valid, layers, quirk, 0.1))
        chunked = grads(
            lambda quirk=quirk: graph_propagation(c, valid, layers, 2, quirk, 0.1, True)
        )
        for a, b in zip(chunked, naive):
            torch.testing.assert_close(a, b, atol=1e-10, rtol=0)


def _max_numel(fn) -> int:
    """Largest tensor any single op produces while fn() runs."""
    from torch.utils._python_dispatch import TorchDispatchMode

    sizes = [0]

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor):
                    sizes[0] = max(sizes[0], t.numel())
            return out

    with Record():
        fn()
    return sizes[0]


def test_chunked_memory_is_linear_in_chunk():
    b, n, n_c, h, chunk = 2, 100, 16, 16, 8
    torch.manual_seed(4)
    c = torch.randn(b, n, n_c, requires_grad=True)
    valid = ~_pad_mask([100, 60], n)
    layers = _gp_layers(n_c, h, 3).float()

    def chunked():
        graph_propagation(c, valid, layers, chunk, False, 0.1, checkpoint=True).sum().backward()

    def naive():
        naive_graph_propagation(c, valid, layers, False, 0.1).sum().backward()

    assert _max_numel(chunked) <= b * chunk * n * h
    assert _max_numel(naive) >= b * n * n * 2 * n_c

    # Checkpointing: autograd keeps O(B L h) tensors (every chunk saves the same Q and views
    # of P), not the O(B L² h) chunk activations. Count distinct storages saved for backward.
    def saved_numel(ckpt: bool) -> int:
        storages: dict[int, int] = {}

        def pack(t):
            storage = t.untyped_storage()
            storages[storage.data_ptr()] = storage.nbytes() // t.element_size()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            graph_propagation(c, valid, layers, chunk, False, 0.1, checkpoint=ckpt)
        return sum(storages.values())

    assert saved_numel(False) >= b * n * n * h
    assert saved_numel(True) < b * n * n * h / 10


def _relation_layer(pad_quirk: bool = False) -> RelationLayer:
    torch.manual_seed(5)
    return RelationLayer(6, pad_quirk=pad_quirk, **SMALL)


def test_relation_layer_shapes_and_padding_rows():
    layer = _relation_layer().train()
    x = torch.randn(3, 7, 6)
    pad = _pad_mask([7, 5, 2], 7)
    out = layer(x, pad)
    assert out.shape == (3, 7, 6)
    assert out[pad].abs().max() == 0
    out.sum().backward()  # the checkpointed path runs in training
    assert layer.gp[0].weight.grad is not None and layer.convs[1].weight.grad is not None
    assert len(layer.mlp) == 2 and layer.mlp[-1].out_features == 6


def test_relation_layer_padding_invariance_eval():
    layer = _relation_layer().eval()
    torch.manual_seed(6)
    sent = torch.randn(1, 4, 6)
    alone = layer(sent, _pad_mask([4], 4))
    batch = torch.randn(2, 9, 6)  # the long neighbour and garbage in the padding
    batch[0, :4] = sent[0]
    out = layer(batch, _pad_mask([4, 9], 9))
    torch.testing.assert_close(out[0, :4], alone[0], atol=1e-5, rtol=0)


def test_relation_layer_padding_invariance_train():
    # In training the BatchNorm statistics depend on the batch's sentences, but not on padding.
    layer = _relation_layer().train()
    torch.manual_seed(7)
    x = torch.randn(2, 5, 6)
    short = layer(x, _pad_mask([5, 3], 5))
    longer = torch.cat([x, torch.randn(2, 4, 6)], dim=1)
    padded = layer(longer, _pad_mask([5, 3], 9))
    torch.testing.assert_close(padded[:, :5], short, atol=1e-5, rtol=0)
    assert padded[:, 5:].abs().max() == 0


def test_quirk_layer_depends_on_padding():
    layer = _relation_layer(pad_quirk=True).eval()
    torch.manual_seed(8)
    x = torch.randn(1, 4, 6)
    alone = layer(x, _pad_mask([4], 4))
    padded = layer(torch.cat([x, torch.zeros(1, 3, 6)], 1), _pad_mask([4], 7))
    assert (padded[0, :4] - alone[0]).abs().max() > 1e-4


def test_reverse_padded():
    x = torch.tensor([[1, 2, 3, 0], [4, 5, 0, 0], [6, 7, 8, 9], [0, 0, 0, 0]])[..., None]
    lengths = torch.tensor([3, 2, 4, 0])
    want = [[3, 2, 1, 0], [5, 4, 0, 0], [9, 8, 7, 6], [0, 0, 0, 0]]
    assert reverse_padded(x, lengths)[..., 0].tolist() == want
    assert torch.equal(reverse_padded(reverse_padded(x, lengths), lengths), x)


def _encoder() -> RNMTEncoder:
    torch.manual_seed(9)
    return RNMTEncoder(6, 10, **SMALL).eval()


def test_encoder_shape_and_padding_rows():
    enc = _encoder().train()
    e = torch.randn(3, 7, 6)
    pad = _pad_mask([7, 4, 2], 7)
    out = enc(e, pad)
    assert out.shape == (3, 7, 10)
    assert out[pad].abs().max() == 0
    out.sum().backward()
    assert enc.bwd_gru.weight_ih_l0.grad is not None


def test_encoder_padding_invariance():
    enc = _encoder()
    torch.manual_seed(10)
    sent = torch.randn(1, 3, 6)
    alone = enc(sent, _pad_mask([3], 3))
    batch = torch.randn(2, 8, 6)
    batch[1, :3] = sent[0]
    out = enc(batch, _pad_mask([8, 3], 8))
    torch.testing.assert_close(out[1, :3], alone[0], atol=1e-5, rtol=0)
    assert out[1, 3:].abs().max() == 0


def _reference_encoder(enc: RNMTEncoder, e: torch.Tensor) -> torch.Tensor:
    """The wiring equations on one unpadded sentence e (1, L, d); bwd GRU via torch.flip."""
    no_pad = torch.zeros(e.shape[:2], dtype=torch.bool)
    cat = lambda *xs: torch.cat(xs, -1)  # noqa: E731
    o1 = enc.fwd_gru(e)[0] + e
    x2 = enc.down[0](cat(e, o1))
    o2 = enc.rn0(x2, no_pad) + x2
    x3 = enc.down[1](cat(e, o1, o2))
    o3 = enc.bwd_gru(x3.flip(1))[0].flip(1) + x3
    x4 = enc.down[2](cat(e, o1, o2, o3))
    o4 = enc.rn1(x4, no_pad) + x4
    return enc.out(cat(e, o1, o2, o3, o4))


def test_encoder_matches_reference_wiring():
    enc = _encoder()
    torch.manual_seed(11)
    e = torch.randn(3, 6, 6)
    lengths = [6, 4, 1]
    out = enc(e, _pad_mask(lengths, 6))
    for b, n in enumerate(lengths):
        want = _reference_encoder(enc, e[b : b + 1, :n])[0]
        torch.testing.assert_close(out[b, :n], want, atol=1e-5, rtol=0)
