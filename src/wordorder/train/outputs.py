"""What a :class:`~wordorder.train.trainer.Trainer` writes besides its updates: the
metrics.jsonl lines, the dev evaluations with their checkpoints (best.pt, last.pt and, with
``average_last``, history/), the averaged best.pt, the resumable state, and the withdrawal of
the declared outputs when a signal interrupts the run.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, NoReturn, TextIO

import torch
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LambdaLR
from tqdm import tqdm

from wordorder.errors import WordorderError
from wordorder.model_io.checkpoint import average_checkpoints, keep_recent, save_checkpoint, step_of
from wordorder.models.base import Seq2SeqModel
from wordorder.train import kept
from wordorder.train.distributed import Dist, flag_any, gather, sum_all
from wordorder.train.options import TrainOptions
from wordorder.train.resume import (
    StopSignal,
    TrainingInterrupted,
    open_metrics,
    rng_state,
    save_state,
)
from wordorder.train.routes import Route
from wordorder.train.state import DevSet, TrainingState, eval_graphs, score_dev


class TrainerOutputs:
    """The output steps of a :class:`~wordorder.train.trainer.Trainer`, which sets the
    attributes declared here (in its constructor, and ``metrics`` and ``bar`` when it runs)."""

    model: Seq2SeqModel
    dev: DevSet
    opts: TrainOptions
    out_dir: Path
    state_path: Path | None
    d: Dist
    device: torch.device
    amp_dtype: torch.dtype | None
    scaler: torch.amp.GradScaler
    optimizer: Optimizer
    scheduler: LambdaLR
    route: Route  # how its updates run (wordorder.train.routes)
    options: dict[str, Any]  # the model's options
    base_meta: dict[str, Any]  # every checkpoint's metadata
    key: str  # the resume key
    state: TrainingState
    metrics: TextIO  # metrics.jsonl on rank 0, os.devnull on the others
    bar: tqdm
    stop_signal: StopSignal | None

    def log(self, record: dict[str, Any]) -> None:
        self.state.log_lines.append(json.dumps(record))
        self.metrics.write(self.state.log_lines[-1] + "\n")
        self.metrics.flush()

    def withdraw_outputs(self) -> None:
        """An interrupted training leaves no declared output (best.pt, metrics.jsonl): the state
        just saved holds both (its kept checkpoints and log lines). Snakemake deletes them itself
        when the job fails, but on Ctrl-C it may do so before this process, finishing the
        evaluation it was in, writes best.pt; left behind, that unfinished model would count as
        the job's output in the next run (which reruns a job only for a missing requested file)."""
        for name in (kept.BEST, "metrics.jsonl"):
            (self.out_dir / name).unlink(missing_ok=True)

    def stop(self, finished: bool = False) -> NoReturn:
        """Withdraw the outputs (rank 0) and end the run on the signal received; ``finished``:
        after training ended (its outputs are kept with the record, and a rerun restores them)."""
        if self.d.main:
            self.withdraw_outputs()
        number = self.stop_signal.received if self.stop_signal else None
        s = self.state
        when = "after training finished" if finished else f"after update {s.step}"
        saved = "its outputs are kept" if finished else "the training state is saved"
        raise TrainingInterrupted(
            f"stopped by signal {number or 15} {when}; {saved}",
            path=self.state_path,
            hint="run the same command (or Snakemake job) again to continue from it",
        )

    def check_loss(self, loss_sum: float | None = None) -> None:
        """Stop at a training loss that is not finite (NaN weights would train on, rc 0, and
        decode to nothing): one error naming the first such update and the likely option. Called
        where the host reads the loss anyway (log lines, evaluations, saved states, the end),
        with the window's loss summed over the processes (read here when not given). Not with
        fp16, whose loss scaling skips an overflowing update on purpose."""
        s, opts = self.state, self.opts
        if self.scaler.is_enabled():
            return
        if loss_sum is None:
            (loss_sum,) = sum_all([float(s.window.loss)], self.d)
        bad = s.window.first_non_finite(loss_sum)
        if bad is None:
            return
        if self.d.main:
            self.withdraw_outputs()
        raise WordorderError(
            f"the training loss is not finite ({loss_sum}) from update {bad} on: the model's "
            "weights are lost, so training stops",
            hint=f"the likely cause is train.lr ({opts.lr:g}, schedule {opts.schedule}): lower it "
            f"or warm up longer (warmup: {opts.warmup})"
            + (f"; clip_norm ({opts.clip_norm:g}) bounds each step" if opts.clip_norm else "")
            + ". A saved state is from before it; delete it to start anew",
        )

    def complete_metrics(self) -> None:
        """Write metrics.jsonl anew from the lines logged (rank 0): the finished run's log is
        whole even if the file was deleted while the run appended to it."""
        if self.d.main:
            self.metrics.close()
            self.metrics = open_metrics(self.out_dir / "metrics.jsonl", self.state.log_lines)

    def checkpoint(self) -> None:
        """Save the resumable state: every process' generators and log-window sums, by rank 0."""
        s, d = self.state, self.d
        assert self.state_path is not None, "checkpoint() is only called with a state path"
        rngs, parts = zip(*gather((rng_state(), [float(s.window.loss), float(s.window.nll)]), d))
        self.check_loss(sum(p[0] for p in parts))  # a state of NaN weights is no state to resume
        if d.main:
            # complete before the state names it
            folder = kept.snapshot(self.state_path, self.out_dir, s.step)
            save_state(
                self.state_path,
                self.model,
                self.optimizer,
                self.scheduler,
                self.scaler,
                s.progress(parts, folder),
                self.key,
                list(rngs),
            )
            kept.prune(self.state_path, folder)

    def evaluate(self) -> str | None:
        """Decode and score dev, save checkpoints (rank 0; the others wait); on every process, the
        stop this evaluation calls for: "patience" (exhausted), "target_bleu" (reached) or None."""
        self.check_loss()  # every process, before rank 0 decodes with the weights
        if not self.d.main:
            self.state.last_eval = self.state.step
            patience, target = flag_any([False, False], self.d)
        else:
            patience, target = flag_any(list(self.evaluate_main()), self.d)
        return "patience" if patience else "target_bleu" if target else None

    def evaluate_main(self) -> tuple[bool, bool]:
        """(patience exhausted, target BLEU reached)."""
        s, opts, out = self.state, self.opts, self.out_dir
        _sync(self.device)
        t0 = time.perf_counter()
        graphs = eval_graphs(self.route.name, self.model)
        scores = score_dev(self.model, self.dev, opts, self.device, self.amp_dtype, graphs)
        if opts.best_by == "bleu":
            score = scores.bleu
        else:
            assert scores.nll is not None  # train() refuses best_by: perplexity without dev targets
            score = -scores.nll
        improved = s.record_eval(score, scores.bleu, opts.min_delta)
        self.log({"step": s.step, "epoch": s.epoch, **scores.fields(), "best": improved})
        meta = {
            **self.base_meta,
            "step": s.step,
            "epoch": s.epoch,
            "dev_bleu": scores.bleu,
            "dev_loss": scores.loss,
            "dev_ppl": scores.ppl,
        }
        if improved:
            live = out / "best.pt" if self.state_path is None else kept.live_best(self.state_path)
            save_checkpoint(live, self.model, self.options, {**meta, "best": True})
            if self.state_path is not None:
                kept.publish_best(self.state_path, out)
        save_checkpoint(out / "last.pt", self.model, self.options, meta)
        if opts.average_last:
            keep_recent(out / "history", s.step, self.model, self.options, meta, opts.average_last)
        s.eval_time += time.perf_counter() - t0
        self.bar.set_postfix(bleu=f"{scores.bleu:.2f}")
        return (
            opts.patience is not None and s.evals_since_best >= opts.patience,
            opts.target_bleu is not None and scores.bleu >= opts.target_bleu,
        )

    def average(self) -> None:
        """Replace best.pt by the average of the last ``average_last`` evaluations' weights
        (the single best is kept as best_single.pt)."""
        s, out, n = self.state, self.out_dir, self.opts.average_last
        _sync(self.device)
        history: list[Path] = sorted((out / "history").glob("step*.pt"), key=step_of)
        averaged = average_checkpoints(history)
        self.model.load_state_dict(averaged)
        graphs = eval_graphs(self.route.name, self.model)
        scores = score_dev(self.model, self.dev, self.opts, self.device, self.amp_dtype, graphs)
        self.log({"step": s.step, "averaged_last": n, **scores.fields()})
        os.replace(out / "best.pt", out / "best_single.pt")
        save_checkpoint(
            out / "best.pt",
            self.model,
            self.options,
            {**self.base_meta, "step": s.step, **scores.fields(exact=True), "averaged_last": n},
        )


def _sync(device: torch.device) -> None:
    """Wait for queued CUDA work, so that timings are attributed to the right phase."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
