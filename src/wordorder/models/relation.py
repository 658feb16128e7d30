"""Relation-network layer and RNMT encoder (Zhang et al., COLING 2018; docs/algorithms.md §RN).

A relation layer refines token states x (B, L, d) in three steps: a CNN gives local features
c_i, graph propagation r_i = mean_j g([c_i; c_j]) relates every token pair, and an MLP f maps
r_i back to d. The pair function is never applied to a materialised (B, L, L, 2C) tensor:
its first layer splits into per-token projections and query rows are processed in chunks,
checkpointed in training, so memory is O(B * chunk * L * h) in both passes.

Masks are boolean with True = padding, and padding must be trailing (as everywhere in the
batching code).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint as _checkpoint

from wordorder.device import cpu_kernels
from wordorder.models.rnn_encoder import run_gru


def _pair_weights(valid: Tensor, pad_quirk: bool, dtype: torch.dtype) -> Tensor:
    """(B, L) averaging weights over j: 1/n_valid on valid j (fixed) or 1/L everywhere (quirk)."""
    if pad_quirk:
        return torch.full(valid.shape, 1.0 / valid.size(1), dtype=dtype, device=valid.device)
    w = valid.to(dtype)
    # clamp: an empty sentence gets all-zero weights instead of 0/0
    return w / w.sum(dim=1, keepdim=True).clamp(min=1.0)


def _chunk_rows(p: Tensor, q: Tensor, w: Tensor, rest: nn.ModuleList, slope: float) -> Tensor:
    """g for query rows p (B, I, h) against all keys q (B, L, h), reduced over j → (B, I, h)."""
    # Layer 1 on [c_i; c_j] = P_i + Q_j; the (B, I, L, h) sum is the largest live tensor.
    # In-place activations are safe: neither the add nor Linear needs its output for backward.
    h = F.leaky_relu(p[:, :, None, :] + q[:, None, :, :], slope, inplace=True)
    for lin in rest:
        h = F.leaky_relu(lin(h), slope, inplace=True)
    # weighted sum over j as a batched (1, L) @ (L, h) product: no transposed copy of h
    return (w[:, None, None, :].to(h.dtype) @ h).squeeze(2)


def graph_propagation(
    c: Tensor,
    valid: Tensor,
    layers: nn.ModuleList,
    chunk: int,
    pad_quirk: bool,
    slope: float,
    checkpoint: bool,
) -> Tensor:
    """r_i = mean_j g([c_i; c_j]) without building the pair tensor.

    Args:
        c: (B, L, C) node features.
        valid: (B, L) bool, True at real tokens.
        layers: the Linear layers of g; ``layers[0]`` has ``in_features == 2C``. A LeakyReLU
            with ``slope`` follows every layer.
        chunk: number of query rows i processed at once.
        pad_quirk: reproduce the reference code's averaging (see :class:`RelationLayer`).
        checkpoint: recompute each chunk in backward instead of storing its activations.

    Returns:
        (B, L, h) with zero rows at padding.
    """
    n_c = c.size(-1)
    if pad_quirk:
        c = c * valid[..., None].to(c.dtype)  # ref code: padded c_j enter g as zeros
    first = cast(nn.Linear, layers[0])
    # W [c_i; c_j] + b = (W1 c_i + b) + W2 c_j: two (B, L, h) projections replace L² inputs
    p = F.linear(c, first.weight[:, :n_c], first.bias)
    q = F.linear(c, first.weight[:, n_c:])
    w = _pair_weights(valid, pad_quirk, c.dtype)
    rest = layers[1:]
    out = []
    for start in range(0, c.size(1), max(1, chunk)):
        p_rows = p[:, start : start + max(1, chunk)]
        if checkpoint:
            out.append(_checkpoint(_chunk_rows, p_rows, q, w, rest, slope, use_reentrant=False))
        else:
            out.append(_chunk_rows(p_rows, q, w, rest, slope))
    return torch.cat(out, dim=1).masked_fill(~valid[..., None], 0.0)


def naive_graph_propagation(
    c: Tensor, valid: Tensor, layers: nn.ModuleList, pad_quirk: bool, slope: float
) -> Tensor:
    """Reference for :func:`graph_propagation` that builds the (B, L, L, 2C) concatenation.

    Only for tests and the memory benchmark. Returns (B, L, h), zero rows at padding.
    """
    b, n, n_c = c.shape
    if pad_quirk:
        c = c * valid[..., None].to(c.dtype)
    pairs = torch.cat([c[:, :, None].expand(b, n, n, n_c), c[:, None].expand(b, n, n, n_c)], -1)
    h = pairs
    for lin in layers:
        h = F.leaky_relu(lin(h), slope)
    w = _pair_weights(valid, pad_quirk, h.dtype)
    r = (h * w[:, None, :, None]).sum(dim=2)
    return r.masked_fill(~valid[..., None], 0.0)


class RelationLayer(nn.Module):
    """CNN → graph propagation → MLP; returns f(r_i) (B, L, d_in), no residual, 0 at padding.

    Args:
        d_in: input and output width.
        channels: (kernel width, output channels) per convolution; C = sum of channels.
        gp_hidden: width h of g and of f's hidden layers.
        gp_layers: number of Linear layers in g (the first takes [c_i; c_j], 2C wide).
        mlp_layers: number of Linear layers in f (h → ... → h → d_in).
        chunk: query rows per graph-propagation chunk (memory O(B * chunk * L * h)).
        pad_quirk: False (default) averages g over valid j only, which fixes the reference
            code (ictnlp/RN4NMT); True reproduces it: padded c_j are zeroed, so padded j
            still contribute g([c_i; 0]), and the sum is divided by the padded length L.
        slope: LeakyReLU negative slope, used for every activation (paper: 0.1).
    """

    def __init__(
        self,
        d_in: int,
        channels: Sequence[tuple[int, int]] = ((1, 128), (3, 256)),
        gp_hidden: int = 256,
        gp_layers: int = 4,
        mlp_layers: int = 2,
        chunk: int = 16,
        pad_quirk: bool = False,
        slope: float = 0.1,
    ) -> None:
        super().__init__()
        if gp_layers < 1 or mlp_layers < 1:
            raise ValueError("gp_layers and mlp_layers must be >= 1")
        self.chunk, self.pad_quirk, self.slope = chunk, pad_quirk, slope
        self.convs = nn.ModuleList(nn.Conv1d(d_in, ch, k, padding="same") for k, ch in channels)
        n_c = sum(ch for _, ch in channels)
        # BatchNorm is per channel, so one BN over the concatenation equals one BN per conv.
        self.norm = nn.BatchNorm1d(n_c)
        self.gp = nn.ModuleList(
            nn.Linear(2 * n_c if k == 0 else gp_hidden, gp_hidden) for k in range(gp_layers)
        )
        widths = [gp_hidden] * mlp_layers + [d_in]
        self.mlp = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths[:-1], widths[1:]))

    def _cnn(self, x: Tensor, valid: Tensor) -> Tensor:
        """(B, L, d_in) zeroed at padding → c (B, L, C), zero at padding."""
        xt = x.transpose(1, 2)  # Conv1d wants (B, d_in, L)
        c = torch.cat([conv(xt) for conv in self.convs], dim=1).transpose(1, 2)
        # BatchNorm on the valid rows only, so padding never enters the batch statistics
        # (and the output of a sentence does not depend on how much padding its batch has).
        if cpu_kernels(c):
            normed = self.norm(c[valid]) if bool(valid.any()) else c[valid]
            out = c.new_zeros(c.shape)
            out[valid] = normed
        else:
            out = self._masked_norm(c, valid)
        return F.leaky_relu(out, self.slope)  # leaky(0) = 0 keeps padding at zero

    def _masked_norm(self, c: Tensor, valid: Tensor) -> Tensor:
        """``self.norm`` over the valid rows of c (B, L, C) by masked sums, 0 at padding: the
        same as selecting those rows, whose number (a boolean index) the host would have to
        read from the device, which a CUDA graph cannot capture. Statistics in float32 at least,
        as autocast runs batch norm (float64 stays float64, the running statistics' dtype then);
        running statistics updated as BatchNorm1d updates them."""
        dtype = torch.promote_types(c.dtype, torch.float32)
        norm, m = self.norm, valid[..., None].to(dtype)
        x = c.to(dtype)
        r_mean, r_var, tracked = norm.running_mean, norm.running_var, norm.num_batches_tracked
        if norm.training or r_mean is None or r_var is None:
            n = m.sum()
            mean = (x * m).sum(dim=(0, 1)) / n.clamp(min=1)
            var = ((x - mean) * m).square().sum(dim=(0, 1)) / n.clamp(min=1)
            if norm.training and r_mean is not None and r_var is not None and tracked is not None:
                with torch.no_grad():
                    tracked.add_(1)
                    unbiased = var * n / (n - 1).clamp(min=1)
                    # a Python float: a new device tensor would be a host-to-device copy
                    rate: float | Tensor = (
                        norm.momentum
                        if norm.momentum is not None
                        else 1.0 / tracked.float()  # a cumulative average
                    )
                    r_mean.lerp_(mean, rate)
                    r_var.lerp_(unbiased, rate)
        else:
            mean, var = r_mean, r_var
        out = (x - mean) * torch.rsqrt(var + norm.eps)
        if norm.affine:
            out = out * norm.weight + norm.bias
        return (out * m).to(c.dtype)

    def forward(self, x: Tensor, pad: Tensor) -> Tensor:
        """x (B, L, d_in), pad (B, L) bool (True = padding) → f(r) (B, L, d_in)."""
        valid = ~pad
        # zeroed input: the "same" convolution then sees padding as the paper's zero borders
        c = self._cnn(x.masked_fill(pad[..., None], 0.0), valid)
        use_ckpt = self.training and torch.is_grad_enabled()
        h = graph_propagation(c, valid, self.gp, self.chunk, self.pad_quirk, self.slope, use_ckpt)
        for lin in self.mlp:
            # Eq. 10 applies f = leaky ReLU after every layer, the last one included
            h = F.leaky_relu(lin(h), self.slope)
        return h.masked_fill(pad[..., None], 0.0)


def reverse_padded(x: Tensor, lengths: Tensor) -> Tensor:
    """Reverse each sequence of x (B, L, d) within its own length; padding stays in place.

    lengths: (B,) integer. The map is its own inverse.
    """
    pos = torch.arange(x.size(1), device=x.device)[None, :]  # (1, L)
    lengths = lengths.to(x.device)[:, None]  # (B, 1)
    idx = torch.where(pos < lengths, lengths - 1 - pos, pos)  # (B, L)
    return x.gather(1, idx[..., None].expand_as(x))


class RNMTEncoder(nn.Module):
    """Encoder of the reference code: alternating GRUs and relation layers, dense + residual.

    o1 = fwdGRU(e) + e;          x2 = W0[e; o1];          o2 = RN0(x2) + x2
    x3 = W1[e; o1; o2];          o3 = bwdGRU(x3) + x3;    x4 = W2[e; o1; o2; o3]
    o4 = RN1(x4) + x4;           output = W3[e; o1; o2; o3; o4]

    GRU hidden sizes and W0..W2 outputs are d_embed; W3 maps to d_out. ``relation_kwargs``
    go to both :class:`RelationLayer` s.
    """

    def __init__(self, d_embed: int, d_out: int, **relation_kwargs: Any) -> None:
        super().__init__()
        self.fwd_gru = nn.GRU(d_embed, d_embed, batch_first=True)
        self.bwd_gru = nn.GRU(d_embed, d_embed, batch_first=True)
        self.rn0 = RelationLayer(d_embed, **relation_kwargs)
        self.rn1 = RelationLayer(d_embed, **relation_kwargs)
        self.down = nn.ModuleList(nn.Linear(k * d_embed, d_embed) for k in (2, 3, 4))
        self.out = nn.Linear(5 * d_embed, d_out)

    def forward(self, e: Tensor, pad: Tensor) -> Tensor:
        """e (B, L, d_embed) embeddings, pad (B, L) bool → (B, L, d_out), 0 at padding."""
        keep = (~pad)[..., None].to(e.dtype)
        lengths = (~pad).sum(dim=1)
        # Zero every stream at padding (Linear biases would otherwise leak there).
        e = e * keep
        o1 = run_gru(self.fwd_gru, e, lengths) + e
        x2 = self.down[0](torch.cat([e, o1], -1)) * keep
        o2 = self.rn0(x2, pad) + x2
        x3 = self.down[1](torch.cat([e, o1, o2], -1)) * keep
        # right-to-left GRU: reverse within each length, run left-to-right, reverse back
        rev = run_gru(self.bwd_gru, reverse_padded(x3, lengths), lengths)
        o3 = reverse_padded(rev, lengths) + x3
        x4 = self.down[2](torch.cat([e, o1, o2, o3], -1)) * keep
        o4 = self.rn1(x4, pad) + x4
        return self.out(torch.cat([e, o1, o2, o3, o4], -1)) * keep
