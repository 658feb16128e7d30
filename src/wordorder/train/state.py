"""The training loop's state: its counters, the best evaluation so far, the training-log window
in progress and the timings, in one object that the loop's steps (:mod:`wordorder.train.trainer`)
update, and that converts to and from the resumable :class:`~wordorder.train.resume.Progress`;
and the dev evaluation those steps run.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from wordorder.decode.batches import translate_batches
from wordorder.models.base import Seq2SeqModel
from wordorder.resources import cpu_seconds
from wordorder.train.options import TrainOptions
from wordorder.train.resume import Feats, Progress
from wordorder.train.update import dev_loss


@dataclass
class Window:
    """The updates since the last training-log line."""

    loss: torch.Tensor | float  # summed as tensors until logged, so CUDA runs asynchronously
    nll: torch.Tensor | float
    tokens: int
    start: float  # time.perf_counter() when it began
    eval_time: float  # TrainingState.eval_time then: evaluations inside the window are not training
    step: int = 0  # the update before its first
    # Its updates after which the summed loss was still finite, counted on the device: a NaN or
    # an infinity stays in the sum, so the first update that broke it is step + finite + 1.
    finite: torch.Tensor | int = 0

    @classmethod
    def resumed(
        cls,
        eval_time: float,
        parts: Sequence[Sequence[float]] = (),
        tokens: int = 0,
        rank: int = 0,
        world: int = 1,
        step: int = 0,
    ) -> Window:
        """A window from saved sums (none: a fresh one): this process' share of them (all if
        it runs alone), as float32 tensors, the type of the updates' losses, so that it adds
        up bitwise alike."""
        mine = parts[rank::world]
        loss, nll = (
            torch.tensor(sum(p[i] for p in mine), dtype=torch.float32) if mine else 0.0
            for i in (0, 1)
        )
        return cls(loss, nll, tokens, time.perf_counter(), eval_time, step)

    def first_non_finite(self, loss_sum: float) -> int | None:
        """The first update of the window whose loss was not finite, given the loss sum the host
        read (None: it is finite)."""
        return None if math.isfinite(loss_sum) else self.step + int(self.finite) + 1


@dataclass
class TrainingState:
    """Where a training run stands after its latest update."""

    start: float  # time.perf_counter() at training time 0 (earlier runs' time included on resume)
    window: Window
    step: int = 0
    epoch: int = 0  # the epoch in progress (1-based; 0 = none started)
    next_batch: int = 0  # index of the next batch of that epoch
    # the saved next batch, until the resumed epoch continues from it
    resume_batch: int | None = None
    train_tokens: int = 0
    best_score: float = float("-inf")  # of the train.best_by criterion, higher is better
    best_bleu: float = float("-inf")  # the dev BLEU of that checkpoint
    best_step: int = 0
    evals_since_best: int = 0  # evaluations since the score gained min_delta on patience_score
    patience_score: float = float("-inf")  # the score patience counts from (see record_eval)
    last_eval: int = -1  # the step of the latest evaluation
    last_bleu: float | None = None  # its dev BLEU (for the progress bar)
    eval_time: float = 0.0  # seconds spent evaluating (excluded from tokens/s)
    stop_reason: str = "max_steps"
    log_lines: list[str] = field(default_factory=list)  # of metrics.jsonl so far
    cpu_before: float = 0.0  # CPU seconds of the earlier attempts (to their last saved state)

    @classmethod
    def begin(cls, saved: Progress | None, rank: int = 0, world: int = 1) -> TrainingState:
        """A new run's state, or a resumed one's from its saved progress."""
        p = saved or Progress()
        return cls(
            start=time.perf_counter() - p.train_seconds,
            window=Window.resumed(0.0, p.window, p.window_tokens, rank, world, p.step),
            step=p.step,
            epoch=p.epoch,
            next_batch=p.next_batch,
            resume_batch=p.next_batch if saved else None,
            train_tokens=p.train_tokens,
            best_score=p.best_score,
            best_bleu=p.best_bleu,
            best_step=p.best_step,
            evals_since_best=p.evals_since_best,
            last_eval=p.last_eval,
            log_lines=list(p.metrics),
            # a state from before min_delta existed: patience counted from the best score
            patience_score=p.patience_score if p.patience_score > float("-inf") else p.best_score,
            cpu_before=p.cpu_seconds,
        )

    def progress(self, window_parts: Sequence[list[float]], kept: str) -> Progress:
        """What a resumed run needs: ``window_parts`` are every process' [loss, nll] window sums,
        ``kept`` the folder of kept checkpoints."""
        return Progress(
            self.step,
            self.epoch,
            self.next_batch,
            self.train_tokens,
            self.best_score,
            self.best_bleu,
            self.best_step,
            self.evals_since_best,
            self.last_eval,
            time.perf_counter() - self.start,
            list(window_parts),
            self.window.tokens,
            kept,
            list(self.log_lines),
            self.patience_score,
            self.cpu_before + cpu_seconds(),
        )

    def record_update(self, loss: torch.Tensor, nll: torch.Tensor, tokens: int) -> None:
        w = self.window
        w.loss = w.loss + loss
        w.nll = w.nll + nll
        # on the device, like the sums (no host sync); read only when the sum is not finite
        w.finite = w.finite + (
            torch.isfinite(w.loss) if isinstance(w.loss, torch.Tensor) else math.isfinite(w.loss)
        )
        self.step += 1
        self.train_tokens += tokens
        self.window.tokens += tokens

    def record_eval(self, score: float, bleu: float, min_delta: float = 0.0) -> bool:
        """Count an evaluation at the current step; True when its score is the best so far.

        Patience counts evaluations without a gain of at least ``min_delta`` over the score it last
        reset on (a curve that still creeps by a hair is a plateau); best.pt follows every gain.
        """
        improved = score > self.best_score
        if improved:
            self.best_score, self.best_bleu, self.best_step = score, bleu, self.step
        if score > self.patience_score + min_delta:
            self.patience_score, self.evals_since_best = score, 0
        else:
            self.evals_since_best += 1
        self.last_eval, self.last_bleu = self.step, bleu
        return improved

    def summary(self) -> dict[str, Any]:
        wall = time.perf_counter() - self.start
        train_time = wall - self.eval_time
        return {
            "best_step": self.best_step,
            "best_dev_bleu": self.best_bleu,
            "steps": self.step,
            "epochs": self.epoch,
            "train_tokens": self.train_tokens,
            "wall_s": round(wall, 2),
            "tokens_per_s": round(self.train_tokens / max(train_time, 1e-9), 1),
            "stop_reason": self.stop_reason,
            # this process' CPU (start-up included) and the earlier attempts' (what a killed
            # attempt did after its last saved state is not counted)
            "cpu_s": round(self.cpu_before + cpu_seconds(), 1),
        }


@dataclass(frozen=True)
class DevScores:
    """One evaluation on dev: BLEU, and with dev targets the NLL per target token."""

    bleu: float
    nll: float | None = None

    @property
    def loss(self) -> float | None:
        return None if self.nll is None else round(self.nll, 5)

    @property
    def ppl(self) -> float | None:
        return None if self.nll is None else round(math.exp(min(self.nll, 700.0)), 4)

    def fields(self, exact: bool = False) -> dict[str, Any]:
        """The metrics-log fields: dev_bleu (rounded unless ``exact``), and with the NLL
        dev_loss and dev_ppl (its exp)."""
        out: dict[str, Any] = {"dev_bleu": self.bleu if exact else round(self.bleu, 4)}
        if self.nll is not None:
            out.update(dev_loss=self.loss, dev_ppl=self.ppl)
        return out


@dataclass(frozen=True)
class DevSet:
    """The dev data of the evaluations (see :func:`train`)."""

    src: list[list[int]]
    score: Callable[[list[list[int]]], float]
    tgt: Sequence[list[int]] | None = None
    feats: Feats | None = None


def eval_graphs(route: str, model: Seq2SeqModel) -> bool:
    """Whether the dev evaluations decode from CUDA graphs (``decode.cuda_graphs``' search):
    where the training's updates replay from graphs (the ``graphed`` route, so the run's device,
    processes and precision allowed them: not fp16, not DDP), for a model that decodes with
    static shapes (Transformers, RNNs without flexible attention). On a GPU the greedy dev
    decoding was ~75 % of a small training's wall time (the long pilot, 2026-11-27), each step
    waiting for the host."""
    return route == "graphed" and bool(getattr(model, "static_decoding", False))


def score_dev(
    model: Seq2SeqModel,
    dev: DevSet,
    opts: TrainOptions,
    device: torch.device,
    amp_dtype: torch.dtype | None,
    graphs: bool = False,
) -> DevScores:
    """Translate dev (beam ``eval_beam``; ``graphs``: the search of static shapes replayed from
    CUDA graphs, :func:`eval_graphs`) and score it; with dev targets also the dev loss (both in
    batches of ``eval_batch_tokens``)."""
    batch_tokens = opts.eval_batch_tokens or opts.batch_tokens
    hyps = translate_batches(
        model,
        dev.src,
        batch_tokens=batch_tokens,
        beam_size=opts.eval_beam,
        device=device,
        progress=False,
        feats=dev.feats,
        cuda_graphs=graphs,
    )
    bleu = float(dev.score(hyps))
    if dev.tgt is None:
        return DevScores(bleu)
    return DevScores(
        bleu,
        dev_loss(model, list(zip(dev.src, dev.tgt)), batch_tokens, device, amp_dtype, dev.feats),
    )
