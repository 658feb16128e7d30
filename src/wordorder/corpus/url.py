"""The ``url`` source: a parallel corpus downloaded from the web, checked by sha256.

Two forms::

    {kind: url, url: URL, sha256: HEX, src: MEMBER, tgt: MEMBER}      # one archive
    {kind: url, src: {url: URL, sha256: HEX}, tgt: {url: URL, sha256: HEX}}   # two files

In the first form the download is an archive (.tar, .tar.gz/.tgz, .zip) and ``src``/``tgt``
name files inside it (``{src}``/``{tgt}`` placeholders allowed). In the second form each
side is its own plain or ``.gz`` file, or an archive when that side also gives a ``member``.
Optional ``retries`` and ``timeout`` (seconds) tune the download; the defaults fail fast.
Optional ``max_download_bytes`` and ``max_unpacked_bytes`` cap what a download may cost (see
:mod:`wordorder.corpus.limits`); the unpacking cap holds for a ``.gz`` side as for an archive.
The two sides must be two different files.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from wordorder.corpus.archive import archive_type, member_path, safe_extract
from wordorder.corpus.base import (
    COMMON_KEYS,
    Source,
    check_keys,
    expand,
    iter_file_pairs,
    need_path,
    refuse_same_file,
)
from wordorder.corpus.download import (
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    cached_download,
    check_sha256,
    check_url,
)
from wordorder.corpus.limits import DEFAULT_MAX_DOWNLOAD, parse_size, too_big, unpack_cap
from wordorder.errors import WordorderError
from wordorder.io import locked


class UrlSource(Source):
    """A corpus downloaded from ``http``, ``https`` or ``file`` URLs into the download cache."""

    kind = "url"
    optional = (
        "url",
        "sha256",
        "src",
        "tgt",
        "retries",
        "timeout",
        "max_download_bytes",
        "max_unpacked_bytes",
    )

    def validate(self) -> None:
        spec, where = self.spec, self.where
        for key in ("src", "tgt"):
            if key not in spec:
                raise WordorderError(f"missing key '{key}' in {where}")
        if "url" in spec or "sha256" in spec:  # one archive holding both sides
            check_keys(spec, ("url", "sha256", "src", "tgt"), (*self.optional, *COMMON_KEYS), where)
            check_url(spec["url"], where)
            check_sha256(spec["sha256"], where)
            need_path(spec, "src", where)
            need_path(spec, "tgt", where)
            if spec["src"] == spec["tgt"]:
                _same("'src' and 'tgt'", "name the same member", spec["src"], where)
        else:  # one download per side
            for key in ("src", "tgt"):
                side, side_where = spec[key], f"'{key}' of the {where}"
                if not isinstance(side, Mapping):
                    raise WordorderError(
                        f"'{key}' in {where} must be a member name (with url and sha256 given) "
                        f"or a mapping with its own url and sha256, not {side!r}"
                    )
                check_keys(side, ("url", "sha256"), ("member",), side_where)
                check_url(side["url"], side_where)
                check_sha256(side["sha256"], side_where)
                if "member" in side:
                    need_path(side, "member", side_where)
            src, tgt = spec["src"], spec["tgt"]
            same_sha = check_sha256(src["sha256"], where) == check_sha256(tgt["sha256"], where)
            if src.get("member") == tgt.get("member") and (src["url"] == tgt["url"] or same_sha):
                if src["url"] == tgt["url"]:
                    _same("'src.url' and 'tgt.url'", "give the same file", src["url"], where)
                _same(
                    "'src.sha256' and 'tgt.sha256'",
                    "are equal, so the two files have the same content",
                    f"{src['url']}, {tgt['url']}",
                    where,
                )
        self.retries = spec.get("retries", DEFAULT_RETRIES)
        self.timeout = spec.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 1:
            raise WordorderError(f"'retries' in {where} must be a positive integer")
        if (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, (int, float))
            or self.timeout <= 0
        ):
            raise WordorderError(f"'timeout' in {where} must be a positive number of seconds")
        self.max_download = parse_size(
            spec.get("max_download_bytes", DEFAULT_MAX_DOWNLOAD), "max_download_bytes", where
        )
        self.max_unpacked = (
            parse_size(spec["max_unpacked_bytes"], "max_unpacked_bytes", where)
            if "max_unpacked_bytes" in spec
            else None
        )

    def describe(self, src_lang: str, tgt_lang: str) -> str:
        spec = self.spec
        if "url" in spec:
            return (
                f"{expand(spec['src'], src_lang, tgt_lang)} and "
                f"{expand(spec['tgt'], src_lang, tgt_lang)} in {spec['url']}"
            )
        return " and ".join(
            side["url"]
            + (f" ({expand(side['member'], src_lang, tgt_lang)})" if "member" in side else "")
            for side in (spec["src"], spec["tgt"])
        )

    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        spec = self.spec
        if "url" in spec:
            src = self._file(
                spec["url"], spec["sha256"], expand(spec["src"], src_lang, tgt_lang), cache_dir
            )
            tgt = self._file(
                spec["url"], spec["sha256"], expand(spec["tgt"], src_lang, tgt_lang), cache_dir
            )
        else:
            src, tgt = (
                self._file(
                    side["url"],
                    side["sha256"],
                    expand(side["member"], src_lang, tgt_lang) if "member" in side else None,
                    cache_dir,
                )
                for side in (spec["src"], spec["tgt"])
            )
        # e.g. file:// URLs spelling one file two ways, or members that are links to one file
        refuse_same_file(src, tgt, ("src", "tgt"), self.where)
        return self._capped(iter_file_pairs(src, tgt), src, tgt)

    def _capped(
        self, pairs: Iterator[tuple[str, str]], src: Path, tgt: Path
    ) -> Iterator[tuple[str, str]]:
        """The pairs, stopped where a ``.gz`` side has given more than ``max_unpacked_bytes``
        (by default the archives' cap, 200 times its size): the line reader decompresses it
        as it goes, and a small file can hold gigabytes of text, as an archive can."""
        caps = [unpack_cap(p, self.max_unpacked) if p.suffix == ".gz" else None for p in (src, tgt)]
        if caps == [None, None]:
            yield from pairs
            return
        read = [0, 0]
        for pair in pairs:
            for side, (text, cap) in enumerate(zip(pair, caps)):
                if cap is None:
                    continue
                read[side] += (len(text) if text.isascii() else len(text.encode("utf-8"))) + 1
                if read[side] > cap[0]:
                    raise too_big(
                        f"the compressed file unpacks to more than {cap[1]}",
                        "max_unpacked_bytes",
                        (src, tgt)[side],
                    )
            yield pair

    def _file(self, url: str, sha256: str, member: str | None, cache_dir: Path) -> Path:
        """The local file to read: the download itself, or one member of it once unpacked."""
        sha256 = sha256.strip().lower()
        download = cached_download(
            url, sha256, cache_dir, self.retries, self.timeout, self.max_download
        )
        if member is None:
            return _readable(download)
        unpacked = download.parent / "unpacked"
        with locked(download.parent):  # the other side's fetch job may be unpacking it too
            if not unpacked.is_dir():
                safe_extract(download, unpacked, self.max_unpacked)
        return member_path(unpacked, member, download)


def _same(keys: str, verb: str, value: str, where: str) -> None:
    raise WordorderError(
        f"{keys} of the {where} {verb} ({value}): both sides would be one text",
        hint="the source and the target side of a parallel corpus are two files, one per language",
    )


def _readable(download: Path) -> Path:
    """A path the line reader decompresses if the download is gzip but not named ``.gz``."""
    kind = archive_type(download)
    if kind in ("zip", "tar"):
        raise WordorderError(
            "this download is an archive: say which file in it to use",
            path=download,
            hint="add 'member: PATH-INSIDE-THE-ARCHIVE' to the side",
        )
    if kind == "gzip" and download.suffix != ".gz":
        alias = download.with_name(download.name + ".gz")
        if not alias.exists():
            try:
                os.symlink(download.name, alias)
            except FileExistsError:
                pass
        return alias
    return download
