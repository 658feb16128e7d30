"""Checksummed, cached and resumable downloads (standard library only).

A download lives in ``cache_dir/<sha256>/<file name from the URL>``, so a rerun, or another
config using the same file, never downloads it again, and a user without network access can
place the file there by hand. While downloading, the bytes go to ``<name>.part``; an
interrupted download is continued with an HTTP ``Range`` request (started over if the server
ignores it). Transient failures (connection errors, timeouts, HTTP 5xx) are retried a few
times with a short backoff; everything is bounded by short timeouts so that being offline
is reported in seconds, not minutes.
"""

from __future__ import annotations

import errno
import http.client
import os
import re
import time
import urllib.request
from pathlib import Path, PurePosixPath
from urllib.error import HTTPError
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from wordorder.corpus.limits import DEFAULT_MAX_DOWNLOAD, check_free, human, too_big
from wordorder.corpus.reach import unreachable
from wordorder.errors import WordorderError
from wordorder.io import locked, sha256_of

DEFAULT_RETRIES = 3
DEFAULT_TIMEOUT = 10.0  # seconds, for connecting and for each read
BACKOFF = 0.5  # seconds before the first retry, doubled for each further one
SCHEMES = ("http", "https", "file")
_CHUNK = 1 << 16
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class _Transient(Exception):
    """A failure worth retrying (connection refused or reset, timeout, HTTP 5xx, cut-off body)."""


def check_sha256(value: object, where: str) -> str:
    """A sha256 digest from the config, lower-cased; refuses anything but 64 hex digits."""
    if not isinstance(value, str) or not _SHA256.match(value.strip().lower()):
        raise WordorderError(
            f"'sha256' in {where} must be 64 hexadecimal digits, not {value!r}",
            hint="compute it with: sha256sum FILE",
        )
    return value.strip().lower()


def check_url(value: object, where: str) -> str:
    if not isinstance(value, str) or urlsplit(value).scheme not in SCHEMES:
        raise WordorderError(f"'url' in {where} must be an {', '.join(SCHEMES)} URL, not {value!r}")
    return value


def cache_name(url: str) -> str:
    """The file name a download gets in the cache: the URL's last path part, made safe."""
    name = unquote(PurePosixPath(urlsplit(url).path).name)
    name = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".")
    return name or "download"


def cache_path(url: str, sha256: str, cache_dir: Path) -> Path:
    return Path(cache_dir).absolute() / sha256 / cache_name(url)


def cached_download(
    url: str,
    sha256: str,
    cache_dir: Path,
    retries: int = DEFAULT_RETRIES,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_DOWNLOAD,
) -> Path:
    """Return the path of the verified file for ``url``, downloading it only if not cached.

    Raises:
        WordorderError: the URL cannot be reached (after ``retries`` tries), the server
            refuses it, the sha256 does not match (the bad download is deleted), the download
            is larger than ``max_bytes`` (at once, not retried), or the cache cannot be written.
    """
    target = cache_path(url, sha256, cache_dir)
    try:
        return _cached(url, sha256, target, retries, timeout, max_bytes)
    except OSError as e:  # network errors are handled below: this is the local cache
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise  # reported as a full disk
        raise WordorderError(
            f"cannot write the download cache: {e.strerror or e}",
            path=e.filename or target.parent,
            hint=f"make {Path(cache_dir).absolute()} writable, or point results: in the config at "
            "a folder you can write (downloads are kept in <results>/downloads)",
        ) from None


def _cached(
    url: str, sha256: str, target: Path, retries: int, timeout: float, max_bytes: int
) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    verified = target.with_name(f".{target.name}.verified")
    with locked(target.parent):
        if target.is_file():
            if not verified.exists():  # placed by hand: check it once
                actual = sha256_of(target)
                if actual != sha256:
                    raise WordorderError(
                        f"checksum mismatch: expected sha256 {sha256}, got {actual}",
                        path=target,
                        hint=f"this file is not the one at {url}; delete it and rerun",
                    )
                verified.touch()
            return target
        _download(url, target, sha256, retries, timeout, max_bytes)
        verified.touch()
    return target


