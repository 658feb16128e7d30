"""The ``wordorder`` subcommands of the training stage (registered by :mod:`wordorder.cli`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

from wordorder.argtypes import positive_int


def cmd_train(a: argparse.Namespace) -> None:
    from wordorder.lifetime import die_with_parent
    from wordorder.resources import cpu_seconds
    from wordorder.train.runner import run_training

    die_with_parent()  # a trainer outliving its job would write outputs Snakemake deleted

    summary = run_training(
        train_src=Path(a.train_src),
        train_tgt=Path(a.train_tgt),
        dev_src=Path(a.dev_src),
        dev_ref=Path(a.dev_ref),
        spm=Path(a.spm),
        model_options=a.model_options,
        train_options=a.train_options,
        seed=a.seed,
        threads=a.threads,
        output=Path(a.output),
        features=a.features,
        state=Path(a.state) if a.state else None,
        spm_tgt=Path(a.spm_tgt) if a.spm_tgt else None,
    )
    # The job's CPU (its log's last line, summed by wordorder.evaluate.cost) includes the
    # earlier attempts of a resumed or restored training, whose own logs the retry overwrote.
    a.earlier_cpu_s = max(0.0, summary.get("cpu_s", 0.0) - cpu_seconds())
    print(json.dumps(summary, indent=1))


def cmd_average_checkpoints(a: argparse.Namespace) -> None:
    import torch

    from wordorder.model_io.checkpoint import average_checkpoints, load_model, save_checkpoint

    model, meta = load_model(a.inputs[-1])
    model.load_state_dict(average_checkpoints(a.inputs))
    options = meta.pop("options")
    meta.pop("vocab_size")
    meta.pop("tgt_vocab_size")
    save_checkpoint(a.output, model, options, {**meta, "averaged": [str(p) for p in a.inputs]})
    print(
        f"{a.output}: the mean of {len(a.inputs)} checkpoints "
        f"({sum(p.numel() for p in model.parameters()):,} parameters, torch {torch.__version__})"
    )


def register(add: Callable[..., argparse.ArgumentParser], _json: Callable[[str], dict]) -> None:
    """Add the stage's subcommands; ``add(name, func, help)`` makes one subparser."""
    s = add("train", cmd_train, "train one model")
    for name in ("--train-src", "--train-tgt", "--dev-src", "--dev-ref", "--spm", "--output"):
        s.add_argument(name, required=True)
    s.add_argument("--model-options", type=_json, required=True)
    s.add_argument("--train-options", type=_json, default={})
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--threads", type=positive_int, default=None)
    s.add_argument(
        "--features",
        type=_json,
        default={},
        help='extra source inputs: {"pos": {"train": PATH, "dev": PATH}, "order": {...}}',
    )
    s.add_argument(
        "--state",
        default=None,
        help="resumable training state (saved every train.checkpoint_every "
        "updates and on SIGTERM; a rerun continues from it)",
    )
    s.add_argument(
        "--spm-tgt",
        default=None,
        help=(
            "the target side's subword model when each side has its own (--spm "
            "is then the source side's)"
        ),
    )

    s = add(
        "average-checkpoints",
        cmd_average_checkpoints,
        "average the weights of checkpoints of one model",
    )
    s.add_argument("--inputs", nargs="+", required=True)
    s.add_argument("--output", required=True)
