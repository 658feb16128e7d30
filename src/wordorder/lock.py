"""One run at a time per experiment results folder (``<results>/<experiment>``).

Snakemake locks only its working directory (``.snakemake/locks``). Two clones, or two
working directories, whose configs name the same results folder would run side by side and
delete each other's files: a job removes its old outputs before it runs, a failed job its
partial ones. So a run also locks the results folder of each experiment it writes.

How: the Snakefile *claims* its folder while it is parsed (:func:`claim`) and *takes* the
claimed locks in its ``onstart`` handler (:func:`take_claimed`; ``workflow/papers.smk``, whose
modules' handlers Snakemake ignores, has its own). Snakemake calls ``onstart`` only in the main
process, only when jobs are about to run: not in a dry run (``-n``), not when there is nothing
to be done, and not in the jobs of the run itself (a SLURM job, or a local ``run:`` job, starts
``snakemake --no-hooks`` and parses the Snakefile again, but no handler runs there), so a
run's own jobs are never refused. ``--no-hooks`` on the command line skips the lock too.

The lock is an ``flock`` on ``<folder>/.wordorder.lock`` held by the main process until it
exits, so the kernel releases it however the run ends (success, failure, Ctrl-C, kill -9);
flock works across hosts on NFS. The file says who holds it (host, pid, working directory,
start time) for the refusal message; an ``atexit`` handler empties it on an orderly exit, so
details left behind mean the holder died (SIGKILL, SIGTERM, a lost node): on this host,
where the free flock proves it, the lock is taken over with a note; from another host the
run is refused, as that holder cannot be checked from here (and some cluster filesystems
lock per node only). Where the filesystem has no locks at all, a holder on this host counts
as long as its pid is alive.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path

from wordorder.errors import WordorderError

LOCK_NAME = ".wordorder.lock"

_claimed: list[Path] = []
_held: dict[Path, int] = {}  # folder -> open descriptor holding its flock


def claim(folder: str | Path) -> None:
    """Note that this run writes ``folder``; :func:`take_claimed` locks it when jobs start."""
    folder = Path(folder).absolute()
    if folder not in _claimed:
        _claimed.append(folder)


def take_claimed() -> None:
    for folder in _claimed:
        take(folder)


def note_active_runs() -> None:
    """Say on stderr which claimed folders another live run holds now (called while the
    Snakefile is parsed). Before ``onstart`` refuses such a run, Snakemake may stop it at the
    DAG, taking that run's running jobs for 'incomplete files' and advising
    ``--rerun-incomplete``, which would redo what the other run is writing."""
    for folder in _claimed:
        holder = active(folder)
        if holder is not None:
            print(
                f"note: another run is active in {folder} ({_describe(holder)}): files it is "
                "writing count as incomplete here; wait until it ends (do not rerun them with "
                "--rerun-incomplete)",
                file=sys.stderr,
                flush=True,
            )


def active(folder: str | Path) -> dict | None:
    """The details of the run that holds ``folder``'s lock now (None: no run does), without
    taking it."""
    path = Path(folder).absolute() / LOCK_NAME
    if Path(folder).absolute() in _held:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # no lock file (no run yet), or one this user cannot read
        return None
    try:
        if try_flock(fd) != "busy":
            return None
        return _read(fd) or {}
    except OSError:
        return None
    finally:
        os.close(fd)  # also drops the flock if it was free and taken here


def take(folder: str | Path) -> None:
    """Lock ``folder`` for this process (again: a no-op), or refuse naming the holder."""
    folder = Path(folder).absolute()
    if folder in _held:
        return
    path = folder / LOCK_NAME
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as e:  # a read-only disk, a folder of another user, a file on the way
        raise WordorderError(
            f"cannot write the results folder {folder}: {e.strerror or e}",
            path=e.filename or path,
            hint="point results: in the config at a folder this user can write",
        ) from None
    here = socket.gethostname()
    try:
        status = try_flock(fd)
        holder = _read(fd)
        if status == "busy":
            _refuse(path, holder or {}, "is running")
        if holder and holder.get("host") != here:
            _refuse(
                path,
                holder,
                "may still be running on another host",
                hint=(
                    "a run on another host cannot be checked from here: if "
                    f"it has ended, delete {path}"
                ),
            )
        if holder and status == "no locks" and _alive(holder.get("pid")):
            _refuse(path, holder, "is running (this filesystem has no locks; its pid is alive)")
        if holder:
            print(
                f"note: {path}: taking over the lock of a run that is gone ({_describe(holder)})",
                file=sys.stderr,
            )
        holder = {
            "host": here,
            "pid": os.getpid(),
            "cwd": os.getcwd(),
            "start": time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "argv": sys.argv,
        }
        try:
            _write(fd, holder)
        except OSError as e:  # a full disk or quota: the raw error named no file
            raise WordorderError(
                f"cannot write the lock of the results folder: {e.strerror or e}",
                path=path,
                hint="free space on that disk (or point results: at another), then rerun: "
                "finished steps are kept",
            ) from None
    except BaseException:
        os.close(fd)
        raise
    _held[folder] = fd


def release_all() -> None:
    """Empty the lock files (an orderly end) and drop the locks."""
    for folder, fd in list(_held.items()):
        try:
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)
            del _held[folder]


atexit.register(release_all)


def try_flock(fd: int) -> str:
    """ "taken", "busy" (another process holds it) or "no locks" (the filesystem has none)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return "taken"
    except BlockingIOError:
        return "busy"
    except OSError as e:
        if e.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            return "no locks"
        raise


def _refuse(path: Path, holder: dict, state: str, hint: str | None = None) -> None:
    raise WordorderError(
        f"the results folder {path.parent} is in use: another run {state} ({_describe(holder)})",
        path=path,
        hint=hint
        or "wait until that run ends, or give this run its own results: folder "
        "(or experiment name); two runs writing one folder delete each other's files",
    )


def _describe(holder: dict) -> str:
    if not holder:
        return "it has not written its details yet"
    return (
        f"host {holder.get('host')}, pid {holder.get('pid')}, working directory "
        f"{holder.get('cwd')}, started {holder.get('start')}"
    )


def _read(fd: int) -> dict | None:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 65536).decode("utf-8", errors="replace").strip()
    if not text:
        return None
    try:
        value = json.loads(text)
        return value if isinstance(value, dict) else {"details": text}
    except json.JSONDecodeError:
        return {"host": None, "details": text}


def _write(fd: int, holder: dict) -> None:
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, (json.dumps(holder) + "\n").encode("utf-8"))
    os.fsync(fd)


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, TypeError, ValueError):
        return True
    return True
