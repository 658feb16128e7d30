"""Settings that contradict each other, refused when the config is validated (``check-config``
and every DAG build) rather than after preprocessing or hours of training.

Each check here is decided by the config alone (and, for the README, the file it names); what
depends on the machine (``auto`` devices, a GPU's presence) stays with the steps that run there.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError

STEP_DECAY_KEYS = ("decay_start", "decay_every", "decay_factor")


def check_settings(config: Mapping[str, Any]) -> None:
    """Raise a :class:`WordorderError` naming the first contradiction among the train, decode
    and evaluation settings."""
    _check_train(config.get("train", {}), int(config.get("train_processes", 1)))
    decode = config.get("decode", {})
    if decode.get("cuda_graphs") is True and decode.get("device") == "cpu":
        raise WordorderError(
            "decode.cuda_graphs: true needs a CUDA device, but decode.device is cpu",
            hint="set decode.cuda_graphs: false (or auto), or decode.device: cuda",
        )
    evaluation = config.get("evaluation", {})
    edges = list(evaluation.get("length_bins", []))
    if any(b <= a for a, b in zip(edges, edges[1:])):
        raise WordorderError(
            f"evaluation.length_bins must rise, got {edges}",
            hint=f"sort them and drop repeats: {sorted(set(edges))}",
        )
    _check_readme(evaluation, str(config.get("experiment", "")))


def _check_train(train: Mapping[str, Any], processes: int) -> None:
    schedule = train.get("schedule", "inverse_sqrt")
    for key in STEP_DECAY_KEYS:
        if key in train and schedule != "step_decay":
            raise WordorderError(
                f"train.{key} is set, but train.schedule is {schedule}: only step_decay reads it",
                hint=f"set train.schedule: step_decay, or remove train.{key}",
            )
    if train.get("cuda_graphs") is True and train.get("device") == "cpu":
        raise WordorderError(
            "train.cuda_graphs: true needs a CUDA device, but train.device is cpu",
            hint="set train.cuda_graphs: false (or auto), or train.device: cuda",
        )
    if train.get("stack_parameters") is True:
        # the reasons of wordorder.train.stacked.use_stacks, decided here by the config alone
        why = (
            f"train_processes is {processes} (DDP hooks each parameter)"
            if processes > 1
            else "train.compile compiles the per-parameter update"
            if train.get("compile") is True
            else "train.cuda_graphs replays updates with no host operators to save"
            if train.get("cuda_graphs") is True
            else ""
        )
        if why:
            raise WordorderError(
                f"train.stack_parameters: true needs one process's eager updates, but {why}",
                hint="set train.stack_parameters: auto or false",
            )


def _check_readme(evaluation: Mapping[str, Any], name: str) -> None:
    """The README (and page) the readme_section rule splices must exist with the section's
    marker lines, each once, in order (the rule would fail only after every table is built)."""
    from wordorder.evaluate.readme import splice

    for key in ("readme", "readme_page"):
        value = evaluation.get(key)
        if not value:
            continue
        path = Path(value)
        if not path.is_file():
            raise WordorderError(
                f"evaluation.{key} names {path}, which is not a file",
                hint="create it with the section's two marker lines, or set it to null",
            )
        try:
            splice(path.read_text(encoding="utf-8"), name, "", str(path))
        except WordorderError as e:
            raise WordorderError(f"evaluation.{key}: {e.message}", hint=e.hint) from None
