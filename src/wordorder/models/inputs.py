"""Source input representations that replace "scaled word embedding + sinusoidal PE".

* :class:`GroupedInput`: Chen et al. 2020's diverse input representation (§III–IV). The word
  vectors are projected (Eq. 5) and split into groups along the model dimension; each group
  learns one kind of feature (Eq. 6) and the results are concatenated (Eq. 7). Group sizes
  are multiples of the head size, so each feature lands in whole attention heads.
* :class:`FactoredInput`: Sennrich & Haddow 2016's linguistic input features: the word
  embedding shares the model dimension with one embedding per factor (POS, BIEO, ...).

Batches are right-padded: ``pad`` (B, S) is True at padding, and the real tokens of a row
are positions ``0 .. length-1``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
from torch import Tensor, nn

from wordorder.device import cpu_kernels
from wordorder.models.positions import SinusoidalPositions
from wordorder.models.rnn_encoder import run_gru

Feats = Mapping[str, Tensor]
GROUP_FEATURES = ("global", "rec", "loc", "syn")
RNN_CELLS = {"gru": nn.GRU, "lstm": nn.LSTM}


def _lengths(pad: Tensor) -> Tensor:
    """(B, S) padding flags → (B,) lengths; ValueError unless the batch is right-padded
    (packing and the "padding cannot leak" guarantees rely on it)."""
    lengths = (~pad).sum(dim=1)
    positions = torch.arange(pad.size(1), device=pad.device)
    if not torch.equal(pad, positions[None, :] >= lengths[:, None]):
        raise ValueError(
            "source batches must be right-padded (padding only after the last real token)"
        )
    return lengths


class _GlobalGroup(nn.Module):
    """Func_pe: X_g + PE, with a sinusoidal table of the group's own size (§II-A)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.positions = SinusoidalPositions(size)

    def forward(self, x: Tensor, pad: Tensor, feats: Feats) -> Tensor:
        """x: (B, S, d_g) → (B, S, d_g)."""
        return x + self.positions(x.size(1)).to(x.dtype)


class _RecGroup(nn.Module):
    """Func_Rec (Eqs. 8–9): a bidirectional RNN with d_r units per direction, then a linear
    map of [r_fw; r_bw] (2·d_r) back to d_r. The paper's base setting: d_r = 128, "the hidden
    dimension of RNN is 256" (= both directions together)."""

    def __init__(self, size: int, cell: str) -> None:
        super().__init__()
        if cell not in RNN_CELLS:
            raise ValueError(f"rec_cell must be one of {sorted(RNN_CELLS)}, got {cell!r}")
        self.rnn = RNN_CELLS[cell](size, size, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * size, size)

    def forward(self, x: Tensor, pad: Tensor, feats: Feats) -> Tensor:
        """x: (B, S, d_r) → (B, S, d_r), zero at padding."""
        # The backward direction starts at each row's last real token (packed on the CPU; on
        # CUDA without reading the lengths on the host: run_gru), so the amount of padding
        # cannot change the states.
        lengths = _lengths(pad) if cpu_kernels(x) else (~pad).sum(dim=1)
        h = run_gru(self.rnn, x, lengths)  # (B, S, 2·d_r)
        return self.out(h).masked_fill(pad[..., None], 0.0)


