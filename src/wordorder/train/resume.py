"""Resumable training: the full training state in one atomically written file.

``state.pt`` holds the model weights, the optimizer, scheduler and gradient-scaler states, the
random generators (torch CPU and CUDA, Python's ``random``), the position in the data (epoch
and next batch of that epoch) and the loop's counters. It is written every
``checkpoint_every`` updates and when the process gets SIGTERM (what SLURM sends at a time
limit), always to a temporary name and renamed, so a kill at any moment leaves either the old
or the new state. A rerun with the same state path continues from it: on the CPU the final
weights are bitwise those of an uninterrupted run. A state written for other data or options
is not resumed from (it says so and trains from scratch): its fingerprint covers the options
that shape the run and a digest of every id of the training and dev data, sources, targets and
feature columns alike, so a change anywhere in the data (a new preordering, new syntax
features) is seen. It is read with ``weights_only=True``.

The state lives outside the job's declared outputs (``results/<exp>/resume/...``), so Snakemake
does not delete it when a job fails or hits its time limit. The outputs it does delete come
back on resume: the metrics log so far is part of the state, and the best checkpoint (with the
checkpoint-averaging history) is kept beside it (:mod:`wordorder.train.kept`). A training
that finishes replaces its state by a record of its outputs (:mod:`wordorder.train.finished`).
"""

from __future__ import annotations

import hashlib
import json
import random
import signal
from array import array
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any

import torch

from wordorder.errors import WordorderError
from wordorder.io import atomic_open, save_torch
from wordorder.model_io.batching import Pair
from wordorder.model_io.checkpoint import cpu_state, plain

Feats = Mapping[str, Sequence[Sequence[int]]]

STATE_FORMAT = "wordorder-train-state-2"
# Format 1 kept neither the best checkpoint nor the metrics log: resuming it would lose them.
OLD_FORMATS = ("wordorder-train-state-1",)


@dataclass
class Progress:
    """The loop's counters at the end of an update, and its log so far."""

    step: int = 0
    epoch: int = 0  # the epoch in progress (1-based; 0 = none started)
    next_batch: int = 0  # index of the next batch of that epoch
    train_tokens: int = 0
    best_score: float = float("-inf")  # of the train.best_by criterion, higher is better
    best_bleu: float = float("-inf")  # the dev BLEU of that checkpoint
    best_step: int = 0
    evals_since_best: int = 0
    last_eval: int = -1
    train_seconds: float = 0.0  # wall time spent so far (for max_minutes across restarts)
    # The training-log window in progress (sums since the last log line), so that the first
    # line after a resume covers the same updates as without it.
    window: list[list[float]] = field(default_factory=list)  # [loss, nll] sums of each process
    window_tokens: int = 0
    kept: str = ""  # the folder of kept checkpoints (wordorder.train.kept) this state goes with
    metrics: list[str] = field(default_factory=list)  # the lines of metrics.jsonl
    # The best_by score patience counts from: the last one that beat its predecessor by min_delta
    # (equal to best_score when min_delta is 0; states written before it existed load as -inf).
    patience_score: float = float("-inf")
    # CPU seconds of this training so far, earlier attempts included (the experiment's cost;
    # states written before it existed load as 0)
    cpu_seconds: float = 0.0


def fingerprint(*parts: Any) -> str:
    """A short hash of the things a state must match to be resumed (options, data digest)."""
    text = json.dumps(plain(list(parts)), sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def rng_state() -> dict[str, Any]:
    """This process' random generators, as plain tensors and lists."""
    return _rng_state()


def _rng_state() -> dict[str, Any]:
    version, internal, gauss = random.getstate()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
        "python": [version, list(internal), gauss],
    }


def _set_rng_state(state: Mapping[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(list(state["cuda"]))
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))


