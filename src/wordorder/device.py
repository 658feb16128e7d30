"""Choosing the torch device from a config value."""

from __future__ import annotations

import functools

import torch

from wordorder.errors import WordorderError


def resolve_device(name: str) -> torch.device:
    """ "auto" → cuda when available, else cpu; asking for cuda without one is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise WordorderError(
            f"device '{name}' asked for, but torch sees no CUDA device",
            hint=(
                "set train.device / decode.device to auto or cpu, or install a CUDA build of torch"
            ),
        )
    return torch.device(name)


def autocast_dtype(device: torch.device | str, amp: bool) -> torch.dtype | None:
    """The dtype of mixed-precision training: bf16 on a CUDA device that has it, else fp16 (to be
    used with a GradScaler); None (float32) without ``amp`` or off CUDA."""
    if not amp or torch.device(device).type != "cuda":
        return None
    return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16


@functools.cache
def keep_freed_cpu_memory() -> bool:
    """Let glibc keep freed memory for reuse instead of handing it back to the kernel.

    By default glibc serves large tensors with fresh ``mmap`` calls and unmaps them when freed,
    so every training update page-faults its activations in again (zero-filled by the kernel).
    Serving them from the heap and never trimming it keeps the pages: measured +1–2 % training
    throughput on the CPU benchmark. The price is that the process keeps its peak heap, which is
    what a training process reaches every update anyway. Returns False where the C library is
    not glibc (nothing changes there). The setting holds for the whole process, so it is made
    once: finding the C library runs ``ldconfig`` (2-5 ms), and decoding asks at every call.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_max = -1, -4  # from glibc's <malloc.h>
    return bool(mallopt(m_mmap_max, 0)) and bool(mallopt(m_trim_threshold, ctypes.c_int(2**31 - 1)))
