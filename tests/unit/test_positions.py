"""Sinusoidal position encodings: exact entries, offsets, growth."""

from __future__ import annotations

import math

import pytest
import torch

from wordorder.models.positions import SinusoidalPositions, sinusoidal_table


def test_entries_match_the_formula_by_hand():
    pe = sinusoidal_table(10, 8)
    assert pe.shape == (10, 8)
    # i = 0: frequency 1.
    assert pe[3, 0].item() == pytest.approx(math.sin(3.0), abs=1e-7)
    assert pe[3, 1].item() == pytest.approx(math.cos(3.0), abs=1e-7)
    # i = 1: 10000^(2/8) = 10.
    assert pe[5, 2].item() == pytest.approx(math.sin(0.5), abs=1e-7)
    assert pe[5, 3].item() == pytest.approx(math.cos(0.5), abs=1e-7)
    # i = 3: 10000^(6/8) = 1000.
    assert pe[7, 6].item() == pytest.approx(math.sin(0.007), abs=1e-7)
    assert pe[7, 7].item() == pytest.approx(math.cos(0.007), abs=1e-7)
    # Position 0: sin 0 = 0, cos 0 = 1.
    assert pe[0].tolist() == [0.0, 1.0] * 4


def test_general_formula_on_all_entries():
    d = 16
    pe = sinusoidal_table(50, d)
    for pos in (0, 1, 17, 49):
        for i in range(d // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-6)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-6)


def test_offset_gives_the_same_rows_as_slicing():
    positions = SinusoidalPositions(12, max_positions=32)
    full = positions(20)
    assert torch.equal(positions(5, offset=7), full[7:12])
    assert torch.equal(positions(1, offset=19), full[19:20])


def test_table_grows_beyond_max_positions():
    positions = SinusoidalPositions(6, max_positions=4)
    rows = positions(3, offset=8)  # positions 8..10, past the initial table
    assert torch.allclose(rows, sinusoidal_table(11, 6)[8:11])
    assert "table" not in positions.state_dict()  # derived, not saved in checkpoints


def test_odd_dimension_is_rejected():
    with pytest.raises(ValueError):
        sinusoidal_table(4, 7)
