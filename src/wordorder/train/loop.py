"""The training loop: token-budget batches, label-smoothed cross-entropy, Adam with inverse
square-root warmup, gradient accumulation, periodic dev evaluation and checkpoints.

Files written to ``out_dir``: ``best.pt`` (highest dev BLEU, or lowest dev perplexity with
``best_by: perplexity``), ``last.pt`` (latest evaluation) and ``metrics.jsonl`` (one JSON
object per line: training lines every ``log_every`` updates, evaluation lines every
``eval_every`` updates and at the end). With a ``state_path``, training is resumable
(:mod:`wordorder.train.resume`): the full state is saved every ``checkpoint_every`` updates
and on SIGTERM, and a rerun continues from it, with best.pt and metrics.jsonl as they were
then (:mod:`wordorder.train.kept`), even if Snakemake deleted them.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from wordorder.decode.beam import translate_batches
from wordorder.device import keep_freed_cpu_memory, resolve_device
from wordorder.errors import WordorderError
from wordorder.model_io.batching import Pair, collate, make_batches
from wordorder.model_io.checkpoint import average_checkpoints, keep_recent, save_checkpoint, step_of
from wordorder.models.base import Seq2SeqModel
from wordorder.train import kept
from wordorder.train.distributed import barrier, flag_any, gather, init_from_env, shutdown, sum_all, wrap
from wordorder.train.options import TrainOptions
from wordorder.train.resume import (
    Progress, StopSignal, TrainingInterrupted, data_fingerprint, fingerprint, load_state, open_metrics, rng_state,
    save_state,
)
from wordorder.train.schedule import inverse_sqrt_scheduler
from wordorder.train.update import batch_loss, dev_loss, make_optimizer, update

__all__ = ["TrainOptions", "batch_loss", "dev_loss", "make_optimizer", "train", "update"]

Feats = Mapping[str, Sequence[Sequence[int]]]


def train(model: Seq2SeqModel, train_pairs: Sequence[Pair], dev_src: list[list[int]],
          dev_score: Callable[[list[list[int]]], float], opts: TrainOptions, out_dir: Path,
          extra_checkpoint_meta: Mapping[str, Any] | None = None, *,
          dev_tgt: Sequence[list[int]] | None = None, train_feats: Feats | None = None,
          dev_feats: Feats | None = None, state_path: Path | None = None) -> dict[str, Any]:
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
            sources, see :mod:`wordorder.train.features`) for models that need them.
        state_path: where the resumable state lives (see :mod:`wordorder.train.resume`);
            None = not resumable. It is deleted when training ends normally.
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
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if opts.threads:
        torch.set_num_threads(opts.threads)
    d = init_from_env(resolve_device(opts.device))
    device = d.device
    torch.manual_seed(opts.seed + d.rank)  # same weights everywhere (DDP broadcasts rank 0's), own dropout
    if device.type == "cpu":
        keep_freed_cpu_memory()
    model.to(device).train()
    use_amp = opts.amp and device.type == "cuda"
    amp_dtype = (torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16) if use_amp else None
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
    optimizer = make_optimizer(model, opts)
    scheduler = inverse_sqrt_scheduler(optimizer, opts.warmup)
    dev_pairs = list(zip(dev_src, dev_tgt)) if dev_tgt is not None else None
    options = model.options.to_dict() if hasattr(model.options, "to_dict") else dataclasses.asdict(model.options)
    base_meta = {**dict(extra_checkpoint_meta or {}), "train_options": dataclasses.asdict(opts)}

    key = fingerprint(opts.state_key(), options, data_fingerprint(train_pairs, train_feats), len(dev_src))
    saved = load_state(state_path, model, optimizer, scheduler, scaler, key, d.rank) if state_path else None
    ddp = wrap(model, lambda m, b: batch_loss(m, b, opts.label_smoothing, amp_dtype), d)
    progress = saved or Progress()
    step, epoch, train_tokens = progress.step, progress.epoch, progress.train_tokens
    best_score, best_bleu, best_step = progress.best_score, progress.best_bleu, progress.best_step
    evals_since_best, last_eval = progress.evals_since_best, progress.last_eval
    resume_batch = progress.next_batch if saved else None
    next_batch = progress.next_batch
    start = time.perf_counter() - progress.train_seconds
    eval_time = 0.0  # seconds spent evaluating (excluded from tokens/s)

    def new_window(parts: Sequence[Sequence[float]] = (), tokens: int = 0) -> dict[str, Any]:
        # A resumed window: this process' share of the saved sums (all of them if it runs alone),
        # as float32 tensors, the type of the updates' losses, so that it adds up bitwise alike.
        mine = parts[d.rank::d.world]
        loss, nll = (torch.tensor(sum(p[i] for p in mine), dtype=torch.float32) if mine else 0.0 for i in (0, 1))
        return {"loss": loss, "nll": nll, "tokens": tokens, "start": time.perf_counter(), "eval_time": eval_time}

    window = new_window(progress.window, progress.window_tokens)
    last_bleu: float | None = None
    stop_reason = "max_steps"
    log_lines = list(progress.metrics)
    if saved and d.main:
        kept.restore(state_path, saved.kept, out_dir)
        print(f"resuming from {state_path} at update {step} (epoch {epoch}, batch {next_batch})", flush=True)
    metrics = open_metrics(out_dir / "metrics.jsonl", log_lines) if d.main else open(os.devnull, "w")
    stop_signal = StopSignal().install() if state_path else None

    def checkpoint() -> None:
        # Every process' generators and log-window sums, saved by rank 0.
        rngs, parts = zip(*gather((rng_state(), [float(window["loss"]), float(window["nll"])]), d))
        if d.main:
            folder = kept.snapshot(state_path, out_dir, step)  # complete before the state names it
            save_state(state_path, model, optimizer, scheduler, scaler,
                       Progress(step, epoch, next_batch, train_tokens, best_score, best_bleu, best_step,
                                evals_since_best, last_eval, time.perf_counter() - start, list(parts),
                                window["tokens"], folder, list(log_lines)), key, list(rngs))
            kept.prune(state_path, folder)
    # Under a wall-clock budget max_steps is rarely reached: an ETA against it would mislead.
    budget = f" ({opts.max_minutes:g} min budget)" if opts.max_minutes else ""
    bar = tqdm(total=None if opts.max_minutes else opts.max_steps, desc=f"train{budget}", unit="step",
               dynamic_ncols=True, disable=not d.main)

    def log(record: dict[str, Any]) -> None:
        log_lines.append(json.dumps(record))
        metrics.write(log_lines[-1] + "\n")
        metrics.flush()

    def dev_scores() -> dict[str, Any]:
        """Dev BLEU, and with dev targets the loss and perplexity (unrounded: ``dev_nll``)."""
        hyps = translate_batches(model, dev_src, batch_tokens=opts.batch_tokens, beam_size=opts.eval_beam,
                                 device=device, progress=False, feats=dev_feats)
        out: dict[str, Any] = {"dev_bleu": float(dev_score(hyps))}
        if dev_pairs is not None:
            nll = dev_loss(model, dev_pairs, opts.batch_tokens, device, amp_dtype, dev_feats)
            out.update(dev_nll=nll, dev_loss=round(nll, 5), dev_ppl=round(math.exp(min(nll, 700.0)), 4))
        return out

    def evaluate() -> bool:
        """Decode and score dev, save checkpoints (rank 0; the others wait); True on every
        process when patience is exhausted."""
        nonlocal last_eval
        if not d.main:
            last_eval = step
            return flag_any([False], d)[0]
        return flag_any([evaluate_main()], d)[0]

    def evaluate_main() -> bool:
        nonlocal best_score, best_bleu, best_step, evals_since_best, last_eval, last_bleu, eval_time
        _sync(device)
        t0 = time.perf_counter()
        scores = dev_scores()
        bleu, nll = scores["dev_bleu"], scores.pop("dev_nll", None)
        score = bleu if opts.best_by == "bleu" else -nll
        improved = score > best_score
        log({"step": step, "epoch": epoch, **scores, "dev_bleu": round(bleu, 4), "best": improved})
        meta = {**base_meta, "step": step, "epoch": epoch, "dev_bleu": bleu, "dev_loss": scores.get("dev_loss"),
                "dev_ppl": scores.get("dev_ppl")}
        if improved:
            best_score, best_bleu, best_step, evals_since_best = score, bleu, step, 0
            save_checkpoint(out_dir / "best.pt", model, options, {**meta, "best": True})
        else:
            evals_since_best += 1
        save_checkpoint(out_dir / "last.pt", model, options, meta)
        if opts.average_last:
            keep_recent(out_dir / "history", step, model, options, meta, opts.average_last)
        last_eval, last_bleu = step, bleu
        eval_time += time.perf_counter() - t0
        bar.set_postfix(bleu=f"{bleu:.2f}")
        return opts.patience is not None and evals_since_best >= opts.patience

    try:
        stop = False
        while not stop:
            if resume_batch is None:
                if opts.max_epochs is not None and epoch >= opts.max_epochs:
                    stop_reason = "max_epochs"
                    break
                epoch, first = epoch + 1, 0
            else:  # the epoch the saved state was in, from its next batch
                first, resume_batch = resume_batch, None
            batches = make_batches(train_pairs, opts.batch_tokens, seed=opts.seed * 100_003 + epoch)
            for g in range(first, len(batches), opts.accum_steps):
                share = batches[g: g + opts.accum_steps]
                next_batch = g + opts.accum_steps
                if len(share) < d.world:
                    continue  # an epoch's last, short update cannot give every process a batch
                total = sum(len(train_pairs[i][1]) + 1 for idx in share for i in idx)  # + EOS each
                group = [collate(train_pairs, idx, train_feats) for idx in share[d.rank::d.world]]
                loss, nll, n_tokens = update(model, optimizer, scaler, group, opts, device, amp_dtype, ddp, d.world,
                                             total)
                # Kept as tensors until logged, so CUDA runs asynchronously between logs.
                window["loss"] = window["loss"] + loss
                window["nll"] = window["nll"] + nll
                lr = optimizer.param_groups[0]["lr"]
                scheduler.step()
                step += 1
                train_tokens += n_tokens
                window["tokens"] += n_tokens
                bar.update(1)
                if step % opts.log_every == 0:
                    loss_sum, nll_sum = sum_all([float(window["loss"]), float(window["nll"])], d)  # waits for the device
                    now = time.perf_counter()
                    seconds = now - window["start"] - (eval_time - window["eval_time"])
                    tok_s = window["tokens"] / max(seconds, 1e-9)
                    log({"step": step, "epoch": epoch, "train_loss": round(loss_sum / window["tokens"], 5),
                         "train_nll": round(nll_sum / window["tokens"], 5), "lr": lr,
                         "tokens_per_s": round(tok_s, 1), "elapsed_s": round(now - start, 2)})
                    bar.set_postfix(loss=f"{loss_sum / window['tokens']:.3f}", tok_s=f"{tok_s:.0f}",
                                    bleu="-" if last_bleu is None else f"{last_bleu:.2f}")
                    window = new_window()
                # Decided on rank 0's clock and signals and shared, so all processes stop together.
                out_of_time, signalled = flag_any(
                    [opts.max_minutes is not None and time.perf_counter() - start >= 60 * opts.max_minutes,
                     stop_signal is not None and stop_signal.received is not None], d)
                if step % opts.eval_every == 0 and evaluate():
                    stop, stop_reason = True, "patience"
                elif step >= opts.max_steps:
                    stop, stop_reason = True, "max_steps"
                elif out_of_time:
                    stop, stop_reason = True, "max_minutes"
                # After the evaluation, so that a resumed run does not skip it.
                if state_path and ((opts.checkpoint_every and step % opts.checkpoint_every == 0) or signalled):
                    checkpoint()
                    if signalled:
                        raise TrainingInterrupted(
                            f"stopped by signal {stop_signal.received or 15} after update {step}; the training "
                            "state is saved", path=state_path, hint="run the same command (or Snakemake job) "
                            "again to continue from it")
                if stop:
                    break
        if last_eval != step:
            evaluate()  # always end with an evaluation, so best.pt exists even for short runs
        if opts.average_last and d.main:
            _sync(device)
            averaged = average_checkpoints(sorted((out_dir / "history").glob("step*.pt"), key=step_of))
            model.load_state_dict(averaged)
            scores = dev_scores()
            scores.pop("dev_nll", None)
            log({"step": step, "averaged_last": opts.average_last, **scores, "dev_bleu": round(scores["dev_bleu"], 4)})
            os.replace(out_dir / "best.pt", out_dir / "best_single.pt")
            save_checkpoint(out_dir / "best.pt", model, options, {**base_meta, "step": step, **scores,
                                                                  "averaged_last": opts.average_last})
        if state_path and d.main:
            state_path.unlink(missing_ok=True)  # done: a forced rerun starts from scratch
            kept.clear(state_path)
        barrier(d)
    finally:
        bar.close()
        metrics.close()
        if stop_signal is not None:
            stop_signal.restore()
        if ddp is not None:
            # Free DDP's reducer (and the collective work it holds) while the process group and
            # the interpreter are alive: freed at exit instead, gloo can abort the process.
            del ddp
            gc.collect()
        shutdown(d)
    wall = time.perf_counter() - start
    train_time = wall - eval_time
    return {"best_step": best_step, "best_dev_bleu": best_bleu, "steps": step, "epochs": epoch,
            "train_tokens": train_tokens, "wall_s": round(wall, 2),
            "tokens_per_s": round(train_tokens / max(train_time, 1e-9), 1), "stop_reason": stop_reason}


def _sync(device: torch.device) -> None:
    """Wait for queued CUDA work, so that timings are attributed to the right phase."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