def _download(
    url: str, target: Path, sha256: str, retries: int, timeout: float, max_bytes: int
) -> None:
    """Download into ``<target>.part`` (retries resume it), verify, rename. A failure removes
    the part: a download that failed for good must not keep its bytes, and a full disk least of
    all (a killed process leaves it, and the next run resumes it)."""
    part = target.with_name(target.name + ".part")
    try:
        _attempts(url, target, part, sha256, retries, timeout, max_bytes)
    except OSError as e:  # writing the part (a network fault is _Transient)
        part.unlink(missing_ok=True)
        full = e.errno in (errno.ENOSPC, errno.EDQUOT)
        raise WordorderError(
            f"cannot write the download of {url}: "
            + ("the disk is full" if full else (e.strerror or str(e)))
            + "; the partial download was deleted",
            path=e.filename or part,
            hint="free space, or point results: in the config at a larger disk (downloads are "
            "kept in <results>/downloads)",
        ) from None
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def _attempts(
    url: str, target: Path, part: Path, sha256: str, retries: int, timeout: float, max_bytes: int
) -> None:
    reason = "no attempt made"
    for attempt in range(max(1, retries)):
        if attempt:
            time.sleep(BACKOFF * 2 ** (attempt - 1))
        try:
            _fetch_into(url, part, sha256, timeout, max_bytes)
        except _Transient as e:
            reason = str(e)
            continue
        actual = sha256_of(part)
        if actual != sha256:
            part.unlink(missing_ok=True)
            raise WordorderError(
                f"checksum mismatch for {url}: expected sha256 {sha256}, got {actual}",
                hint=(
                    "the download was deleted; the file on the server changed or the "
                    "sha256 in the config is wrong"
                ),
            )
        os.replace(part, target)
        return
    raise WordorderError(
        f"could not download {url} after {max(1, retries)} tries: {reason}",
        hint=f"if this machine is offline, download the file elsewhere and save it as {target} "
        f"(its sha256 must be {sha256}), or use a 'local' source with files on disk",
    )


def _fetch_into(url: str, part: Path, sha256: str, timeout: float, max_bytes: int) -> None:
    """One attempt: append to (or restart) ``part`` until the server's body is complete.

    Failures of the network are :class:`_Transient`; a body above ``max_bytes`` and errors
    writing ``part`` are not (retrying cannot help).
    """
    scheme = urlsplit(url).scheme
    offset = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": "wordorder"}
    if offset and scheme != "file":
        headers["Range"] = f"bytes={offset}-"
    why = unreachable(url, timeout)
    if why:
        raise _Transient(why)
    try:
        response = urllib.request.urlopen(
            urllib.request.Request(url, headers=headers), timeout=timeout
        )
    except HTTPError as e:
        if e.code == 416 and offset:  # nothing left to send: the part may be complete
            if sha256_of(part) == sha256:
                return
            part.unlink()
            raise _Transient("the server refused to resume; starting over") from None
        if e.code >= 500 or e.code in (408, 429):
            raise _Transient(f"HTTP {e.code} {e.reason}") from None
        raise WordorderError(
            f"the server answered HTTP {e.code} {e.reason} for {url}",
            hint="check the URL in the config",
        ) from None
    except (OSError, http.client.HTTPException) as e:
        if scheme == "file":
            raise WordorderError(f"cannot read {url}: {getattr(e, 'reason', e)}") from None
        raise _Transient(str(getattr(e, "reason", e)) or type(e).__name__) from None
    with response:
        resume = bool(offset) and response.status == 206
        if resume and _range_start(response) != offset:
            part.unlink()
            raise _Transient("the server sent another part of the file than asked; starting over")
        if not resume:
            offset = 0  # the server sent the whole file (it ignored the Range header)
        length = response.headers.get("Content-Length")
        if scheme == "file" and not Path(url2pathname(urlsplit(url).path)).is_file():
            length = None  # a device or a pipe: its size (0) says nothing of what it sends
        if length is not None and length.isdigit():
            if offset + int(length) > max_bytes:
                raise too_big(
                    f"the server announces {human(offset + int(length))} for {url}, more than "
                    f"max_download_bytes ({human(max_bytes)}); nothing was downloaded",
                    "max_download_bytes",
                )
            check_free(part.parent, int(length), f"downloading {url}")
        else:  # of unknown length: it may send up to the cap, which must fit
            check_free(
                part.parent,
                max_bytes - offset,
                f"downloading {url} (its length unknown, up to max_download_bytes)",
                "set max_download_bytes of the source below the free space, ",
            )
        received = 0
        with open(part, "ab" if resume else "wb") as f:  # errors writing it are not the network's
            while True:
                try:
                    chunk = response.read(_CHUNK)
                except (OSError, http.client.HTTPException) as e:
                    raise _Transient(
                        f"connection lost after {offset + received} bytes: {e}"
                    ) from None
                if not chunk:
                    break
                received += len(chunk)
                if offset + received > max_bytes:
                    f.close()
                    part.unlink()
                    raise too_big(
                        (
                            f"the download of {url} grew past max_download_bytes "
                            f"({human(max_bytes)}): stopped and deleted"
                        ),
                        "max_download_bytes",
                    )
                f.write(chunk)
    if length is not None and length.isdigit() and received < int(length):
        raise _Transient(
            f"connection closed after {offset + received} of {offset + int(length)} bytes"
        )


def _range_start(response) -> int | None:
    match = re.match(r"bytes (\d+)-", response.headers.get("Content-Range", ""))
    return int(match.group(1)) if match else None
