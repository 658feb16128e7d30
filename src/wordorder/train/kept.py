"""The checkpoints a resumed training needs, kept beside its state.

``best.pt`` and ``metrics.jsonl`` are the training job's declared outputs, and Snakemake
deletes them when the job fails or hits its time limit. A resumed run that restored only the
best score from ``state.pt`` would then write ``best.pt`` only if a later evaluation beat it.
So each time the state is saved, the best checkpoint and the checkpoint-averaging history
(``history/step<N>.pt``, ``train.average_last``) as they are at that update are linked into
``<state>.kept/step<N>/``, and the state names that folder. On resume they are put back
byte-identical (the metrics log travels inside the state itself). Hard links cost no space
or time, since checkpoints are only ever replaced by a rename, never rewritten in place;
where linking is impossible (another file system) the file is copied.

A folder is complete before the state that names it is written, and the older folders are
removed only after that, so a kill at any moment leaves the state's folder intact.

Snakemake may delete best.pt before the state is saved: stopped (Ctrl-C, SIGTERM), it removes
the outputs of the jobs it kills while they still write their last state. So each new best
checkpoint is written into ``<state>.kept/live/`` and linked from there to best.pt (a resumed
run restores it there too), and a snapshot takes it from there, not from best.pt (seen
2026-11-26: a resumed run whose best evaluation came before the kill ended with no best
checkpoint at all).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from wordorder.errors import WordorderError
from wordorder.temps import make_temp

BEST = "best.pt"
HISTORY = "history"
LIVE = "live"  # the newest best checkpoint, written there first (not a step folder)


def folder_of(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + ".kept")


def _live(state_path: Path) -> Path:
    return folder_of(state_path) / LIVE / BEST


def place(src: Path, dst: Path, copy: bool = False) -> None:
    """Make ``dst`` a hard link to (else, or with ``copy``, a copy of) ``src``, atomically."""
    if not copy and dst.is_file() and os.path.samefile(src, dst):
        return  # already that file (renaming a link onto it would do nothing, leaving the link)
    tmp = make_temp(dst.parent, dst.name)  # a name a later run can tell is stale
    tmp.unlink()
    try:
        if copy:
            shutil.copyfile(src, tmp)
        else:
            try:
                os.link(src, tmp)
            except OSError:  # another file system, or one without hard links
                shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def snapshot(state_path: Path, out_dir: Path, step: int) -> str:
    """Keep ``out_dir``'s best.pt and history/ as they are now; returns the folder's name,
    to be saved in the state."""
    name = f"step{step}"
    root = folder_of(state_path)
    tmp, final = root / f".{name}.tmp", root / name
    for stale in (tmp, final):  # left by a killed run that had got past this update
        shutil.rmtree(stale, ignore_errors=True)
    (tmp / HISTORY).mkdir(parents=True)
    if _live(state_path).is_file():
        place(_live(state_path), tmp / BEST)
    for path in sorted((out_dir / HISTORY).glob("step*.pt")):
        place(path, tmp / HISTORY / path.name)
    os.replace(tmp, final)
    return name


def live_best(state_path: Path) -> Path:
    """Where a new best checkpoint is written first: ``<state>.kept/live/best.pt``, beyond
    Snakemake's reach (it may delete the output's best.pt at any moment of a stopped job;
    seen in CI 2026-11-29: written to the output first, the link then found it gone)."""
    path = _live(state_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def publish_best(state_path: Path, out_dir: Path) -> None:
    """Link the live best checkpoint (written by the caller) to ``out_dir/best.pt``."""
    place(_live(state_path), out_dir / BEST)


def prune(state_path: Path, keep: str, live: bool = True) -> None:
    """Remove the folders of earlier states (call after the state naming ``keep`` is saved);
    the live best checkpoint too unless ``live`` (a finished run has no more use for it)."""
    root = folder_of(state_path)
    for path in root.iterdir() if root.is_dir() else []:
        if path.name != keep and not (live and path.name == LIVE):
            shutil.rmtree(path, ignore_errors=True)


def restore(state_path: Path, name: str, out_dir: Path) -> None:
    """Put the kept best.pt and history/ back into ``out_dir`` (what the killed run wrote after
    the state was saved is removed: the resumed run replays those updates)."""
    folder = folder_of(state_path) / name
    if not folder.is_dir():
        raise WordorderError(
            f"the checkpoints kept with the training state are missing ({folder})",
            path=state_path,
            hint="delete the state to start this training from scratch",
        )
    kept_best, live = folder / BEST, _live(state_path)
    if kept_best.is_file():
        place(kept_best, out_dir / BEST)
        live.parent.mkdir(exist_ok=True)
        place(kept_best, live)
    else:
        (out_dir / BEST).unlink(missing_ok=True)
        live.unlink(missing_ok=True)
    history = out_dir / HISTORY
    kept_history = {p.name: p for p in (folder / HISTORY).glob("step*.pt")}
    for path in history.glob("step*.pt") if history.is_dir() else []:
        if path.name not in kept_history:
            path.unlink()
    if kept_history:
        history.mkdir(parents=True, exist_ok=True)
    for path in kept_history.values():
        place(path, history / path.name)
    prune(state_path, name)
