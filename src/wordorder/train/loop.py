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

:func:`train` checks its inputs, holds the state's lock and runs a
:class:`~wordorder.train.trainer.Trainer`: the loop's steps are in :mod:`wordorder.train.trainer`,
what they write in :mod:`wordorder.train.outputs`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.model_io.batching import Pair
from wordorder.models.base import Seq2SeqModel
from wordorder.train import exclusive, finished
from wordorder.train.distributed import env_rank
from wordorder.train.options import TrainOptions
from wordorder.train.resume import Feats, data_digest, fingerprint
from wordorder.train.state import DevSet
from wordorder.train.trainer import Trainer
from wordorder.train.update import batch_loss, dev_loss, make_optimizer

__all__ = ["TrainOptions", "batch_loss", "dev_loss", "make_optimizer", "train"]


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
    dev_columns = [dev_src, dev_tgt or []] + [c for _, c in sorted((dev_feats or {}).items())]
    key = fingerprint(opts.state_key(), options, data_digest(train_pairs, train_feats, dev_columns))
    main = env_rank() == 0
    # Rank 0 holds the state for the whole run; the other ranks wait for it when they join.
    with exclusive.hold(Path(state_path)) if state_path is not None and main else nullcontext():
        # finished before?
        if state_path is not None and finished.marker_of(Path(state_path)).is_file():
            done = finished.restore(
                Path(state_path),
                Path(out_dir),
                finished.run_key(key, meta),
                main,
            )
            if done is not None:
                return done
        trainer = Trainer(
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
