"""Choosing the torch device from a config value, and where the CPU takes its own kernels."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from pathlib import Path

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


def same_device(a: torch.device, b: torch.device) -> bool:
    """Whether ``a`` and ``b`` name one device: ``cuda`` (no index) is the current CUDA device,
    so it is ``cuda:0`` there. (``torch.device("cuda") != torch.device("cuda:0")``: a model on
    cuda:0 asked to decode on "cuda" was moved "again", and moving an ``nn.GRU`` re-flattens its
    weights into new memory, under the CUDA graphs of a training that read the old.)"""

    def index(d: torch.device) -> int | None:
        return torch.cuda.current_device() if d.type == "cuda" and d.index is None else d.index

    return a.type == b.type and index(a) == index(b)


_CUDA_PATHS = False


def cpu_kernels(t: torch.Tensor) -> bool:
    """Whether ``t``'s computation takes the CPU's own code paths: the cheap dropout masks, the
    explicit low-precision attention and the fused loss, each faster than the generic path there.

    False on CUDA, and on the CPU inside :func:`cuda_paths`.
    """
    return t.device.type == "cpu" and not _CUDA_PATHS


@contextlib.contextmanager
def cuda_paths() -> Iterator[None]:
    """Run CPU tensors through the code paths CUDA takes (SDPA attention, ``F.dropout``, logits
    and ``F.cross_entropy``), so that the operators an update dispatches on a GPU can be counted
    on any machine (:mod:`wordorder.train.opcount`)."""
    global _CUDA_PATHS
    before, _CUDA_PATHS = _CUDA_PATHS, True
    try:
        yield
    finally:
        _CUDA_PATHS = before


def autocast_dtype(
    device: torch.device | str, amp: bool, cpu_amp: bool | str = False
) -> torch.dtype | None:
    """The dtype of mixed-precision training, None for float32.

    On CUDA with ``amp``: bf16 where the device has it, else fp16 (to be used with a
    GradScaler). On the CPU with ``cpu_amp: auto``: bf16 where the CPU multiplies bf16
    natively, float32 elsewhere. On the CPU with ``cpu_amp`` true: bf16, which needs a CPU that
    multiplies bf16 natively (:func:`cpu_has_native_bf16`); elsewhere torch emulates it, slower
    than float32, so asking for it there is an error rather than a silent slowdown.
    """
    kind = torch.device(device).type
    if kind == "cuda":
        if not amp:
            return None
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    if kind == "cpu" and cpu_amp == "auto":
        return torch.bfloat16 if cpu_has_native_bf16() else None
    if kind == "cpu" and cpu_amp:
        if not cpu_has_native_bf16():
            raise WordorderError(
                "train.cpu_amp is set, but this CPU has no native bf16 arithmetic "
                "(neither AVX512-BF16 nor AMX-BF16 in /proc/cpuinfo): bf16 would be emulated, "
                "slower than float32",
                hint="set train.cpu_amp: false (float32), or train on a CPU or GPU that has bf16",
            )
        return torch.bfloat16
    return None


def precision_name(amp_dtype: torch.dtype | None) -> str:
    """How a training computes, for its summary: "fp32", "bf16" or "fp16"."""
    names = {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}
    return names[amp_dtype]


@functools.cache
def cpu_has_native_bf16() -> bool:
    """Whether the CPU multiplies bf16 in hardware (x86 AVX512-BF16 or AMX-BF16 on Linux).

    There torch's bf16 matrix products run at several times the float32 rate (measured 4.3×
    on a 2-core AMD EPYC with AVX512-BF16). Read from /proc/cpuinfo; False where it is absent.
    """
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    flags = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
    return bool(flags & {"avx512_bf16", "amx_bf16"})


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
