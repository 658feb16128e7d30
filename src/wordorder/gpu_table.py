"""Which update and decoding routes have passed the GPU checks, and on which torch: the data
behind the route table of docs/gpu.md ("Routes tried on a GPU"; tests/unit/test_gpu_table.py
holds the two equal). The ``auto`` settings that choose a route (``train.cuda_graphs``,
``train.stack_parameters``, ``decode.cuda_graphs``) take it only where its row passed
``check.sh tests`` on a GPU with the torch that is running: the pinned one where a CUDA build of
it is installed, the GPU image's own otherwise (the project's GPU machine has torch 2.11.0 and
cannot install another); elsewhere they stay eager and say so. ``true`` runs it regardless.
"""

from __future__ import annotations

import torch

#: The torch release of constraints.txt (CI's; a row records the torch it passed on).
PINNED_TORCH = "2.13.0"

#: (route, precision, family) → (date, torch) of the last ``check.sh tests`` it passed on a GPU.
#: Rows never run on a GPU are absent (docs/gpu.md lists them as "not yet run").
PASSED: dict[tuple[str, str, str], tuple[str, str]] = {
    ("eager", "fp32", "transformer"): ("2026-11-29", "2.11.0"),
    ("eager", "fp32", "rnn"): ("2026-11-29", "2.11.0"),
    ("eager", "bf16", "transformer"): ("2026-11-29", "2.11.0"),
    ("eager", "bf16", "rnn"): ("2026-11-29", "2.11.0"),
    ("eager", "fp16", "transformer"): ("2026-11-29", "2.11.0"),
    ("eager", "fp16", "rnn"): ("2026-11-29", "2.11.0"),
    ("stacked", "fp32", "transformer"): ("2026-11-29", "2.11.0"),
    ("stacked", "fp32", "rnn"): ("2026-11-29", "2.11.0"),
    ("stacked", "bf16", "transformer"): ("2026-11-29", "2.11.0"),
    ("stacked", "bf16", "rnn"): ("2026-11-29", "2.11.0"),
    ("graphed", "fp32", "transformer"): ("2026-11-29", "2.11.0"),
    ("graphed", "bf16", "transformer"): ("2026-11-29", "2.11.0"),
    ("graphed", "bf16", "rnn"): ("2026-11-29", "2.11.0"),
    ("decode-graphed", "fp32", "transformer"): ("2026-11-29", "2.11.0"),
}

#: Every row of the table: routes × precisions × families (graphs cannot capture fp16), and the
#: beam search replayed from graphs per shape bucket (``decode-graphed``; decoding runs in fp32).
ROWS = [
    (route, precision, family)
    for route in ("eager", "stacked", "ddp", "graphed", "decode-graphed")
    for precision in ("fp32", "bf16", "fp16")
    for family in ("transformer", "rnn")
    if not (route == "graphed" and precision == "fp16")
    and not (route == "decode-graphed" and precision != "fp32")
]


def precision_of(amp_dtype: torch.dtype | None) -> str:
    return {None: "fp32", torch.bfloat16: "bf16", torch.float16: "fp16"}[amp_dtype]


def family_of(model: torch.nn.Module) -> str:
    return "rnn" if type(model).__name__.startswith("RNN") else "transformer"


def tried(route: str, precision: str, family: str, version: str | None = None) -> bool:
    """Did the row pass on a GPU with this torch (``version``, the running one by default)?"""
    version = (version or torch.__version__).split("+")[0]
    passed = PASSED.get((route, precision, family))
    return passed is not None and passed[1] == version


def untried(route: str, precision: str, family: str) -> str:
    """Why ``auto`` does not take the route (for the log)."""
    passed = PASSED.get((route, precision, family))
    last = f"last passed with torch {passed[1]} on {passed[0]}" if passed else "never run on one"
    return (
        f"{route} {precision} {family} has not passed check.sh tests on a GPU with torch "
        f"{torch.__version__.split('+')[0]} ({last}; docs/gpu.md, routes tried on a GPU); "
        "set it true to run it"
    )
