"""Choosing the device and the precision of training."""

from __future__ import annotations

import pytest
import torch

from wordorder import device as dev
from wordorder.device import same_device
from wordorder.errors import WordorderError


def test_cpu_trains_in_float32_unless_cpu_amp_is_asked_for():
    assert dev.autocast_dtype("cpu", amp=True) is None  # amp alone is CUDA's
    assert dev.autocast_dtype("cpu", amp=True, cpu_amp=False) is None


def test_cpu_amp_is_bf16_where_the_cpu_has_it_and_an_error_where_it_does_not(monkeypatch):
    monkeypatch.setattr(dev, "cpu_has_native_bf16", lambda: True)
    assert dev.autocast_dtype("cpu", amp=False, cpu_amp=True) == torch.bfloat16
    monkeypatch.setattr(dev, "cpu_has_native_bf16", lambda: False)
    with pytest.raises(WordorderError, match="cpu_amp.*no native bf16") as err:
        dev.autocast_dtype("cpu", amp=True, cpu_amp=True)
    assert "train.cpu_amp: false" in err.value.hint


def test_native_bf16_is_read_from_the_cpu_flags():
    flags = open("/proc/cpuinfo", encoding="utf-8").read()  # this test runs on Linux
    expected = " avx512_bf16" in flags or " amx_bf16" in flags
    assert dev.cpu_has_native_bf16() is expected


def test_cpu_amp_auto_follows_the_cpu(monkeypatch):
    """auto: bf16 where the CPU multiplies bf16 natively, float32 (no error) elsewhere; CUDA
    ignores it."""
    monkeypatch.setattr(dev, "cpu_has_native_bf16", lambda: True)
    assert dev.autocast_dtype("cpu", amp=False, cpu_amp="auto") == torch.bfloat16
    monkeypatch.setattr(dev, "cpu_has_native_bf16", lambda: False)
    assert dev.autocast_dtype("cpu", amp=False, cpu_amp="auto") is None


def test_cuda_without_an_index_is_the_current_cuda_device(monkeypatch):
    """A model on cuda:0 decoding on "cuda" stays where it is: moving it again re-flattened its
    GRUs' weights into new memory under a graphed training's CUDA graphs (H200, 2026-11-29)."""
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    cuda, cuda0, cuda1, cpu = (torch.device(d) for d in ("cuda", "cuda:0", "cuda:1", "cpu"))
    assert same_device(cuda0, cuda) and same_device(cuda, cuda0) and same_device(cuda, cuda)
    assert not same_device(cuda1, cuda) and not same_device(cuda0, cuda1)
    assert same_device(cpu, torch.device("cpu")) and not same_device(cpu, cuda)
    assert not same_device(torch.device("meta"), cpu)
