"""Temporary files and folders that say who owns them, so that stale ones can be removed.

Outputs are written under a temporary name next to the target and renamed into place when
complete. A step killed with SIGKILL (an out-of-memory kill, ``scancel``, a cluster's hard
limit) cannot clean up, and its temporary file or folder (a whole corpus, an unpacked
archive) would stay forever. So every temporary name records its owner, host and process id::

    .<target name>.<host>~<pid>.<random>.tmp

and before a new temporary for the same target is made, the old ones of a process that no
longer runs on this host are deleted. Temporaries of a live process, of this process, or of
another host (whose processes cannot be checked from here) are never touched.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import re
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

log = logging.getLogger(__name__)

SUFFIX = ".tmp"


def _host() -> str:
    # Dots and '~' are the separators of the name, so they may not appear in the host part.
    return re.sub(r"[^A-Za-z0-9_-]", "_", socket.gethostname()) or "host"


def _prefix(name: str) -> str:
    return f".{name}.{_host()}~{os.getpid()}."


def _alive(pid: int) -> bool:
    """Whether a process with this id runs on this host (a reused id counts as alive: kept)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def stale_temps(folder: Path, name: str) -> list[Path]:
    """The temporaries for target ``name`` in ``folder`` whose owner is dead (same host only)."""
    pattern = re.compile(
        r"\."
        + re.escape(name)
        + r"\.([A-Za-z0-9_-]+)~(\d+)\.[A-Za-z0-9_]+"
        + re.escape(SUFFIX)
        + r"\Z"
    )
    host, me = _host(), os.getpid()
    stale = []
    for entry in glob.glob(
        os.path.join(glob.escape(str(folder)), f".{glob.escape(name)}.*{SUFFIX}")
    ):
        match = pattern.match(os.path.basename(entry))
        if match and match.group(1) == host:
            pid = int(match.group(2))
            if pid != me and not _alive(pid):
                stale.append(Path(entry))
    return sorted(stale)


def remove_stale(folder: Path, name: str) -> list[Path]:
    """Delete the stale temporaries of target ``name`` (see :func:`stale_temps`); returns them."""
    removed = []
    for path in stale_temps(folder, name):
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        except FileNotFoundError:  # another process cleaned it first
            continue
        except OSError as e:  # not ours to fix here: the new temporary gets another name
            log.warning("cannot remove the stale temporary %s: %s", path, e)
            continue
        log.info("removed %s, left by a process that was killed", path)
        removed.append(path)
    return removed


def make_temp(folder: Path, name: str, directory: bool = False) -> Path:
    """Create an empty temporary file (or folder) for target ``name`` in ``folder``, owned by
    this process, after removing the stale ones of that target."""
    folder = Path(folder)
    remove_stale(folder, name)
    if directory:
        return Path(tempfile.mkdtemp(prefix=_prefix(name), suffix=SUFFIX, dir=folder))
    fd, path = tempfile.mkstemp(prefix=_prefix(name), suffix=SUFFIX, dir=folder)
    os.close(fd)
    return Path(path)


@contextlib.contextmanager
def temp_dir(folder: Path, name: str) -> Iterator[Path]:
    """A temporary folder for ``name`` in ``folder``, removed when the block ends."""
    path = make_temp(folder, name, directory=True)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


#: Folders that ``wordorder fetch`` made before temporaries said who owns them.
_LEGACY_FETCH = re.compile(r"\.fetch\.[A-Za-z0-9_]{8}\Z")
LEGACY_AGE = 24 * 3600  # seconds without any write after which such a folder is abandoned


def remove_legacy_fetch_dirs(folder: Path, now: float) -> list[Path]:
    """Delete ``.fetch.XXXXXXXX`` folders of older versions nothing has written to for a day.

    Their owner cannot be known, so age is the only sign: a live fetch writes into its folder
    all the time it reads the corpus.
    """
    removed = []
    for entry in Path(folder).glob(".fetch.*"):
        if not _LEGACY_FETCH.match(entry.name) or not entry.is_dir() or entry.is_symlink():
            continue
        try:
            newest = max([entry.stat().st_mtime, *(p.stat().st_mtime for p in entry.iterdir())])
        except OSError:
            continue
        if now - newest > LEGACY_AGE:
            shutil.rmtree(entry, ignore_errors=True)
            log.info("removed %s, left by a fetch that was killed", entry)
            removed.append(entry)
    return removed
