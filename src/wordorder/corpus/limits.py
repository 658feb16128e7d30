"""Caps on what a download may cost: bytes downloaded, bytes unpacked from an archive.

A wrong or hostile URL must not fill the disk: ``file:///dev/zero`` never ends, and a 2 MB
archive can unpack to terabytes (a "decompression bomb"). A ``url`` source therefore takes

- ``max_download_bytes`` (default 64 GiB, far above any WMT archive): a download whose
  announced length is larger fails before it starts; one that grows larger fails there;
- ``max_unpacked_bytes``: what an archive (or a ``.gz`` file) may unpack to. By default 200
  times the archive's own size, at least 1 GiB: text compresses 3 to 10 times, a bomb a
  thousand times and more;
- :data:`MAX_MEMBERS`: the files, folders and links an archive may hold (each costs an inode
  when unpacked; a 620 KB tgz can hold 100,000 empty members). Corpus archives hold a few.

Sizes are byte counts or strings with a binary unit: ``500M``, ``80G``, ``1.5T``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from wordorder.errors import WordorderError

GiB = 1 << 30
DEFAULT_MAX_DOWNLOAD = 64 * GiB
UNPACK_RATIO = 200
UNPACK_FLOOR = GiB
MAX_MEMBERS = 10_000
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", re.IGNORECASE)


def parse_size(value: object, key: str, where: str) -> int:
    """A byte count from the config: a positive integer or a string such as ``80G``."""
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _SIZE.fullmatch(value) if isinstance(value, str) else None
    if match and float(match.group(1)) * _UNITS[match.group(2).upper()] >= 1:
        return int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    raise WordorderError(
        f"'{key}' in {where} must be a positive number of bytes, such as 500M or 80G, not {value!r}"
    )


def human(n: int) -> str:
    """``1610612736`` -> ``1.5 GiB``; below a MiB exact: ``2048`` -> ``2,048 bytes``."""
    for unit in ("TiB", "GiB", "MiB"):
        scale = _UNITS[unit[0]]
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:,} bytes"


def unpack_cap(archive: Path, configured: int | None) -> tuple[int, str]:
    """The most bytes ``archive`` may unpack to, and how that limit came about (for messages)."""
    if configured is not None:
        return configured, f"max_unpacked_bytes ({human(configured)})"
    cap = max(UNPACK_FLOOR, UNPACK_RATIO * archive.stat().st_size)
    return cap, (
        f"the default limit of {UNPACK_RATIO} times the archive's size, at least "
        f"{human(UNPACK_FLOOR)} ({human(cap)})"
    )


def too_big(message: str, key: str, path: Path | None = None) -> WordorderError:
    """The error for a download or archive above its cap (``key`` is the cap's config key)."""
    return WordorderError(
        message,
        path=path,
        hint=f"if it really is that large, raise '{key}' in the source (e.g. {key}: 500G); "
        "otherwise the URL is wrong or the file is hostile (a decompression bomb)",
    )


def check_free(folder: Path, need: int, what: str, fix: str = "") -> None:
    """Refuse to start writing ``need`` bytes into ``folder`` if its disk has less free space
    (``fix``: a first remedy for the hint)."""
    free = shutil.disk_usage(folder).free
    if need > free:
        raise WordorderError(
            f"{what} needs {human(need)} but only {human(free)} is free on the disk of {folder}",
            hint=f"{fix}free space, or point results: in the config at a larger disk (downloads "
            "are kept in <results>/downloads)",
        )