class _LocGroup(nn.Module):
    """Func_Loc (Eq. 10): l_j = ReLU(conv_m(x)_j) + x_j, one convolution of width m over the
    sequence, zero-padded at the sentence borders ("same" output length)."""

    def __init__(self, size: int, kernel: int) -> None:
        super().__init__()
        if kernel < 1 or kernel % 2 == 0:
            raise ValueError(f"loc_kernel must be odd and positive (centred window), got {kernel}")
        self.conv = nn.Conv1d(size, size, kernel, padding=kernel // 2)

    def forward(self, x: Tensor, pad: Tensor, feats: Feats) -> Tensor:
        """x: (B, S, d_l) → (B, S, d_l), zero at padding."""
        # Padded positions read as zeros, exactly like the border padding of a lone sentence,
        # so a token's window never sees what happens to lie in the padding.
        x = x.masked_fill(pad[..., None], 0.0)
        local = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
        return (local + x).masked_fill(pad[..., None], 0.0)


class _SynGroup(nn.Module):
    """Func_Syn (Eq. 12): X_g + PE + POS-tag embedding (tag 0 = PAD, a zero vector)."""

    def __init__(self, size: int, pos_vocab: int) -> None:
        super().__init__()
        if pos_vocab < 1:
            raise ValueError("a syn group needs pos_vocab > 0 (the size of the POS-tag vocabulary)")
        self.positions = SinusoidalPositions(size)
        # Default N(0, 1) init: the same scale as the sqrt(d)-scaled word embeddings it is
        # added to (the paper only says the tag vectors are "initialized").
        self.tags = nn.Embedding(pos_vocab, size, padding_idx=0)

    def forward(self, x: Tensor, pad: Tensor, feats: Feats) -> Tensor:
        """x: (B, S, d_s), feats["pos"]: (B, S) tag ids → (B, S, d_s)."""
        if "pos" not in feats:
            raise ValueError(
                'a syn input group needs the POS tags as feats["pos"] ((B, S) LongTensor, 0 = PAD)'
            )
        pos = feats["pos"]
        if pos.shape != x.shape[:2]:
            raise ValueError(
                f'feats["pos"] has shape {tuple(pos.shape)}, expected {tuple(x.shape[:2])}'
            )
        return x + self.positions(x.size(1)).to(x.dtype) + self.tags(pos).to(x.dtype)


class GroupedInput(nn.Module):
    """Chen et al. 2020's diverse input representation (Eqs. 5–7).

    ``groups`` lists (feature, size) in output order, e.g. Fusing_Diverse for the base model:
    ``[("global", 128), ("rec", 128), ("loc", 128), ("syn", 128)]``. Feature kinds:
    ``global`` X_g + PE; ``rec`` BiRNN + projection; ``loc`` convolution + residual; ``syn``
    X_g + PE + POS embedding (needs ``pos_vocab`` and ``feats["pos"]``).

    The per-group projections W_g (d_model × d_g) of Eq. 5 are the column blocks of one
    bias-free d_model × d_model linear map.
    """

    def __init__(
        self,
        d_model: int,
        groups: Sequence[tuple[str, int]],
        pos_vocab: int = 0,
        rec_cell: str = "gru",
        loc_kernel: int = 5,
    ) -> None:
        super().__init__()
        groups = [(str(f), int(n)) for f, n in groups]
        if not groups:
            raise ValueError("GroupedInput needs at least one group")
        for feature, size in groups:
            if feature not in GROUP_FEATURES:
                raise ValueError(
                    f"unknown input group feature {feature!r}; expected one of {GROUP_FEATURES}"
                )
            if size < 2 or size % 2:
                raise ValueError(
                    f"input group {feature!r} has size {size}; sizes must be even and positive "
                    "(sinusoidal encodings pair sines with cosines)"
                )
        total = sum(size for _, size in groups)
        if total != d_model:
            raise ValueError(f"input group sizes sum to {total}, not d_model={d_model}")
        self.d_model = d_model
        self.groups = groups
        self.proj = nn.Linear(d_model, d_model, bias=False)
        # Unit-variance inputs stay unit-variance, like the plain embedding + PE they replace.
        nn.init.xavier_uniform_(self.proj.weight)
        self.funcs = nn.ModuleList(
            self._func(f, n, pos_vocab, rec_cell, loc_kernel) for f, n in groups
        )

    @staticmethod
    def _func(feature: str, size: int, pos_vocab: int, rec_cell: str, loc_kernel: int) -> nn.Module:
        if feature == "global":
            return _GlobalGroup(size)
        if feature == "rec":
            return _RecGroup(size, rec_cell)
        if feature == "loc":
            return _LocGroup(size, loc_kernel)
        return _SynGroup(size, pos_vocab)

    def group_slices(self) -> list[tuple[str, slice]]:
        """Which output dimensions belong to which group, in order (e.g. to compare the
        attention heads fed by each feature, Chen et al. 2020 Table IV)."""
        out, start = [], 0
        for feature, size in self.groups:
            out.append((feature, slice(start, start + size)))
            start += size
        return out

    def forward(self, x: Tensor, pad: Tensor, feats: Feats | None = None) -> Tensor:
        """x: (B, S, d) sqrt(d)-scaled word embeddings; pad: (B, S) bool, True = PAD;
        feats: (B, S) LongTensors (``pos`` for a syn group) → (B, S, d)."""
        feats = feats or {}
        projected = self.proj(x)
        parts = [
            func(projected[..., sl], pad, feats)
            for func, (_, sl) in zip(self.funcs, self.group_slices())
        ]
        return torch.cat(parts, dim=-1)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, groups={self.groups}"


class FactoredInput(nn.Module):
    """Sennrich & Haddow 2016's linguistic input features: the encoder input is the
    concatenation [word; factor_1; ...; factor_k] (in the order of ``factors``), with the
    factor dimensions taken from the model dimension so the total stays d_model.

    With tied embeddings the source and target share one d_model-wide matrix, so the word part
    is the first d_model − Σ dims columns of its rows; an untied source matrix is only that
    wide. The result is scaled by sqrt(d_model) and gets the d_model sinusoidal PE, as the
    plain embedding would.
    """

    def __init__(
        self, d_model: int, factors: Mapping[str, int], factor_vocab: Mapping[str, int]
    ) -> None:
        super().__init__()
        factors = {str(k): int(v) for k, v in factors.items()}
        if not factors:
            raise ValueError("FactoredInput needs at least one factor")
        if any(dim < 1 for dim in factors.values()):
            raise ValueError(f"factor dimensions must be positive, got {factors}")
        if sum(factors.values()) >= d_model:
            raise ValueError(
                f"the factor dimensions sum to {sum(factors.values())}, leaving no room for the "
                f"word embedding in d_model={d_model}"
            )
        for name in factors:
            if int(factor_vocab.get(name, 0)) < 1:
                raise ValueError(f"factor {name!r} needs a vocabulary size > 0 in factor_vocab")
        self.d_model = d_model
        self.factors = factors
        self.word_dim = d_model - sum(factors.values())
        self.scale = math.sqrt(d_model)
        self.embeddings = nn.ModuleDict()
        for name, dim in factors.items():
            emb = nn.Embedding(int(factor_vocab[name]), dim, padding_idx=0)
            # Same init as the word embedding, so all parts have unit variance after scaling.
            nn.init.normal_(emb.weight, std=d_model**-0.5)
            with torch.no_grad():
                emb.weight[0].zero_()
            self.embeddings[name] = emb
        self.positions = SinusoidalPositions(d_model)

    def forward(self, word_emb: Tensor, feats: Feats) -> Tensor:
        """word_emb: (B, S, ≥ word_dim) unscaled rows of the source embedding; feats: name →
        (B, S) factor ids (0 = PAD) → (B, S, d_model)."""
        missing = [name for name in self.factors if name not in feats]
        if missing:
            raise ValueError(f"FactoredInput needs the source features {missing}")
        parts = [word_emb[..., : self.word_dim]]
        parts += [self.embeddings[name](feats[name]).to(word_emb.dtype) for name in self.factors]
        x = torch.cat(parts, dim=-1) * self.scale
        return x + self.positions(x.size(1)).to(x.dtype)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, word_dim={self.word_dim}, factors={self.factors}"
