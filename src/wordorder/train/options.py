"""Training options: the ``train:`` section of the config."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wordorder.errors import WordorderError

BEST_BY = ("bleu", "perplexity")
# The learning-rate schedules of wordorder.train.schedule (named here: it imports this module).
SCHEDULES = ("inverse_sqrt", "noam", "step_decay")


@dataclass
class TrainOptions:
    """Training options (the ``train:`` section of the config).

    ``amp`` only takes effect on CUDA (bf16 where supported, else fp16 with a GradScaler).
    ``cpu_amp`` trains in bf16 autocast on a CPU that has bf16 arithmetic (AVX512-BF16 or
    AMX; an error elsewhere): float32 weights and optimizer, bf16 matrix products; ``auto``:
    bf16 where the CPU has it, float32 elsewhere (the summary's ``precision`` says which). Off by
    default: its numbers differ from float32 runs in the last digits.
    ``batch_tokens`` counts padded tokens per batch (see ``make_batches``); an update sums
    ``accum_steps`` batches. ``lr`` is the peak of the inverse-sqrt schedule, reached after
    ``warmup`` updates; with ``schedule: noam`` it is the factor of Vaswani et al.'s Eq. 3 and
    the peak is lr·d_model^-0.5·warmup^-0.5 (:func:`wordorder.train.schedule.peak_lr`).
    ``schedule: step_decay`` keeps ``lr`` and multiplies it by ``decay_factor`` at update
    ``decay_start`` and every ``decay_every`` updates after it (OpenNMT-py's default schedule,
    :func:`wordorder.train.schedule.step_decay`; Kawara et al. 2021 §V-C); ``warmup`` > 0 adds
    a linear ramp before it. The three decay options take part only in this schedule.
    ``best_by`` picks the best checkpoint (``best.pt``) at the evaluations: the highest dev
    BLEU (``bleu``), or the lowest dev perplexity (``perplexity``: teacher-forced, without label
    smoothing; Kawara et al. 2021 §V-C). Training stops at whichever of ``max_steps`` /
    ``max_epochs`` / ``max_minutes`` / ``patience`` (evaluations without a ``best_by``
    gain of at least ``min_delta``: BLEU points, or nats of dev loss for ``perplexity``) /
    ``target_bleu`` (an evaluation's dev BLEU reaches it: time to quality) comes first.
    ``eval_batch_tokens``: the dev decoding's batches (default ``batch_tokens``); larger
    batches mean fewer decoding steps, which on a GPU, where each step costs the host's kernel
    launches rather than the device's arithmetic, make the evaluations several times faster.
    ``eval_sentences`` is applied by the caller, which cuts the dev sources and the
    references that ``dev_score`` uses together (``train`` evaluates whatever it is given).
    ``average_last`` > 0 keeps the checkpoints of the last N evaluations and, at the end,
    makes ``best.pt`` their average (Vaswani et al. 2017: the last 5); the best single one is
    kept as ``best_single.pt``. ``checkpoint_every``: see :mod:`wordorder.train.resume`.
    ``cuda_graphs`` replays each update from CUDA graphs (:mod:`wordorder.train.graphs`; one
    process, bf16 or fp32): batches are then padded to static shapes, widths rounded up to one
    of ``width_steps`` values per doubling (:func:`~wordorder.model_io.batching.static_shape`),
    at most ``max_graphs`` shapes captured; ``auto``: where they can be used (CUDA, one
    process, bf16 or float32, a model whose update never reads the device: every model today),
    :func:`wordorder.train.graphs.use_graphs`. ``compile`` runs the model's loss through
    ``torch.compile`` (dynamic shapes; compiling takes the first updates' time).
    ``stack_parameters`` stacks the parameters by shape after the first update
    (:mod:`wordorder.train.stacked`; the same numbers, fewer operators for a GPU's host):
    ``auto`` on a CUDA device, ``true`` on any, both only for one process's eager updates
    (not with DDP, ``compile`` or ``cuda_graphs``).
    """

    device: str = "auto"
    amp: bool = True
    cpu_amp: bool | str = False
    batch_tokens: int = 4096
    accum_steps: int = 1
    lr: float = 7e-4
    warmup: int = 4000
    schedule: str = "inverse_sqrt"
    decay_start: int = 50_000
    decay_every: int = 10_000
    decay_factor: float = 0.5
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-9
    weight_decay: float = 0.0
    clip_norm: float = 0.0
    label_smoothing: float = 0.1
    max_steps: int = 100_000
    max_epochs: int | None = None
    max_minutes: float | None = None
    eval_every: int = 1000
    eval_sentences: int | None = None
    eval_beam: int = 1
    eval_batch_tokens: int | None = None
    patience: int | None = None
    target_bleu: float | None = None
    min_delta: float = 0.0
    best_by: str = "bleu"
    seed: int = 1
    log_every: int = 50
    threads: int | None = None
    checkpoint_every: int = 0
    average_last: int = 0
    cuda_graphs: bool | str = False
    width_steps: int = 8
    max_graphs: int = 64
    compile: bool = False
    stack_parameters: bool | str = "auto"

    # Options that only decide when to stop or how much to report: a saved state may be
    # resumed with other values (e.g. a longer max_minutes to continue a run).
    NOT_IN_STATE = (
        "max_steps",
        "max_epochs",
        "max_minutes",
        "patience",
        "target_bleu",
        "min_delta",
        "threads",
        "log_every",
        "checkpoint_every",
        "eval_every",
        "eval_sentences",
        "eval_beam",
        "eval_batch_tokens",
        "device",
        "max_graphs",
        "compile",
    )

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TrainOptions:
        """Options from a plain dict; an unknown key is a :class:`WordorderError`."""
        valid = [f.name for f in dataclasses.fields(cls)]
        for key in d:
            if key not in valid:
                raise WordorderError(
                    f"unknown train option '{key}'", hint=f"valid train options: {', '.join(valid)}"
                )
        d = dict(d)
        if "betas" in d:
            d["betas"] = tuple(float(b) for b in d["betas"])
        opts = cls(**d)
        for name in (
            "batch_tokens",
            "accum_steps",
            "max_steps",
            "eval_every",
            "eval_beam",
            "log_every",
            "width_steps",
            "max_graphs",
        ):
            if not isinstance(getattr(opts, name), int) or getattr(opts, name) < 1:
                raise WordorderError(
                    f"train option {name} must be a positive integer, got {getattr(opts, name)!r}"
                )
        if opts.eval_batch_tokens is not None and (
            not isinstance(opts.eval_batch_tokens, int) or opts.eval_batch_tokens < 1
        ):
            raise WordorderError(
                "train option eval_batch_tokens must be a positive integer or null, got "
                f"{opts.eval_batch_tokens!r}"
            )
        if opts.cuda_graphs not in (True, False, "auto"):
            raise WordorderError(
                f"train option cuda_graphs must be true, false or auto, got {opts.cuda_graphs!r}"
            )
        if opts.stack_parameters not in (True, False, "auto"):
            raise WordorderError(
                "train option stack_parameters must be true, false or auto, got "
                f"{opts.stack_parameters!r}"
            )
        if opts.cpu_amp not in (True, False, "auto"):
            raise WordorderError(
                f"train option cpu_amp must be true, false or auto, got {opts.cpu_amp!r}"
            )
        if opts.schedule not in SCHEDULES:
            raise WordorderError(
                "train option schedule must be one of "
                f"{', '.join(SCHEDULES)}, got {opts.schedule!r}"
            )
        if opts.schedule == "noam" and (not isinstance(opts.warmup, int) or opts.warmup < 1):
            raise WordorderError(
                "train option schedule: noam needs warmup ≥ 1 (its peak is at step = warmup)"
            )
        for name in ("decay_start", "decay_every"):
            value = getattr(opts, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise WordorderError(
                    f"train option {name} must be a positive integer, got {value!r}"
                )
        factor = opts.decay_factor
        if not isinstance(factor, (int, float)) or isinstance(factor, bool) or not 0 < factor <= 1:
            raise WordorderError(
                f"train option decay_factor must be in (0, 1], got {factor!r}",
                hint="step_decay multiplies the rate by it (OpenNMT-py's learning_rate_decay: 0.5)",
            )
        if opts.best_by not in BEST_BY:
            raise WordorderError(
                f"train option best_by must be one of {', '.join(BEST_BY)}, got {opts.best_by!r}"
            )
        if not isinstance(opts.average_last, int) or opts.average_last < 0:
            raise WordorderError(
                "train option average_last must be a non-negative integer, "
                f"got {opts.average_last!r}"
            )
        if not isinstance(opts.checkpoint_every, int) or opts.checkpoint_every < 0:
            raise WordorderError(
                f"train option checkpoint_every must be a non-negative integer (0 = only on "
                f"SIGTERM), got {opts.checkpoint_every!r}"
            )
        return opts

    def state_key(self) -> dict[str, Any]:
        """The options a resumed state must have been written with (the step-decay options only
        under that schedule: other schedules ignore them, and states written before they
        existed keep their key)."""
        skip = set(self.NOT_IN_STATE)
        if self.schedule != "step_decay":
            skip |= {"decay_start", "decay_every", "decay_factor"}
        if not self.cuda_graphs:  # they change the batches only with CUDA graphs
            skip |= {"cuda_graphs", "width_steps"}
        skip.add("stack_parameters")  # the same updates either way, to the bit
        return {k: v for k, v in dataclasses.asdict(self).items() if k not in skip}
