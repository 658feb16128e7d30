"""A finished training, kept so that an interrupted job never loses what it had finished.

Snakemake registers a job's outputs only after its process exits. A job killed in between (a
time limit a second after training finished, Ctrl-C, a node failure) is marked incomplete, its
outputs (best.pt, metrics.jsonl) are deleted, and the retry would train again from scratch. So
a training with a state path that ends normally does not simply delete its state. Rank 0:

1. keeps what the trainer wrote (best.pt, best_single.pt, last.pt, history/, metrics.jsonl) in
   ``<state>.kept/final/``, complete before anything names it. The checkpoints are hard links
   (:mod:`wordorder.train.kept`: no space). The metrics log is copied, because the runner
   appends its summary record to it in place;
2. writes ``<state>.done`` atomically: the run's fingerprint, the code's, the folder, the
   folder's files with their sizes, and the summary;
3. removes ``state.pt`` (the optimizer state is no longer needed) and the older folders.

A kill at any instant leaves either the resumable state or the complete record. A rerun with
the same state path whose fingerprint and code match the record puts the outputs back,
byte-identical, and returns the saved summary without training (the runner then appends the
same summary record). With other options, data or code, the record is removed and training
starts anew.

The run's fingerprint is stricter than the resume key. Every training option counts (a longer
``max_steps`` continues a saved state, but must not be answered with the shorter finished run),
and so do the checkpoints' metadata (the resume key already covers the whole data). The
code fingerprint covers the ``wordorder`` package's sources: a forced rerun after the code
changed retrains, while one with the same code, config and data (which would give the same
model on the CPU anyway) restores. It is not part of the resume key: a fix elsewhere (say in
decoding) between attempts must not throw away training progress.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.io import atomic_open
from wordorder.train import kept
from wordorder.train.resume import fingerprint

FORMAT = "wordorder-finished-training-1"
FOLDER = "final"  # in <state>.kept/, beside the step<N> folders of the resumable states
FILES = ("best.pt", "best_single.pt", "last.pt", "metrics.jsonl")
COPIED = ("metrics.jsonl",)  # appended to after training (the summary record): not a link
HISTORY = "history"
_NAMES = "|".join(re.escape(name) for name in FILES) + rf"|{HISTORY}/step\d+\.pt"


def marker_of(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + ".done")


@functools.cache
def code_fingerprint() -> str:
    """sha256 over the sorted (relative path, bytes) of the ``wordorder`` package's .py files."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for rel, path in sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*.py")):
        data = path.read_bytes()
        digest.update(f"{rel}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def run_key(resume_key: str, meta: Mapping[str, Any]) -> str:
    """What a finished run must match to stand for this one: the resume key (its options and
    all its data, see :func:`~wordorder.train.resume.data_digest`), all the training options
    and the checkpoints' other metadata (``meta``)."""
    return fingerprint(resume_key, meta)


def _outputs(out_dir: Path) -> list[str]:
    """The trainer's files in ``out_dir``, relative to it."""
    names = [name for name in FILES if (out_dir / name).is_file()]
    return names + [f"{HISTORY}/{p.name}" for p in sorted((out_dir / HISTORY).glob("step*.pt"))]


def _write_marker(path: Path, record: Mapping[str, Any]) -> None:
    with atomic_open(path) as f:
        json.dump(record, f, indent=1)
        f.write("\n")


def finish(state_path: Path, out_dir: Path, key: str, summary: Mapping[str, Any]) -> None:
    """Replace the resumable state by the record of the finished run (see the module docstring)."""
    marker, root = marker_of(state_path), kept.folder_of(state_path)
    marker.unlink(missing_ok=True)  # never a record naming a folder being rewritten
    tmp, final = root / f".{FOLDER}.tmp", root / FOLDER
    for stale in (tmp, final):  # left by a run killed while finishing
        shutil.rmtree(stale, ignore_errors=True)
    (tmp / HISTORY).mkdir(parents=True)
    files = {}
    for rel in _outputs(out_dir):
        kept.place(out_dir / rel, tmp / rel, copy=rel in COPIED)
        files[rel] = (tmp / rel).stat().st_size
    os.replace(tmp, final)
    record = {
        "format": FORMAT,
        "key": key,
        "code": code_fingerprint(),
        "folder": FOLDER,
        "files": files,
        "summary": dict(summary),
    }
    _write_marker(marker, record)
    state_path.unlink(missing_ok=True)
    kept.prune(state_path, FOLDER, live=False)


def _read(marker: Path) -> dict[str, Any] | None:
    try:
        record = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        return None
    files, summary = record.get("files"), record.get("summary")
    if not (
        isinstance(record.get("key"), str) and isinstance(files, dict) and isinstance(summary, dict)
    ):
        return None
    # Only names finish() writes: a hand-edited record must not place or remove anything else.
    ours = record.get("folder") == FOLDER and all(re.fullmatch(_NAMES, rel) for rel in files)
    return record if ours else None


def _stale(record: dict[str, Any] | None, key: str, folder: Path) -> str | None:
    """Why the record does not stand for this run; None when it does."""
    if record is None:
        return "it is not a record of a finished training"
    if record["key"] != key:
        return "it was trained with other options or data"
    if record.get("code") != code_fingerprint():
        return "it was trained by other code (the wordorder sources changed)"
    for rel, size in record["files"].items():
        path = folder / rel
        if not path.is_file() or path.stat().st_size != size:
            return f"its kept outputs are incomplete ({path})"
    return None


def restore(state_path: Path, out_dir: Path, key: str, main: bool) -> dict[str, Any] | None:
    """The saved summary of a finished run this run would repeat, its outputs put back into
    ``out_dir`` (by the ``main`` process); None (a record that does not match removed) when
    this run has to train."""
    marker = marker_of(state_path)
    if not marker.is_file():
        return None
    record = _read(marker)
    folder = kept.folder_of(state_path) / FOLDER
    why = _stale(record, key, folder)
    if why is not None:
        if main:
            marker.unlink(missing_ok=True)
            shutil.rmtree(folder, ignore_errors=True)
            print(
                (
                    f"training anew: {marker} does not stand for this run ({why}); "
                    f"it and {folder} are removed"
                ),
                flush=True,
            )
        return None
    assert record is not None  # _stale said so
    if main:
        out_dir.mkdir(parents=True, exist_ok=True)
        for rel in record["files"]:
            (out_dir / rel).parent.mkdir(parents=True, exist_ok=True)
            kept.place(folder / rel, out_dir / rel, copy=rel in COPIED)
        for rel in _outputs(out_dir):  # what the finished run did not have
            if rel not in record["files"]:
                (out_dir / rel).unlink()
        state_path.unlink(missing_ok=True)  # left by a kill between the record and its removal
        kept.prune(state_path, FOLDER, live=False)
        summary = record["summary"]
        print(
            f"training had already finished at update {summary.get('steps')} (stop: "
            f"{summary.get('stop_reason')}); its outputs restored from {folder}; delete {folder} "
            f"and {marker} to train again",
            flush=True,
        )
    return record["summary"]
