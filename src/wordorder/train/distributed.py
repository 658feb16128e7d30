"""Data-parallel training with PyTorch DDP, launched by ``torchrun`` (one process per GPU, NCCL;
or per CPU process, gloo, which is how the tests run it).

An update is ``accum_steps`` batches of ``batch_tokens`` whatever the number of processes: the
batches of an update are dealt out round-robin (``batches[rank::world]``), each process
accumulates its share without synchronising and the last backward all-reduces the gradients
once. DDP averages over processes, so each loss is scaled by ``world / tokens of the whole
update``: the gradient is exactly the single-process one, up to summation order. Only rank 0
evaluates, logs and writes checkpoints; stop decisions are shared with an all-reduce.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from wordorder.errors import WordorderError


@dataclass
class Dist:
    """This process' place: rank, world size and its device."""

    rank: int
    world: int
    device: torch.device

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world > 1


def env_rank() -> int:
    """This process' rank as torchrun gives it, before joining the process group (0 alone)."""
    return int(os.environ["RANK"]) if int(os.environ.get("WORLD_SIZE", "1")) > 1 else 0


def init_from_env(device: torch.device) -> Dist:
    """Join the process group torchrun describes (``WORLD_SIZE`` > 1), else a single process.

    ``device``: the configured device; on CUDA each process takes ``cuda:LOCAL_RANK``.
    """
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Dist(0, 1, device)
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    if device.type == "cuda":
        if torch.cuda.device_count() <= local:
            raise WordorderError(
                (
                    f"process {rank} wants cuda:{local} but "
                    f"{torch.cuda.device_count()} GPUs are visible"
                ),
                hint="start torchrun with --nproc_per_node at most the number of GPUs",
            )
        device = torch.device("cuda", local)
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        # The other processes wait while rank 0 decodes the dev set: allow a long evaluation.
        dist.init_process_group(
            "nccl" if device.type == "cuda" else "gloo", timeout=timedelta(hours=6)
        )
    return Dist(rank, world, device)


class LossModule(nn.Module):
    """The model and its loss as one module, so DDP sees every parameter use inside forward."""

    def __init__(self, model: nn.Module, loss_fn: Any) -> None:
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn

    def forward(self, batch: Any) -> tuple[torch.Tensor, torch.Tensor]:
        return self.loss_fn(self.model, batch)


def wrap(model: nn.Module, loss_fn: Any, d: Dist) -> nn.parallel.DistributedDataParallel | None:
    """A DDP module computing (loss, nll) of a batch, or None for a single process."""
    if not d.active:
        return None
    ids = [d.device.index] if d.device.type == "cuda" else None
    return nn.parallel.DistributedDataParallel(LossModule(model, loss_fn), device_ids=ids)


def flag_any(values: list[bool], d: Dist) -> list[bool]:
    """Each flag True on every process when it is True on any (stop decisions, signals)."""
    if not d.active:
        return list(values)
    t = torch.tensor([1.0 if v else 0.0 for v in values], device=d.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return [bool(x > 0) for x in t.tolist()]


def sum_all(values: list[float], d: Dist) -> list[float]:
    """Element-wise sum over processes (logged loss sums)."""
    if not d.active:
        return values
    t = torch.tensor(values, dtype=torch.float64, device=d.device)
    dist.all_reduce(t)
    return t.tolist()


def gather(obj: Any, d: Dist) -> list[Any]:
    """Every process' ``obj``, in rank order (on every process)."""
    if not d.active:
        return [obj]
    out: list[Any] = [None] * d.world
    dist.all_gather_object(out, obj)
    return out


def barrier(d: Dist) -> None:
    if d.active:
        dist.barrier()


def shutdown(d: Dist) -> None:
    if d.active and dist.is_initialized():
        dist.destroy_process_group()
