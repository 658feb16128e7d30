"""Sources on the local disk: ``local`` files and ``manual`` (licensed, placed by hand) corpora.

Two layouts are read:

- two aligned files, ``src`` and ``tgt`` (``.gz`` allowed; ``{src}``/``{tgt}`` placeholders);
- one or more files holding both sides as columns of each line (``files``, ``separator``,
  ``columns``), as ASPEC (`` ||| ``) and CzEng (tab) are distributed. ``columns`` maps a
  language code to its 0-based field, so one definition serves both directions of a pair;
  ``files`` may hold glob patterns, expanded in sorted order.
"""

from __future__ import annotations

import glob
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from wordorder.corpus.base import (
    COMMON_KEYS,
    MAX_LINE_CHARS,
    Source,
    check_keys,
    check_line,
    iter_file_pairs,
    local_path,
    need_path,
    need_str,
    refuse_same_file,
)
from wordorder.errors import WordorderError
from wordorder.io import iter_lines

_TWO_FILES = ("src", "tgt")
_COLUMNS = ("files", "columns", "separator")


class LocalSource(Source):
    """``{kind: local, src: PATH, tgt: PATH}`` or ``{kind: local, files, columns, separator}``."""

    kind = "local"
    optional: ClassVar[tuple[str, ...]] = (*_TWO_FILES, *_COLUMNS)
    own: tuple[str, ...] = ()  # keys of a subclass, allowed in both layouts

    def validate(self) -> None:
        spec, where = self.spec, self.where
        allowed = (*COMMON_KEYS, *self.own)
        if "files" in spec or "columns" in spec:
            check_keys(spec, ("files", "columns"), (*allowed, "separator"), where)
            files = spec["files"]
            files = [files] if isinstance(files, str) else files
            if (
                not isinstance(files, list)
                or not files
                or not all(isinstance(f, str) and f.strip() for f in files)
            ):
                raise WordorderError(
                    f"'files' in {where} must be a path or a list of paths, not {files!r}"
                )
            for f in files:
                need_path({"files": f}, "files", where)
            self.files = files
            columns = spec["columns"]
            if (
                not isinstance(columns, Mapping)
                or len(columns) != 2
                or not all(
                    isinstance(i, int) and not isinstance(i, bool) and i >= 0
                    for i in columns.values()
                )
            ):
                raise WordorderError(
                    f"'columns' in {where} must map the pair's two language codes to 0-based field "
                    f"numbers, e.g. {{ja: 3, en: 4}}, not {columns!r}"
                )
            (a, i), (b, j) = columns.items()
            if i == j:
                raise WordorderError(
                    f"'columns' in {where} gives {a} and {b} the same field {i}",
                    hint="each language of the pair has its own column",
                )
            self.separator = spec.get("separator", "\t")
            if not isinstance(self.separator, str) or not self.separator:
                raise WordorderError(f"'separator' in {where} must be a non-empty string")
        else:
            check_keys(spec, _TWO_FILES, allowed, where)
            need_path(spec, "src", where)
            need_path(spec, "tgt", where)
            # the same file for every pair; links are checked on fetch
            if spec["src"] == spec["tgt"]:
                refuse_same_file(Path(spec["src"]), Path(spec["tgt"]), _TWO_FILES, where)

    def paths(self, src_lang: str, tgt_lang: str) -> list[Path]:
        """The files to read (after placeholder and glob expansion; globs matching nothing stay)."""
        if "files" not in self.spec:
            return [local_path(self.spec[k], src_lang, tgt_lang) for k in _TWO_FILES]
        found: list[Path] = []
        for pattern in self.files:
            path = local_path(pattern, src_lang, tgt_lang)
            matches = sorted(glob.glob(str(path))) if glob.has_magic(str(path)) else []
            if matches:
                found.extend(Path(m) for m in matches)
            else:
                found.append(path)  # reported as missing by the reader
        return found

    def describe(self, src_lang: str, tgt_lang: str) -> str:
        return " and ".join(map(str, self.paths(src_lang, tgt_lang)))

    def local_files(self, src_lang: str, tgt_lang: str) -> list[Path]:
        return self.paths(src_lang, tgt_lang)

    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        paths = self.paths(src_lang, tgt_lang)
        if "files" not in self.spec:
            src_path, tgt_path = paths  # without "files", the two sides' files
            refuse_same_file(src_path, tgt_path, _TWO_FILES, self.where)
            return iter_file_pairs(*paths)
        return self._columns(paths, src_lang, tgt_lang)

    def _columns(
        self, paths: list[Path], src_lang: str, tgt_lang: str
    ) -> Iterator[tuple[str, str]]:
        columns = self.spec["columns"]
        missing = [lang for lang in (src_lang, tgt_lang) if lang not in columns]
        if missing:
            raise WordorderError(
                f"'columns' in {self.where} has no field for {', '.join(missing)}",
                hint=f"it names {', '.join(columns)}; the pair is {src_lang}-{tgt_lang}",
            )
        i, j = columns[src_lang], columns[tgt_lang]
        need = max(i, j) + 1
        for path in paths:  # a line holds several fields: allow it their length (CzEng has 6)
            for number, line in enumerate(iter_lines(path, 8 * MAX_LINE_CHARS), start=1):
                fields = line.split(self.separator)
                if len(fields) < need:
                    raise WordorderError(
                        f"the line has {len(fields)} field(s) separated by {self.separator!r}, "
                        f"but column {need - 1} is read",
                        path=path,
                        line=number,
                        hint="check 'separator' and 'columns' against the file's format",
                    )
                yield (
                    check_line(fields[i].strip(), path, number),
                    check_line(fields[j].strip(), path, number),
                )


class ManualSource(LocalSource):
    """A licensed corpus placed by hand (ASPEC, LDC/NIST, CzEng): ``local`` plus ``name`` and
    ``instructions``.

    The pipeline cannot download these, so when a file is missing the error lists every
    missing file with its absolute path and repeats the ``instructions`` on how to obtain it.
    """

    kind = "manual"
    optional = (*LocalSource.optional, "name", "instructions")
    own = ("name", "instructions")

    def validate(self) -> None:
        for key in self.own:
            if key not in self.spec:
                raise WordorderError(
                    f"missing key '{key}' in {self.where}",
                    hint="a manual source says what the corpus is and how to obtain it",
                )
            need_str(self.spec, key, self.where)
        super().validate()

    def pairs(self, src_lang: str, tgt_lang: str, cache_dir: Path) -> Iterator[tuple[str, str]]:
        paths = self.paths(src_lang, tgt_lang)
        labels = (
            [f" ({src_lang} side)", f" ({tgt_lang} side)"]
            if "files" not in self.spec
            else [""] * len(paths)
        )
        missing = [f"{p}{label}" for p, label in zip(paths, labels) if not p.is_file()]
        if missing:
            raise WordorderError(
                f"the {self.spec['name']} corpus is not in place; put the file(s) here: "
                + "; ".join(missing),
                hint=f"how to obtain {self.spec['name']}: {self.spec['instructions']}",
            )
        return super().pairs(src_lang, tgt_lang, cache_dir)
