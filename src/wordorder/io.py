"""Line-oriented file I/O with strict checks and atomic outputs.

All pipeline files are UTF-8, one sentence per line, optionally gzip-compressed (``.gz``).
Outputs are written to a temporary name in the same directory and renamed into place only
when complete, so a failed step never leaves a partial file that looks finished; the
temporaries of a killed step are removed by the next one (:mod:`wordorder.temps`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gzip
import hashlib
import json
import os
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, cast

from wordorder.errors import WordorderError
from wordorder.temps import make_temp


def _open_binary(path: Path) -> IO[bytes]:
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))  # a GzipFile: a binary file object
    return open(path, "rb")


def iter_lines(path: str | Path, max_chars: int | None = None) -> Iterator[str]:
    """Yield the lines of a UTF-8 text file (``.gz`` decompressed) without their line ends.

    With ``max_chars``, a line is read at most ``4 * max_chars + 2`` bytes far (a character has
    at most 4 bytes in UTF-8, the line end 2): a longer one is refused without reading it
    whole, so that a file without line breaks (or a compressed gigabyte on one line) costs
    kilobytes of memory, not gigabytes. Lines in between are the caller's to check by characters.

    Raises:
        WordorderError: the file is missing, a line is not valid UTF-8 or too long (naming the
            line), or a ``.gz`` file is truncated, corrupt or not gzip-compressed at all.
    """
    path = Path(path)
    if not path.is_file():
        raise _missing(path)
    limit = -1 if max_chars is None else 4 * max_chars + 2
    number = 0
    with _open_binary(path) as f:
        while True:
            try:
                raw = f.readline(limit)
            except (EOFError, OSError, zlib.error) as e:  # gzip: cut off, not gzip, corrupt
                raise _unreadable(path, number, e) from None
            if not raw:
                return
            number += 1
            if len(raw) == limit and not raw.endswith(b"\n"):
                raise WordorderError(
                    f"the line has more than {max_chars:,} characters",
                    path=path,
                    line=number,
                    hint="one sentence per line is expected: the file has lost its line breaks, "
                    "or the line is not a sentence",
                )
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise WordorderError(
                    f"invalid UTF-8 at byte {e.start} of the line",
                    path=path,
                    line=number,
                    hint="convert the file to UTF-8 (e.g. iconv -f <encoding> -t UTF-8)",
                ) from None
            yield text.rstrip("\r\n")


def _unreadable(path: Path, lines_read: int, error: BaseException) -> WordorderError:
    """The error for a file that breaks off while being read (in practice, a bad ``.gz``)."""
    with open(path, "rb") as f:
        head = f.read(16)
    if path.suffix == ".gz" and not head.startswith(b"\x1f\x8b"):
        return WordorderError(
            (
                "the file is not gzip-compressed although its name ends in .gz "
                f"(it starts with {head!r})"
            ),
            path=path,
            hint="if it is plain text, rename it without .gz; if it was downloaded, it may be "
            "an error page: download it again",
        )
    if isinstance(error, EOFError):
        return WordorderError(
            f"the compressed file is truncated: it ends after line {lines_read}",
            path=path,
            hint=(
                "the file is incomplete (an interrupted copy or download): "
                "copy or download it again"
            ),
        )
    return WordorderError(
        f"cannot read the file after line {lines_read}: {error}",
        path=path,
        hint="the file is corrupt: copy or download it again",
    )


def read_lines(path: str | Path) -> list[str]:
    """Read all lines of a UTF-8 text file (see :func:`iter_lines`)."""
    return list(iter_lines(path))


def read_parallel(src: str | Path, tgt: str | Path) -> tuple[list[str], list[str]]:
    """Read two line-aligned files; their line counts must match."""
    a, b = read_lines(src), read_lines(tgt)
    if len(a) != len(b):
        raise WordorderError(
            f"line counts differ: {len(a)} lines here but {len(b)} in {tgt}",
            path=src,
            hint="the two sides of a parallel corpus must have one sentence per line, aligned",
        )
    return a, b


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def disk_full(path: str | Path, detail: str) -> WordorderError:
    return WordorderError(
        f"the disk is full ({detail}); nothing was written",
        path=path,
        hint=(
            "free space, or point results:/logs: in the config at a larger disk, then "
            "rerun: finished steps are kept"
        ),
    )


# How torch's zip writer reports a write the disk refused (it has no errno): a short write
# shows up as a position mismatch, a failed one as "file write failed".
_TORCH_WRITE_FAILED = ("unexpected pos", "file write failed")


def save_torch(obj: object, path: str | Path) -> None:
    """``torch.save`` to a temporary name renamed into place; a full disk is a
    :class:`WordorderError` naming ``path``, with nothing left behind. Every torch file of the
    project is written through here."""
    import torch

    try:
        # A file object, not the temporary's path: torch names the archive's root folder after
        # a path, and the bytes would differ from run to run.
        with atomic_open(path, "wb") as f:
            torch.save(obj, f)
    except RuntimeError as e:
        if not any(text in str(e) for text in _TORCH_WRITE_FAILED):
            raise
        raise disk_full(path, f"torch could not write the file: {str(e).splitlines()[0]}") from None


@contextlib.contextmanager
def atomic_paths(*paths: str | Path) -> Iterator[list[Path]]:
    """Give temporary paths that replace ``paths`` only if the block succeeds.

    On an exception every temporary file is removed and the targets are left untouched.

    Example::

        with atomic_paths(out_src, out_tgt) as (tmp_src, tmp_tgt):
            write(tmp_src); write(tmp_tgt)
    """
    targets = [Path(p) for p in paths]
    refuse_folders(*targets)
    temps: list[Path] = []
    try:
        for target in targets:
            target.parent.mkdir(parents=True, exist_ok=True)
            temps.append(make_temp(target.parent, target.name))  # removes stale ones first
        yield temps
        mode = 0o666 & ~_umask()  # mkstemp creates 0600; give outputs the usual permissions
        for tmp, target in zip(temps, targets):
            os.chmod(tmp, mode)
            os.replace(tmp, target)
    except BaseException as e:
        for tmp in temps:
            tmp.unlink(missing_ok=True)
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise disk_full(targets[0], e.strerror or str(e)) from None
        raise


def link_loop(path: str | Path) -> bool:
    """Whether ``path`` (or a folder on it) is a loop of symbolic links, which ``exists()`` and
    ``is_file()`` report as missing."""
    try:
        os.stat(path)
    except OSError as e:
        return e.errno == errno.ELOOP
    return False


def _missing(path: Path) -> WordorderError:
    """Why ``path`` is not a readable file: missing, or a loop of symbolic links."""
    if link_loop(path):
        return WordorderError(
            f"a loop of symbolic links ({os.strerror(errno.ELOOP)})",
            path=path,
            hint="point the config at the file itself (ls -l each folder on the path)",
        )
    return WordorderError("file not found", path=path, hint="check the path in your config")


def refuse_folders(*paths: str | Path) -> None:
    """An output path that is a folder is an error naming it (a rename onto it would fail
    only after the work, with a traceback); a command checks its outputs before it starts."""
    for path in map(Path, paths):
        if path.is_dir():
            raise WordorderError(
                "the output is a folder, not a file",
                path=path,
                hint="give the output a file name (of a file in that folder, for instance)",
            )


def refuse_clobbering(inputs: Mapping[str, str | Path], outputs: Mapping[str, str | Path]) -> None:
    """An output that is one of the command's inputs (same path or link) or another of its
    outputs is an error naming both options: the rename at the end would replace what the
    user gave, or one output the other. ``inputs``/``outputs``: option name → path."""
    seen: dict[str, str] = {}
    for name, path in {**inputs, **outputs}.items():
        key = os.path.realpath(path)
        if key in seen and name in outputs:
            raise WordorderError(
                f"{name} is the same file as {seen[key]}",
                path=Path(path),
                hint=f"give {name} a path of its own: it would be written over",
            )
        seen.setdefault(key, name)


@contextlib.contextmanager
def atomic_open(path: str | Path, mode: str = "w") -> Iterator[IO]:
    """Open ``path`` for writing through a temporary file renamed into place on success."""
    with atomic_paths(path) as (tmp,):
        f: IO[Any]
        if "b" in mode:
            f = open(tmp, mode)
        elif Path(path).suffix == ".gz":
            f = cast(IO[Any], gzip.open(tmp, mode + "t", encoding="utf-8"))  # a text wrapper
        else:
            f = open(tmp, mode, encoding="utf-8", newline="\n")
        with f:
            yield f


def write_lines(path: str | Path, lines: Iterable[str]) -> None:
    """Atomically write ``lines`` (without line ends) to ``path``."""
    with atomic_open(path) as f:
        for line in lines:
            f.write(line)
            f.write("\n")


def write_parallel(paths: Sequence[str | Path], columns: Sequence[Iterable[str]]) -> None:
    """Atomically write several line-aligned files at once (all or none appear)."""
    with atomic_paths(*paths) as temps:
        for tmp, lines in zip(temps, columns):
            with open(tmp, "w", encoding="utf-8", newline="\n") as f:
                for line in lines:
                    f.write(line)
                    f.write("\n")


def write_json(path: str | Path, data: dict) -> None:
    """Atomically write ``data`` as indented UTF-8 JSON."""
    with atomic_open(path) as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")


def sha256_of(path: str | Path) -> str:
    """The hex sha256 of a file's bytes, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def locked(folder: str | Path) -> Iterator[None]:
    """An exclusive lock on ``folder`` (its ``.lock`` file; the folder is made if missing), for
    jobs that share what is in it: a download cache entry, a run ledger's manifest."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    with open(Path(folder) / ".lock", "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
