"""Further references of a test set (``extra_refs``): NIST OpenMT sets come with four.

A test set with a source of its own may list more reference files beside its ``tgt``::

    mt03: {kind: manual, src: nist/mt03.zh, tgt: nist/mt03.en0,
           extra_refs: [nist/mt03.en1, nist/mt03.en2, nist/mt03.en3], ...}

Each is line-aligned with the test set (which is used whole, so line i of every reference
belongs to sentence i). The ``reference`` step checks and normalises one of them as the first
reference is (control characters, line length, no empty lines, the same line count) and the
scores use them all (sacreBLEU and multi-bleu.perl take several references).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wordorder.corpus.base import MAX_LINE_CHARS, check_line, local_path, need_path
from wordorder.errors import WordorderError
from wordorder.io import atomic_open, iter_lines, read_lines
from wordorder.text.normalize import normalize_line

KEY = "extra_refs"


def extra_refs(spec: Mapping[str, Any], where: str) -> list[str]:
    """The extra reference paths of a test-set spec (empty when it has none); checks their form."""
    refs = spec.get(KEY, [])
    if not isinstance(refs, list) or not all(isinstance(r, str) and r.strip() for r in refs):
        raise WordorderError(f"'{KEY}' in {where} must be a list of file paths, not {refs!r}")
    for ref in refs:
        need_path({KEY: ref}, KEY, where)
    if refs and "holdout" in spec:
        raise WordorderError(
            (
                f"'{KEY}' in {where}: a held-out set is drawn from the training "
                "corpus and has one reference"
            ),
            hint="give extra references only to a test set with its own files",
        )
    return refs


def without_extra_refs(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The spec as the corpus source sees it (extra references are the scoring's business)."""
    return spec if KEY not in spec else {k: v for k, v in spec.items() if k != KEY}


def prepare_reference(
    spec: Mapping[str, Any], index: int, src_lang: str, tgt_lang: str, first: Path, output: Path
) -> int:
    """Write the ``index``-th extra reference (0-based) of a test set, checked against the first
    reference ``first`` (the selected, normalised ``tgt`` side); returns its line count."""
    refs = extra_refs(spec, "the test set")
    if not 0 <= index < len(refs):
        raise WordorderError(
            f"the test set has {len(refs)} extra references, not a number {index + 1}"
        )
    path = local_path(refs[index], src_lang, tgt_lang)
    if not path.is_file():
        hint = (
            f"how to obtain {spec['name']}: {spec['instructions']}"
            if "instructions" in spec
            else "fix the path in extra_refs, or remove it"
        )
        raise WordorderError(
            f"extra reference {index + 2} of the test set is not in place: {path}", hint=hint
        )
    n = len(read_lines(first))
    lines = []
    for number, line in enumerate(iter_lines(path, MAX_LINE_CHARS), start=1):
        line = normalize_line(check_line(line, path, number))
        if not line.strip():
            raise WordorderError(
                "empty reference line",
                path=path,
                line=number,
                hint="every test sentence needs a sentence in every reference file",
            )
        lines.append(line)
    if len(lines) != n:
        raise WordorderError(
            f"this reference has {len(lines)} lines but the test set has {n}",
            path=path,
            hint="every reference must have one line per test sentence, in the same order",
        )
    with atomic_open(output) as f:
        f.writelines(line + "\n" for line in lines)
    return n


def read_references(paths: Sequence[str | Path], n: int) -> list[list[str]]:
    """Prepared extra references (from :func:`prepare_reference`), each
    checked to have ``n`` lines."""
    out = []
    for path in paths:
        lines = read_lines(path)
        if len(lines) != n:
            raise WordorderError(
                f"this reference has {len(lines)} lines but the test set has {n}",
                path=path,
                hint="delete it and rerun: the reference step writes it from the config's file",
            )
        out.append(lines)
    return out
