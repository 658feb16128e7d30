"""Checkpoints that hold only tensors and plain Python values.

A checkpoint is a dict ``{"format", "options", "vocab_size", "state_dict", "meta"}`` (plus
``"tgt_vocab_size"`` when the target has a vocabulary of its own size); it is
read with ``torch.load(weights_only=True)`` (no arbitrary code runs on loading) and the model
is rebuilt from its options with :func:`wordorder.models.build_model`. Files are written to a
temporary name and renamed, so a crash never leaves a truncated checkpoint.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from wordorder.errors import WordorderError
from wordorder.io import save_torch
from wordorder.models.base import Seq2SeqModel
from wordorder.models.registry import build_model

FORMAT = "wordorder-checkpoint-1"


def plain(value: Any) -> Any:
    """Convert ``value`` to types the weights-only unpickler accepts (Paths → str,
    dataclasses → dicts, tuples/sets → lists, non-finite floats kept)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    return str(value)


def cpu_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """``model``'s state dict on the CPU, each tensor in a storage of its own but a tied one
    (under several names: kept shared, and torch.save stores a shared storage once). A
    parameter stored as a row of a larger tensor (:mod:`wordorder.train.stacked`) is copied
    out, so that a file holds what it names, in the same bytes however training held it."""
    copies: dict[tuple, torch.Tensor] = {}
    state = {}
    for name, tensor in model.state_dict().items():
        key = (tensor.device, tensor.data_ptr(), tuple(tensor.shape), tensor.dtype)
        if key not in copies:
            t = tensor.detach().cpu()
            if t.untyped_storage().nbytes() != t.numel() * t.element_size():
                t = t.clone()
            copies[key] = t
        state[name] = copies[key]
    return state


def save_checkpoint(
    path: str | Path, model: Seq2SeqModel, options: Mapping[str, Any], meta: Mapping[str, Any]
) -> None:
    """Atomically write ``model``'s weights with its options dict and ``meta``.

    Args:
        options: the resolved model options (``ModelOptions.to_dict()``), enough for
            ``build_model`` to rebuild the architecture.
        meta: plain values (step, dev_bleu, the variant's options, ...).
    """
    state = cpu_state(model)
    obj = {
        "format": FORMAT,
        "options": plain(options),
        "vocab_size": int(model.vocab_size),
        "state_dict": state,
        "meta": plain(meta),
    }
    tgt_vocab = int(getattr(model, "tgt_vocab_size", obj["vocab_size"]))
    # separate vocabularies; a joint one writes what it always did
    if tgt_vocab != obj["vocab_size"]:
        obj["tgt_vocab_size"] = tgt_vocab
    save_torch(obj, path)


def _read(path: Path, device: torch.device | str = "cpu") -> dict:
    if not path.is_file():
        raise WordorderError("checkpoint not found", path=path, hint="run the train step first")
    try:
        obj = torch.load(path, map_location=device, weights_only=True)
    except Exception as e:  # corrupt file, not a torch file, or unsafe pickle content
        raise WordorderError(
            f"cannot read the checkpoint: {e}",
            path=path,
            hint="the file is damaged or not a wordorder checkpoint: retrain",
        ) from None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise WordorderError("not a wordorder checkpoint", path=path)
    return obj


def average_checkpoints(paths: Sequence[str | Path]) -> dict[str, torch.Tensor]:
    """The element-wise mean of the weights of several checkpoints of one model (Vaswani et
    al. 2017 average the last 5); non-float tensors are taken from the last checkpoint.

    Raises:
        WordorderError: no paths, or checkpoints of different architectures.
    """
    if not paths:
        raise WordorderError("no checkpoints to average")
    objs = [_read(Path(p)) for p in paths]
    first = objs[0]
    for p, obj in zip(paths, objs):
        if (
            obj["options"] != first["options"]
            or obj["state_dict"].keys() != first["state_dict"].keys()
        ):
            raise WordorderError(
                "checkpoints of different models cannot be averaged",
                path=p,
                hint=f"its options differ from those of {paths[0]}",
            )
    out = {}
    for name, last in objs[-1]["state_dict"].items():
        if last.is_floating_point():
            out[name] = (
                torch.stack([o["state_dict"][name].double() for o in objs]).mean(0).to(last.dtype)
            )
        else:
            out[name] = last
    return out


def load_model(
    path: str | Path, device: torch.device | str = "cpu"
) -> tuple[Seq2SeqModel, dict[str, Any]]:
    """Rebuild the model of a checkpoint on ``device``, in eval mode.

    Returns:
        The model and the checkpoint's meta dict, with ``options``, ``vocab_size`` and
        ``tgt_vocab_size`` added (checkpoints of a joint vocabulary have none: it is
        ``vocab_size``).
    """
    obj = _read(Path(path), device)
    tgt_vocab = obj.get("tgt_vocab_size", obj["vocab_size"])
    model = build_model(obj["options"], obj["vocab_size"], tgt_vocab)
    try:
        found = model.load_state_dict(obj["state_dict"], strict=False)
        problems = [f"missing {k}" for k in found.missing_keys]
        problems += [f"unexpected {k}" for k in found.unexpected_keys]
    except RuntimeError as e:  # a weight of another shape
        problems = [str(e).strip().splitlines()[-1].strip()]
    if problems:
        raise WordorderError(
            "the checkpoint's weights do not fit the model this version of wordorder builds "
            f"from its options: {'; '.join(problems[:3])}",
            path=path,
            hint="it was trained by an older version (before a change to its model): retrain it",
        )
    model.to(device).eval()
    meta = dict(obj.get("meta") or {})
    meta.update(options=obj["options"], vocab_size=obj["vocab_size"], tgt_vocab_size=tgt_vocab)
    return model, meta


def step_of(path: Path) -> int:
    return int(path.stem[len("step") :])


def keep_recent(
    folder: Path,
    step: int,
    model: Seq2SeqModel,
    options: Mapping[str, Any],
    meta: Mapping[str, Any],
    n: int,
) -> None:
    """Save this evaluation's weights as ``folder/step<N>.pt`` and delete all but the last ``n``."""
    folder.mkdir(parents=True, exist_ok=True)
    save_checkpoint(folder / f"step{step}.pt", model, options, meta)
    for old in sorted(folder.glob("step*.pt"), key=step_of)[:-n]:
        old.unlink()
