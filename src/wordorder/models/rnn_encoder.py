"""Encoders of the RNN family: the bidirectional GRU of RNNsearch (Bahdanau et al. 2015),
Chen et al. 2017's source dependency representation, and Zhang et al. 2018's RNMT encoder
(GRUs interleaved with relation-network layers, :mod:`wordorder.models.relation`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from wordorder.device import cpu_kernels
from wordorder.models.base import EncoderOut


@dataclass
class RNNEncoderOut(EncoderOut):
    """:class:`EncoderOut` plus what the RNN decoders read.

    Attributes:
        length: (B,) long, real source positions (with EOS).
        distance: (B, S, S) long syntax distances (SDAtt), or None.
        units: (B, S, d_model·2) annotations of the dependency-unit encoder (SDRNMT-2), or None.
    """

    length: Tensor
    distance: Tensor | None = None
    units: Tensor | None = None


def run_gru(gru: nn.GRU, x: Tensor, length: Tensor) -> Tensor:
    """Run ``gru`` (batch_first) over (B, S, d) inputs of the given (B,) lengths; the outputs
    at padding are 0 and a backward direction starts at each sentence's own last word.

    On the CPU the source is packed (only real positions are computed). Packing needs the
    lengths on the host, a device sync that a CUDA graph cannot capture, so on CUDA the padded
    batch runs as it is: a forward direction reaches the padding only after the real words, and
    a backward one runs over the rows rotated so that the padding comes first (a second pass,
    cheap where kernel launches, not arithmetic, bound the time). The same outputs either way.
    """
    real = torch.arange(x.size(1), device=x.device)[None, :] < length.to(x.device)[:, None]
    if cpu_kernels(x):
        # pack_padded_sequence rejects length 0: such a row runs on one pad token, then is zeroed
        packed = pack_padded_sequence(
            x, length.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False
        )
        out = pad_packed_sequence(gru(packed)[0], batch_first=True, total_length=x.size(1))[0]
    else:
        out = gru(x)[0]
        if gru.bidirectional:
            half = gru.hidden_size
            s = x.size(1)
            pos = torch.arange(s, device=x.device)[None, :]  # (1, S)
            shift = length.to(x.device)[:, None]  # (B, 1)
            # right-aligned rows: right[b, t] = x[b, (t + len_b) mod S]; and back
            to_right = ((pos + shift) % s)[..., None]
            back = ((pos - shift) % s)[..., None]
            right = x.gather(1, to_right.expand_as(x))
            backward = gru(right)[0][..., half:]
            backward = backward.gather(1, back.expand_as(backward))
            out = torch.cat([out[..., :half], backward], dim=-1)
    return out * real[..., None].to(out.dtype)


class DependencyUnitEncoder(nn.Module):
    """Chen et al. 2017's VU_j: the embeddings of the unit ⟨parent, siblings, children⟩ of word j
    (M slots, :func:`~wordorder.models.source_tree.dependency_units`) as an M×e matrix, a
    width-3 convolution and max-pooling over the slots. The details are not in the papers
    we have (no code either; docs/algorithms.md §SDR): M = ``unit_size``, ReLU, a learned ``<null>``
    vector for the root's parent and zeros for empty slots are our choices."""

    def __init__(self, d_embed: int, d_out: int) -> None:
        super().__init__()
        self.null = nn.Parameter(torch.zeros(d_embed))
        self.conv = nn.Conv1d(d_embed, d_out, kernel_size=3, padding=1)

    def forward(self, embedded: Tensor, units: Tensor) -> Tensor:
        """(B, S, e) source embeddings, (B, S, M) unit positions (−2 null, −1
        empty) → (B, S, d_out)."""
        b, s, m = units.shape
        e = embedded.size(-1)
        rows = embedded.gather(1, units.clamp(min=0).reshape(b, s * m, 1).expand(-1, -1, e)).view(
            b, s, m, e
        )
        rows = torch.where(units[..., None].eq(-2), self.null.to(rows.dtype), rows)
        rows = rows.masked_fill(units[..., None].eq(-1), 0.0)
        out = torch.relu(self.conv(rows.view(b * s, m, e).transpose(1, 2)))  # (B·S, d_out, M)
        return out.amax(dim=-1).view(b, s, -1)


class BiGRUEncoder(nn.Module):
    """h_j = [→h_j; ←h_j] over the (B, S, d_in) inputs: (B, S, 2·d_hidden)."""

    def __init__(self, d_in: int, d_hidden: int) -> None:
        super().__init__()
        self.gru = nn.GRU(d_in, d_hidden, batch_first=True, bidirectional=True)

    def forward(self, x: Tensor, pad: Tensor) -> Tensor:
        return run_gru(self.gru, x, (~pad).sum(dim=1))
