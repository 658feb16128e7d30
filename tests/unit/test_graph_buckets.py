"""The shape buckets of decode.cuda_graphs (:mod:`wordorder.decode.graph_buckets`): widths,
rows and search widths of a bucket, and the in-place copy of a batch's state into the captured
buffers. (The graphs per bucket against the default search: tests/system/test_static_beam.py.)"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch

from wordorder.decode.beam import max_lengths
from wordorder.decode.graph_buckets import Buckets, copy_into
from wordorder.errors import WordorderError


def test_widths_round_up_to_four_values_per_doubling():
    widths = [Buckets.width(n) for n in range(1, 42)]
    assert sorted(set(widths)) == [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48]
    assert all(n <= w < 1.25 * n + 1 for n, w in zip(range(1, 42), widths))
    assert Buckets.width(9, steps=2) == 12


@pytest.mark.parametrize("a,b", [(1.5, 10), (1.0, 3), (1.2, 0), (0.0, 0)])
def test_a_buckets_search_width_is_the_limit_of_a_full_source_plus_one(a, b):
    buckets = Buckets({}, a, b)
    for width in (8, 16, 40):
        full = torch.full((1, width), 7)  # `width` real tokens, the last one EOS
        assert buckets.steps(width) == int(max_lengths(full, a, b)) + 1
        shorter = torch.full((1, width - 3), 7)  # any source of the bucket needs no more
        assert buckets.steps(width) > int(max_lengths(shorter, a, b))


def test_a_buckets_rows_are_its_fullest_batch():
    widths = [16, 16, 16, 8, 8, 8, 8, 8]
    batches = [[0, 1], [2], [3, 4, 5], [6, 7]]
    assert Buckets.of(batches, widths, 1.5, 10).rows == {16: 2, 8: 3}


@dataclass
class State:
    kv: list[tuple[torch.Tensor, torch.Tensor]]
    t: torch.Tensor
    moving: list[str]


def test_copy_into_writes_the_buffers_in_place_and_keeps_the_bookkeeping():
    dst = State([(torch.zeros(2, 3), torch.zeros(2))], torch.zeros(1), ["kv"])
    buffers = [dst.kv[0][0], dst.kv[0][1], dst.t]
    src = State([(torch.ones(2, 3), torch.full((2,), 2.0))], torch.tensor([5.0]), [])
    copy_into(dst, src)
    assert [b is n for b, n in zip(buffers, [dst.kv[0][0], dst.kv[0][1], dst.t])] == [True] * 3
    assert dst.kv[0][0].eq(1).all() and dst.kv[0][1].eq(2).all() and float(dst.t) == 5.0
    assert dst.moving == ["kv"]  # what the captured step replaces: the capture's, not the batch's


def test_copy_into_refuses_another_shape():
    dst = State([(torch.zeros(2, 3), torch.zeros(2))], torch.zeros(1), [])
    with pytest.raises(WordorderError, match=r"shape \(2, 3\) cannot take \(2, 4\)"):
        copy_into(dst, State([(torch.zeros(2, 4), torch.zeros(2))], torch.zeros(1), []))
    with pytest.raises(WordorderError, match="holds 1 items where the batch has 2"):
        copy_into(dst, State([(torch.zeros(2, 3), torch.zeros(2))] * 2, torch.zeros(1), []))
