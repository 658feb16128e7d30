"""Choosing the torch device from a config value."""

from __future__ import annotations

import torch

from wordorder.errors import WordorderError


def resolve_device(name: str) -> torch.device:
    """"auto" → cuda when available, else cpu; asking for cuda without one is an error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise WordorderError(f"device '{name}' asked for, but torch sees no CUDA device",
                             hint="set train.device / decode.device to auto or cpu, or install a CUDA build of torch")
    return torch.device(name)
