"""The training loop's steps, for one run of :func:`wordorder.train.loop.train`: the setup of
the device, the optimiser and the (possibly resumed) state, the epochs of token-budget batches,
the updates with their training-log lines, and the stop criteria after each update. What the
run writes besides (evaluations, checkpoints, the resumable state) is in
:mod:`wordorder.train.outputs`.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from wordorder.device import (
    autocast_dtype,
    keep_freed_cpu_memory,
    precision_name,
    resolve_device,
)
from wordorder.model_io.batching import Pair, make_batches
from wordorder.model_io.packed import PackedPairs
from wordorder.models.base import Seq2SeqModel, trainable_parameters
from wordorder.train import finished, kept
from wordorder.train.distributed import barrier, flag_any, init_from_env, shutdown, sum_all, wrap
from wordorder.train.graphs import GraphedRoute
from wordorder.train.options import TrainOptions
from wordorder.train.outputs import TrainerOutputs
from wordorder.train.resume import Feats, StopSignal, load_state, open_metrics
from wordorder.train.routes import choose_route, make_route
from wordorder.train.schedule import make_scheduler
from wordorder.train.state import DevSet, TrainingState, Window
from wordorder.train.update import loss_function, make_optimizer, prepare_optimizer


class Trainer(TrainerOutputs):
    """One run of :func:`~wordorder.train.loop.train`: what stays fixed (model, optimiser, data,
    outputs) and its :class:`TrainingState`; the methods are the loop's steps (those that write
    outputs are :class:`~wordorder.train.outputs.TrainerOutputs`')."""

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
        self.amp_dtype = amp_dtype = autocast_dtype(device, opts.amp, opts.cpu_amp)
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
        # How updates run, decided once; the optimizer is built, loaded and prepared for it
        route = choose_route(opts, device, model, d.world, amp_dtype)
        graphed = route == "graphed"
        if d.main:
            print(f"updates: the {route} route ({precision_name(amp_dtype)})", flush=True)
        self.optimizer = make_optimizer(model, opts, capturable=graphed)
        self.scheduler = make_scheduler(self.optimizer, opts)
        self.options, self.base_meta, self.key = identity
        saved = (
            load_state(
                state_path, model, self.optimizer, self.scheduler, self.scaler, self.key, d.rank
            )
            if state_path
            else None
        )
        prepare_optimizer(self.optimizer, graphed)  # a loaded state carries its own run's
        self.loss_fn = loss_function(opts.label_smoothing, amp_dtype, opts.compile)
        self.ddp = wrap(model, self.loss_fn, d)
        self.route = make_route(
            route,
            model,
            self.optimizer,
            self.scaler,
            self.loss_fn,
            device,
            opts.clip_norm,
            amp_dtype=amp_dtype,
            ddp=self.ddp,
            world=d.world,
            max_graphs=opts.max_graphs,
        )
        # Batches padded by vectorised gathers (collate's Python loops cost the GPU an update's
        # time in host work: model_io/packed.py)
        self.packed = PackedPairs(train_pairs, train_feats)
        # Static shapes for the graphs: widths counted rounded up (see static_shape).
        self.width_steps = opts.width_steps if graphed else 0
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
            self.check_loss()  # of the updates since the last log line
            if self.state.last_eval != self.state.step:
                # always end with an evaluation, so best.pt exists even for short runs
                self.evaluate()
            if opts.average_last and d.main:
                self.average()
            # The device, so an experiment's cost can tell GPU jobs from CPU ones; the precision
            # (float32, or the autocast dtype); the parameter count, so the systems table needs
            # no checkpoint (a run trained on another machine may bring back only its logs and
            # translations).
            summary = {
                **self.state.summary(),
                "device": self.device.type,
                "precision": precision_name(self.amp_dtype),
                "params": trainable_parameters(self.model),
                **({"cuda_graphs": r.shapes} if isinstance(r := self.route, GraphedRoute) else {}),
            }
            self.complete_metrics()
            if self.state_path and d.main:  # kept until Snakemake has the outputs (see finished)
                key = finished.run_key(self.key, self.base_meta)
                finished.finish(self.state_path, self.out_dir, key, summary)
            barrier(d)
            if self.stop_signal is not None and self.stop_signal.received is not None:
                self.stop(finished=True)  # the job is ending: its outputs would be taken as done
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
                self.pairs,
                opts.batch_tokens,
                seed=opts.seed * 100_003 + s.epoch,
                width_steps=self.width_steps,
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

    def update(self, share: Sequence[Sequence[int]]) -> float | torch.Tensor:
        """One update on this process' part of ``share`` (batches of example indices); returns
        the learning rate it used (a device scalar with CUDA graphs: read at log time)."""
        d, opts = self.d, self.opts
        packed = self.packed
        total = sum(packed.target_tokens(idx) for idx in share)
        mine = share[d.rank :: d.world]
        if self.width_steps:  # the graphs' static shapes
            steps, budget = self.width_steps, opts.batch_tokens
            group = [packed.batch(i, packed.static_shape(i, budget, steps)) for i in mine]
        else:
            group = [packed.batch(idx) for idx in mine]
        loss, nll = self.route.update(group, total)
        lr = self.optimizer.param_groups[0]["lr"]
        if isinstance(lr, torch.Tensor):  # the scheduler writes the next rate into it
            lr = lr.clone()
        self.scheduler.step()
        self.state.record_update(loss, nll, total)
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
                self.stop()
        return stop

    def log_window(self, lr: float | torch.Tensor) -> None:
        """A training-log line over the window, which then starts anew."""
        s, w = self.state, self.state.window
        loss_sum, nll_sum = sum_all([float(w.loss), float(w.nll)], self.d)  # waits for the device
        self.check_loss(loss_sum)
        now = time.perf_counter()
        seconds = now - w.start - (s.eval_time - w.eval_time)
        tok_s = w.tokens / max(seconds, 1e-9)
        self.log(
            {
                "step": s.step,
                "epoch": s.epoch,
                "train_loss": round(loss_sum / w.tokens, 5),
                "train_nll": round(nll_sum / w.tokens, 5),
                "lr": float(lr),
                "tokens_per_s": round(tok_s, 1),
                "elapsed_s": round(now - s.start, 2),
            }
        )
        self.bar.set_postfix(
            loss=f"{loss_sum / w.tokens:.3f}",
            tok_s=f"{tok_s:.0f}",
            bleu="-" if s.last_bleu is None else f"{s.last_bleu:.2f}",
        )
        s.window = Window.resumed(s.eval_time, step=s.step)
