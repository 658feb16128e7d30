"""Safe unpacking of downloaded archives (.tar, .tar.gz/.tgz, .tar.bz2/.xz, .zip).

Archives from the internet may try to write outside the target directory (absolute member
names, ``..`` components, links pointing elsewhere). Every member is checked before anything
is written; an unsafe archive is refused as a whole, naming the archive and the member. The
archive is unpacked into a temporary directory that is renamed into place only when done.
"""

from __future__ import annotations

import gzip
import os
import shutil
import tarfile
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

from wordorder.errors import WordorderError


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
    if name.startswith(("/", "\\")) or PurePosixPath(name).is_absolute() or \
            (len(name) > 1 and name[1] == ":"):
        return "it has an absolute path"
    if ".." in PurePosixPath(name.replace("\\", "/")).parts:
        return "it has a '..' component"
    return None


def _unsafe_tar_member(member: tarfile.TarInfo) -> str | None:
    why = _unsafe_name(member.name)
    if why:
        return why
    if member.issym() or member.islnk():
        # Symbolic links are relative to the member's folder, hard links to the archive root.
        base = PurePosixPath(member.name).parent if member.issym() else PurePosixPath()
        target = member.linkname
        if target.startswith("/") or _escapes(base / target):
            return f"it links to {target!r}, outside the archive"
    elif not (member.isfile() or member.isdir()):
        return "it is a device or pipe, not a file"
    return None


def _escapes(path: PurePosixPath) -> bool:
    depth = 0
    for part in path.parts:
        depth += -1 if part == ".." else (0 if part in (".", "") else 1)
        if depth < 0:
            return True
    return False


def _refuse(archive: Path, member: str, why: str) -> WordorderError:
    return WordorderError(f"refusing to unpack member {member!r}: {why}", path=archive,
                          hint="this archive is unsafe or corrupt; check the URL")


def safe_extract(archive: Path, dest: Path) -> None:
    """Unpack ``archive`` into ``dest`` (which must not exist yet), refusing unsafe members."""
    kind = archive_type(archive)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        if kind == "tar":
            with tarfile.open(archive, "r:*") as tar:
                members = tar.getmembers()
                for m in members:
                    why = _unsafe_tar_member(m)
                    if why:
                        raise _refuse(archive, m.name, why)
                if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: a second line of defence
                    tar.extractall(tmp, members=members, filter="data")
                else:  # pragma: no cover
                    tar.extractall(tmp, members=members)
        elif kind == "zip":
            with zipfile.ZipFile(archive) as zf:
                for name in zf.namelist():
                    why = _unsafe_name(name)
                    if why:
                        raise _refuse(archive, name, why)
                zf.extractall(tmp)
        else:
            raise WordorderError(f"not an archive (it is a {kind} file), so it has no members",
                                 path=archive,
                                 hint="give src and tgt their own url and sha256 instead")
        os.replace(tmp, dest)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, gzip.BadGzipFile) as e:
        raise WordorderError(f"cannot unpack the archive: {e}", path=archive) from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def member_path(root: Path, member: str, archive: Path) -> Path:
    """The extracted file for ``member`` under ``root``; an error lists the files there if absent."""
    why = _unsafe_name(member)
    if why:
        raise WordorderError(f"member name {member!r} is not allowed: {why}")
    path = root / member
    if not path.is_file():
        files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        shown = ", ".join(files[:30]) + (f", ... ({len(files)} files)" if len(files) > 30 else "")
        raise WordorderError(f"no member {member!r} in the archive", path=archive,
                             hint=f"members: {shown or '(none)'}")
    return path
