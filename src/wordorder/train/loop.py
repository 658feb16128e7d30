"""The training loop: token-budget batches, label-smoothed cross-entropy, Adam with inverse
square-root warmup, gradient accumulation, periodic dev evaluation and checkpoints.

Files written to ``out_dir``: ``best.pt`` (highest dev BLEU, or lowest dev perplexity with
``best_by: perplexity``), ``last.pt`` (latest evaluation) and ``metrics.jsonl`` (one JSON
object per line: training lines every ``log_every`` updates, evaluation lines every
``eval_every`` updates and at the end). With a ``state_path``, training is resumable
(:mod:`wordorder.train.resume`): the full state is saved every ``checkpoint_every`` updates
and on SIGTERM, and a rerun continues from it, with best.pt and metrics.jsonl as they were
then (:mod:`wordorder.train.kept`), even if Snakemake deleted them. A finished run replaces the
state by a record of its outputs, which a rerun of the same run restores instead of training
(:mod:`wordorder.train.finished`).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from wordorder.device import keep_freed_cpu_memory, resolve_device
from wordorder.errors import WordorderError
from wordorder.model_io.batching import Pair, collate, make_batches
from wordorder.model_io.checkpoint import average_checkpoints, keep_recent, save_checkpoint, step_of
from wordorder.models.base import Seq2SeqModel
from wordorder.train import exclusive, finished, kept
from wordorder.train.distributed import (
    barrier,
    env_rank,
    flag_any,
    gather,
    init_from_env,
    shutdown,
    sum_all,
    wrap,
)
from wordorder.train.options import TrainOptions
from wordorder.train.resume import (
    StopSignal,
    TrainingInterrupted,
    data_fingerprint,
    fingerprint,
    load_state,
    open_metrics,
    rng_state,
    save_state,
)
from wordorder.train.schedule import inverse_sqrt_scheduler
from wordorder.train.state import DevSet, TrainingState, Window, score_dev
from wordorder.train.update import batch_loss, dev_loss, make_optimizer, update

__all__ = ["TrainOptions", "batch_loss", "dev_loss", "make_optimizer", "train", "update"]

Feats = Mapping[str, Sequence[Sequence[int]]]


def train(
    model: Seq2SeqModel,
    train_pairs: Sequence[Pair],
    dev_src: list[list[int]],
    dev_score: Callable[[list[list[int]]], float],
    opts: TrainOptions,
    out_dir: Path,
    extra_checkpoint_meta: Mapping[str, Any] | None = None,
    *,
    dev_tgt: Sequence[list[int]] | None = None,
    train_feats: Feats | None = None,
    dev_feats: Feats | None = None,
    state_path: Path | None = None,
) -> dict[str, Any]:
    """Train ``model`` in place; returns a summary dict.

    Args:
        train_pairs: (source ids, target ids) without specials.
        dev_src: dev source id lists, decoded at each evaluation (``eval_beam``).
        dev_score: hypotheses (id lists, in dev order) → dev BLEU; higher is better.
        out_dir: receives best.pt, last.pt, metrics.jsonl.
        extra_checkpoint_meta: plain values stored in every checkpoint's meta.
        dev_tgt: dev target ids aligned with ``dev_src``; when given, evaluations also log
            ``dev_loss`` (NLL per target token) and ``dev_ppl`` (its exp); needed by
            ``best_by: perplexity``.
        train_feats, dev_feats: extra source inputs (name → id lists aligned with the
            sources, see :mod:`wordorder.model_io.features`) for models that need them.
        state_path: where the resumable state lives (see :mod:`wordorder.train.resume`);
            None = not resumable. When training ends normally it is replaced by a record of the
            finished run, and a rerun of the same run restores its outputs without training.
    Returns:
        best_step, best_dev_bleu (of that checkpoint), steps, epochs, train_tokens, wall_s,
        tokens_per_s (target tokens per second of training, evaluation time excluded),
        stop_reason.
    """
    if not train_pairs:
        raise WordorderError("no training examples")
    if not dev_src:
        raise WordorderError("no dev sentences to evaluate on")
    if dev_tgt is not None and len(dev_tgt) != len(dev_src):
        raise WordorderError(f"{len(dev_src)} dev sources but {len(dev_tgt)} dev targets")
    if opts.best_by == "perplexity" and dev_tgt is None:
        raise WordorderError("train option best_by: perplexity needs the dev targets")
    dev = DevSet(dev_src, dev_score, dev_tgt, dev_feats)
    options = (
        model.options.to_dict()
        if hasattr(model.options, "to_dict")
        else dataclasses.asdict(model.options)
    )
    meta = {**dict(extra_checkpoint_meta or {}), "train_options": dataclasses.asdict(opts)}
    key = fingerprint(
        opts.state_key(), options, data_fingerprint(train_pairs, train_feats), len(dev_src)
    )
    main = env_rank() == 0
    # Rank 0 holds the state for the whole run; the other ranks wait for it when they join.
    with exclusive.hold(Path(state_path)) if state_path is not None and main else nullcontext():
        # finished before?
        if state_path is not None and finished.marker_of(Path(state_path)).is_file():
            done = finished.restore(
                Path(state_path),
                Path(out_dir),
                finished.run_key(key, meta, train_pairs, train_feats, dev),
                main,
            )
            if done is not None:
                return done
        trainer = _Trainer(
            model,
            train_pairs,
            train_feats,
            dev,
            opts,
            Path(out_dir),
            (options, meta, key),
            state_path,
        )
        return trainer.run()


class _Trainer:
    """One run of :func:`train`: what stays fixed (model, optimiser, data, outputs) and its
    :class:`TrainingState`; the methods are the loop's steps."""

    def __init__(
        self,
        model: Seq2SeqModel,
        train_pairs: Sequence[Pair],
        train_feats: Feats | None,
        dev: DevSet,
        opts: TrainOptions,
        out_dir: Path,
        identity: tuple[dict[str, Any], dict[str, Any], str],
        state_path: Path | None,
    ) -> None:
        """``identity``: the model's options, the checkpoints' metadata and the resume key."""
        self.model, self.pairs, self.feats, self.dev, self.opts = (
            model,
            train_pairs,
            train_feats,
            dev,
            opts,
        )
        self.out_dir, self.state_path = out_dir, state_path
        out_dir.mkdir(parents=True, exist_ok=True)
        if opts.threads:
            torch.set_num_threads(opts.threads)
        self.d = d = init_from_env(resolve_device(opts.device))
        self.device = device = d.device
        # same weights everywhere (DDP broadcasts rank 0's), own dropout
        torch.manual_seed(opts.seed + d.rank)
        if device.type == "cpu":
            keep_freed_cpu_memory()
        model.to(device).train()
        use_amp = opts.amp and device.type == "cuda"
        self.amp_dtype = amp_dtype = (
            (torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16)
            if use_amp
            else None
        )
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
        self.optimizer = make_optimizer(model, opts)
        self.scheduler = inverse_sqrt_scheduler(self.optimizer, opts.warmup)
        self.options, self.base_meta, self.key = identity
        saved = (
            load_state(
                state_path, model, self.optimizer, self.scheduler, self.scaler, self.key, d.rank
            )
            if state_path
            else None
        )
        self.ddp = wrap(model, lambda m, b: batch_loss(m, b, opts.label_smoothing, amp_dtype), d)
        self.state = s = TrainingState.begin(saved, d.rank, d.world)
        if saved and state_path and d.main:  # saved implies state_path; said for the type checker
            kept.restore(state_path, saved.kept, out_dir)
            print(
                (
                    f"resuming from {state_path} at update {s.step} (epoch "
                    f"{s.epoch}, batch {s.next_batch})"
                ),
                flush=True,
            )

    def run(self) -> dict[str, Any]:
        opts, d = self.opts, self.d
        self.metrics = (
            open_metrics(self.out_dir / "metrics.jsonl", self.state.log_lines)
            if d.main
            else open(os.devnull, "w")
        )
        self.stop_signal = StopSignal().install() if self.state_path else None
        # Under a wall-clock budget max_steps is rarely reached: an ETA against it would mislead.
        budget = f" ({opts.max_minutes:g} min budget)" if opts.max_minutes else ""
        self.bar = tqdm(
            total=None if opts.max_minutes else opts.max_steps,
            desc=f"train{budget}",
            unit="step",
            initial=self.state.step,
            dynamic_ncols=True,
            disable=not d.main,
        )
        try:
            self.epochs()
            if self.state.last_eval != self.state.step:
                # always end with an evaluation, so best.pt exists even for short runs
                self.evaluate()
            if opts.average_last and d.main:
                self.average()
            summary = self.state.summary()
            if self.state_path and d.main:  # kept until Snakemake has the outputs (see finished)
                key = finished.run_key(self.key, self.base_meta, self.pairs, self.feats, self.dev)
                finished.finish(self.state_path, self.out_dir, key, summary)
            barrier(d)
        finally:
            self.bar.close()
            self.metrics.close()
            if self.stop_signal is not None:
                self.stop_signal.restore()
            if self.ddp is not None:
                # Free DDP's reducer (and the collective work it holds) while the process group and
                # the interpreter are alive: freed at exit instead, gloo can abort the process.
                self.ddp = None
                gc.collect()
            shutdown(d)
        return summary

    def epochs(self) -> None:
        """Update until a stop criterion holds."""
        s, opts = self.state, self.opts
        while True:
            if s.resume_batch is None:
                if opts.max_epochs is not None and s.epoch >= opts.max_epochs:
                    s.stop_reason = "max_epochs"
                    return
                s.epoch, first = s.epoch + 1, 0
            else:  # the epoch the saved state was in, from its next batch
                first, s.resume_batch = s.resume_batch, None
            batches = make_batches(
                self.pairs, opts.batch_tokens, seed=opts.seed * 100_003 + s.epoch
            )
            for g in range(first, len(batches), opts.accum_steps):
                share = batches[g : g + opts.accum_steps]
                s.next_batch = g + opts.accum_steps
                if len(share) < self.d.world:
                    continue  # an epoch's last, short update cannot give every process a batch
                lr = self.update(share)
                if s.step % opts.log_every == 0:
                    self.log_window(lr)
                if self.after_update():
                    return

    def update(self, share: Sequence[Sequence[int]]) -> float:
        """One update on this process' part of ``share`` (batches of example indices); returns
        the learning rate it used."""
        d = self.d
        total = sum(len(self.pairs[i][1]) + 1 for idx in share for i in idx)  # + EOS each
        group = [collate(self.pairs, idx, self.feats) for idx in share[d.rank :: d.world]]
        loss, nll, n_tokens = update(
            self.model,
            self.optimizer,
            self.scaler,
            group,
            self.opts,
            self.device,
            self.amp_dtype,
            self.ddp,
            d.world,
            total,
        )
        lr = self.optimizer.param_groups[0]["lr"]
        self.scheduler.step()
        self.state.record_update(loss, nll, n_tokens)
        self.bar.update(1)
        return lr

    def after_update(self) -> bool:
        """Evaluate and save the state when due; True when training stops here."""
        s, opts = self.state, self.opts
        # Decided on rank 0's clock and signals and shared, so all processes stop together.
        out_of_time, signalled = flag_any(
            [
                opts.max_minutes is not None
                and time.perf_counter() - s.start >= 60 * opts.max_minutes,
                self.stop_signal is not None and self.stop_signal.received is not None,
            ],
            self.d,
        )
        stop = True
        if s.step % opts.eval_every == 0 and (reason := self.evaluate()):
            s.stop_reason = reason
        elif s.step >= opts.max_steps:
            s.stop_reason = "max_steps"
        elif out_of_time:
            s.stop_reason = "max_minutes"
        else:
            stop = False
        # After the evaluation, so that a resumed run does not skip it.
        if self.state_path and (
            (opts.checkpoint_every and s.step % opts.checkpoint_every == 0) or signalled
        ):
            self.checkpoint()
            if signalled:
                if self.d.main:
                    self.withdraw_outputs()
                number = self.stop_signal.received if self.stop_signal else None
                raise TrainingInterrupted(
                    (
                        f"stopped by signal {number or 15} after update {s.step}; "
                        "the training state is saved"
                    ),
                    path=self.state_path,
                    hint="run the same command (or Snakemake job) again to continue from it",
                )
        return stop

    def withdraw_outputs(self) -> None:
        """An interrupted training leaves no declared output (best.pt, metrics.jsonl): the state
        just saved holds both (its kept checkpoints and log lines). Snakemake deletes them itself
        when the job fails, but on Ctrl-C it may do so before this process, finishing the
        evaluation it was in, writes best.pt; left behind, that unfinished model would count as
        the job's output in the next run (which reruns a job only for a missing requested file)."""
        for name in (kept.BEST, "metrics.jsonl"):
            (self.out_dir / name).unlink(missing_ok=True)

    def log(self, record: dict[str, Any]) -> None:
        self.state.log_lines.append(json.dumps(record))
        self.metrics.write(self.state.log_lines[-1] + "\n")
        self.metrics.flush()

    def log_window(self, lr: float) -> None:
        """A training-log line over the window, which then starts anew."""
        s, w = self.state, self.state.window
        loss_sum, nll_sum = sum_all([float(w.loss), float(w.nll)], self.d)  # waits for the device
        now = time.perf_counter()
        seconds = now - w.start - (s.eval_time - w.eval_time)
        tok_s = w.tokens / max(seconds, 1e-9)
        self.log(
            {
                "step": s.step,
                "epoch": s.epoch,
                "train_loss": round(loss_sum / w.tokens, 5),
                "train_nll": round(nll_sum / w.tokens, 5),
                "lr": lr,
                "tokens_per_s": round(tok_s, 1),
                "elapsed_s": round(now - s.start, 2),
            }
        )
        self.bar.set_postfix(
            loss=f"{loss_sum / w.tokens:.3f}",
            tok_s=f"{tok_s:.0f}",
            bleu="-" if s.last_bleu is None else f"{s.last_bleu:.2f}",
        )
        s.window = Window.resumed(s.eval_time)

    def checkpoint(self) -> None:
        """Save the resumable state: every process' generators and log-window sums, by rank 0."""
        s, d = self.state, self.d
        assert self.state_path is not None, "checkpoint() is only called with a state path"
        rngs, parts = zip(*gather((rng_state(), [float(s.window.loss), float(s.window.nll)]), d))
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
        scores = score_dev(self.model, self.dev, opts, self.device, self.amp_dtype)
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
            save_checkpoint(out / "best.pt", self.model, self.options, {**meta, "best": True})
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
        scores = score_dev(self.model, self.dev, self.opts, self.device, self.amp_dtype)
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
