"""Safe unpacking of downloaded archives (.tar, .tar.gz/.tgz, .tar.bz2/.xz, .zip).

Archives from the internet may try to write outside the target directory (absolute member
names, ``..`` components, links pointing elsewhere, alone or in chains: see
:mod:`wordorder.corpus.links`) or to fill the disk (see :mod:`wordorder.corpus.limits`). Every
member is checked before anything is written; an unsafe archive is refused as a whole, naming
the archive and the member. The archive is unpacked into a temporary directory that is
renamed into place only when done.
"""

from __future__ import annotations

import errno
import os
import shutil
import tarfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from wordorder.corpus.limits import MAX_MEMBERS, check_free, human, too_big, unpack_cap
from wordorder.corpus.links import Unsafe, check_tar_links
from wordorder.errors import WordorderError
from wordorder.temps import make_temp

_CHUNK = 1 << 20


def archive_type(path: Path) -> str:
    """What a downloaded file is, judged by its content: 'zip', 'tar', 'gzip' or 'plain'."""
    if zipfile.is_zipfile(path):
        return "zip"
    if tarfile.is_tarfile(path):
        return "tar"
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            return "gzip"
    return "plain"


def _unsafe_name(name: str) -> str | None:
    """Why a member name may not be extracted, or None."""
    if (
        name.startswith(("/", "\\"))
        or PurePosixPath(name).is_absolute()
        or (len(name) > 1 and name[1] == ":")
    ):
        return "it has an absolute path"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "it has a '..' component"
    return None


def _unsafe_tar_member(member: tarfile.TarInfo) -> str | None:
    why = _unsafe_name(member.name)
    if why:
        return why
    if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
        return "it is a device or pipe, not a file"
    return None  # where links lead is checked on all members together (check_tar_links)


def _refuse(archive: Path, member: str, why: str) -> WordorderError:
    return WordorderError(
        f"refusing to unpack member {member!r}: {why}",
        path=archive,
        hint="this archive is unsafe or corrupt; check the URL",
    )


def safe_extract(
    archive: Path, dest: Path, max_bytes: int | None = None, data_filter: bool = True
) -> None:
    """Unpack ``archive`` into ``dest`` (which must not exist yet), refusing unsafe members.

    Args:
        max_bytes: the most bytes it may unpack to (None: the default of
            :func:`~wordorder.corpus.limits.unpack_cap`).
        data_filter: also apply Python's ``data`` extraction filter where it exists (a second
            line of defence; off only to test the checks here on their own).
    """
    kind = archive_type(archive)
    dest.parent.mkdir(parents=True, exist_ok=True)
    cap = unpack_cap(archive, max_bytes)
    tmp = make_temp(dest.parent, dest.name, directory=True)
    try:
        if kind == "tar":
            _extract_tar(archive, tmp, cap, data_filter)
        elif kind == "zip":
            _extract_zip(archive, tmp, cap)
        else:
            raise WordorderError(
                f"not an archive (it is a {kind} file), so it has no members",
                path=archive,
                hint="give src and tgt their own url and sha256 instead",
            )
        os.replace(tmp, dest)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError) as e:
        raise WordorderError(f"cannot unpack the archive: {e}", path=archive) from None
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT):
            raise  # reported as a full disk
        raise WordorderError(f"cannot unpack the archive: {e}", path=archive) from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _extract_tar(archive: Path, tmp: Path, cap: tuple[int, str], data_filter: bool) -> None:
    with tarfile.open(archive, "r:*") as tar:
        members = []
        for m in tar:  # counted while the headers are read: a list of millions costs memory too
            members.append(m)
            _check_count(len(members), archive)
        for m in members:
            why = _unsafe_tar_member(m)
            if why:
                raise _refuse(archive, m.name, why)
        try:
            check_tar_links(members)
        except Unsafe as e:
            raise _refuse(archive, e.member, e.why) from None
        # tarfile writes exactly the sizes in the headers, so their sum is what unpacking costs
        _check_total(sum(m.size for m in members if m.isfile()), cap, archive, tmp)
        try:
            if not hasattr(tarfile, "data_filter"):  # pragma: no cover - Python < 3.11.4
                tar.extractall(tmp, members=members)
            else:
                tar.extractall(
                    tmp, members=members, filter="data" if data_filter else "fully_trusted"
                )
        # tarfile's way of saying that a hard link's target is not in the archive
        except KeyError as e:
            raise WordorderError(
                f"cannot unpack the archive: {e.args[0] if e.args else e}", path=archive
            ) from None


def _extract_zip(archive: Path, tmp: Path, cap: tuple[int, str]) -> None:
    """Unpack member by member, counting the bytes written: a zip's sizes are only claims."""
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        _check_count(len(infos), archive)
        for info in infos:
            why = _unsafe_name(info.filename)
            if why:
                raise _refuse(archive, info.filename, why)
        claimed = sum(i.file_size for i in infos)
        _check_total(claimed, cap, archive, tmp)
        written = 0
        for info in infos:
            target = tmp / info.filename
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                while chunk := src.read(_CHUNK):
                    written += len(chunk)
                    if written > cap[0]:
                        raise too_big(
                            (
                                f"the archive unpacks to more than {cap[1]}, although its "
                                f"headers claim {human(claimed)}"
                            ),
                            "max_unpacked_bytes",
                            archive,
                        )
                    out.write(chunk)


def _check_count(members: int, archive: Path) -> None:
    if members > MAX_MEMBERS:
        raise WordorderError(
            f"the archive holds more than {MAX_MEMBERS:,} files, folders and links: "
            "nothing was unpacked",
            path=archive,
            hint="a corpus archive holds a few files; this one would fill the disk's inodes "
            "(check the URL)",
        )


def _check_total(total: int, cap: tuple[int, str], archive: Path, tmp: Path) -> None:
    if total > cap[0]:
        raise too_big(
            f"the archive unpacks to {human(total)}, more than {cap[1]}",
            "max_unpacked_bytes",
            archive,
        )
    check_free(tmp, total, f"unpacking {archive}")


def member_path(root: Path, member: str, archive: Path) -> Path:
    """The extracted file for ``member`` under ``root``; an error lists the
    files there if absent."""
    why = _unsafe_name(member)
    if why:
        raise WordorderError(f"member name {member!r} is not allowed: {why}")
    path = root / member
    if not path.is_file():
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        shown = ", ".join(files[:30]) + (f", ... ({len(files)} files)" if len(files) > 30 else "")
        raise WordorderError(
            f"no member {member!r} in the archive",
            path=archive,
            hint=f"members: {shown or '(none)'}",
        )
    return path