def save_state(
    path: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    scaler: torch.amp.GradScaler,
    progress: Progress,
    key: str,
    rngs: list[dict[str, Any]] | None = None,
) -> None:
    """Atomically write the training state (see the module docstring); ``rngs``: the random
    generators of every process of a data-parallel run, in rank order (default: this one's)."""
    obj = {
        "format": STATE_FORMAT,
        "fingerprint": key,
        "progress": asdict(progress),
        "model": cpu_state(model),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "scaler": scaler.state_dict(),
        "rng": rngs or [_rng_state()],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    save_torch(obj, path)


def load_state(
    path: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    scaler: torch.amp.GradScaler,
    key: str,
    rank: int = 0,
) -> Progress | None:
    """Restore a saved state into the given objects; None when there is none to resume (no
    file, or one written for other options or data). ``rank`` picks this process' generators
    (a process the state has none for starts from rank 0's, offset by its rank)."""
    if not path.is_file():
        return None
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated by a full disk, not a torch file, unsafe content
        raise WordorderError(
            f"cannot read the training state: {e}",
            path=path,
            hint="delete it to start this training from scratch",
        ) from None
    if isinstance(obj, dict) and obj.get("format") in OLD_FORMATS:
        raise WordorderError(
            f"a training state of an older version ({obj['format']}), which did not keep the best "
            "checkpoint and the metrics log with it",
            path=path,
            hint="delete it to start this training from scratch (or finish it with that version)",
        )
    if not isinstance(obj, dict) or obj.get("format") != STATE_FORMAT:
        raise WordorderError(
            "not a wordorder training state",
            path=path,
            hint="delete it to start this training from scratch",
        )
    if obj["fingerprint"] != key:
        print(
            f"not resuming {path}: it was written for other training options or data; training "
            "from scratch (the state is replaced at the first checkpoint)",
            flush=True,
        )
        return None
    model.load_state_dict(obj["model"])
    optimizer.load_state_dict(obj["optimizer"])
    scheduler.load_state_dict(obj["scheduler"])
    scaler.load_state_dict(obj["scaler"])
    rngs = obj["rng"]
    _set_rng_state(rngs[rank] if rank < len(rngs) else rngs[0])
    if rank >= len(rngs):
        torch.manual_seed(int(torch.randint(2**31, ())) + rank)
    return Progress(**obj["progress"])


class StopSignal:
    """Records SIGTERM (and SIGINT) instead of dying at once, so the loop can save its state
    after the update in progress; the previous handlers come back on ``restore``."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def install(self) -> StopSignal:
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                self._previous[sig] = signal.signal(sig, self._handle)
            except ValueError:  # not the main thread: leave the default behaviour
                pass
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.received = signum

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()


class TrainingInterrupted(WordorderError):
    """Training stopped on a signal after saving its state."""


def data_digest(
    pairs: Sequence[Pair],
    feats: Feats | None,
    dev: Iterable[Sequence[Sequence[int]]] = (),
    chunk: int = 100_000,
) -> str:
    """sha256 of all the data a training sees: the training pairs, its feature columns (by
    name) and the ``dev`` columns (dev sources, targets, features), each sentence's length then
    its ids, in C loops (about 1.4 s for 300,000 pairs and a feature column)."""
    digest = hashlib.sha256(json.dumps(sorted(feats or {})).encode("utf-8"))
    columns: list[Iterable[Sequence[int]]] = [chain.from_iterable(pairs)]
    columns += [column for _, column in sorted((feats or {}).items())]
    for column in chain(columns, dev):
        rows = iter(column)
        while batch := list(islice(rows, chunk)):
            digest.update(array("q", map(len, batch)).tobytes())
            digest.update(array("q", chain.from_iterable(batch)).tobytes())
        digest.update(b"\0")
    return digest.hexdigest()


def open_metrics(path: Path, lines: Sequence[str]):
    """The metrics log, for appending: new, or (resuming) the lines saved with the state (what
    a killed run logged after it is dropped: those updates are replayed and logged again)."""
    with atomic_open(path) as f:
        f.write("".join(line + "\n" for line in lines))
    return open(path, "a", encoding="utf-8")
