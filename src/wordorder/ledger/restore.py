"""Restoring a ledger run's outputs where the DAG expects a local run's (see
:mod:`wordorder.ledger`): its metrics log, and per test set its translations and decoding
benchmark; its job logs go under the logs folder, where the cost table counts them."""

from __future__ import annotations

import gzip
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.io import atomic_open
from wordorder.ledger.files import digest_json, gunzip_to, read_json, sha256_file
from wordorder.ledger.record import (
    MANIFEST,
    RECORD,
    RUNS,
    check_manifest,
    input_key,
    stored_input,
)


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(data, Mapping):
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def config_difference(recorded: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """The dotted keys whose values differ, as ``key: recorded -> current`` (sorted)."""
    a, b = _flat(recorded), _flat(current)
    return [
        f"{k}: {a.get(k, '(absent)')!r} -> {b.get(k, '(absent)')!r}"
        for k in sorted(set(a) | set(b))
        if a.get(k, "(absent)") != b.get(k, "(absent)")
    ]


def load_record(ledger: Path, name: str, config: Mapping[str, Any]) -> tuple[Path, dict]:
    """The run's folder and record, refused if the record was made with another configuration
    (a ledger run is the run of the settings it was trained with, never of changed ones)."""
    folder = ledger / RUNS / name
    record = read_json(folder / RECORD)
    if record.get("config_digest") != digest_json(config):
        changes = config_difference(record.get("config", {}), config)
        shown = "; ".join(changes[:4]) + (
            f"; and {len(changes) - 4} more" if len(changes) > 4 else ""
        )
        raise WordorderError(
            f"the ledger's run {name} was made with other settings ({shown or 'digest differs'})",
            path=folder / RECORD,
            hint="restore the settings the ledger's runs were made with, or point `ledger:` at a "
            "new folder for the changed experiment",
        )
    return folder, record


def _verified(folder: Path, record: Mapping[str, Any], name: str) -> Path:
    """A stored file, refused if its bytes are not those the record lists."""
    path = folder / name
    expected = record.get("files", {}).get(name)
    if expected is None:
        raise WordorderError(f"the record lists no file {name}", path=folder / RECORD)
    if sha256_file(path) != expected:
        raise WordorderError(
            "this ledger file differs from the digest its record lists (edited or damaged)",
            path=path,
            hint="restore it with `git checkout -- <file>`",
        )
    return path


def _log(folder: Path, record: Mapping[str, Any], name: str, target: Path) -> None:
    if name in record.get("files", {}):
        gunzip_to(_verified(folder, record, name), target)


def restore_training(
    ledger: Path, name: str, config: Mapping[str, Any], metrics: Path, log_dir: Path | None
) -> None:
    """The run's metrics log (and its training job's log into ``log_dir``)."""
    folder, record = load_record(ledger, name, config)
    gunzip_to(_verified(folder, record, "metrics.jsonl.gz"), metrics)
    if log_dir is not None:
        _log(folder, record, "train.log.gz", log_dir / f"{name}.train.log")


def restore_translation(
    ledger: Path,
    name: str,
    config: Mapping[str, Any],
    testset: str,
    hyp: Path,
    hyp_tok: Path,
    benchmark: Path | None,
    log_dir: Path | None,
    references: Mapping[str, Path] | None = None,
    root: Path | None = None,
) -> None:
    """One test set's translations of the run, after checking that ``references`` (the test
    set's references in this checkout) are those the ledger's runs were scored against."""
    folder, record = load_record(ledger, name, config)
    if testset not in record.get("testsets", []):
        raise WordorderError(
            f"the ledger's run {name} has no translations of test set {testset!r} "
            f"(it has {', '.join(record.get('testsets', [])) or 'none'})",
            path=folder / RECORD,
            hint="decode that test set on a machine with the run's checkpoint, or drop it",
        )
    if references:
        manifest = ledger / MANIFEST
        known = read_json(manifest).get("inputs", {})
        keys = {input_key(p, root or Path(".")): Path(p) for p in references.values()}
        check_manifest(known, {k: sha256_file(p) for k, p in keys.items()}, keys, manifest)
    gunzip_to(_verified(folder, record, f"{testset}.hyp.gz"), hyp)
    gunzip_to(_verified(folder, record, f"{testset}.hyp.tok.gz"), hyp_tok)
    if benchmark is not None:
        stored = _verified(folder, record, f"{testset}.translate.tsv").read_bytes()
        with atomic_open(benchmark, "wb") as f:
            f.write(stored)
    if log_dir is not None:
        _log(folder, record, f"{testset}.translate.log.gz", log_dir / f"{name}.{testset}.log")


def stored_inputs(ledger: str | Path | None) -> list[str]:
    """The inputs the ledger can give back: in its manifest, with their content stored."""
    if not ledger or not (Path(ledger) / MANIFEST).is_file():
        return []
    known = read_json(Path(ledger) / MANIFEST).get("inputs", {})
    return sorted(k for k in known if stored_input(Path(ledger), k).is_file())


def restore_input(ledger: Path, key: str, output: Path) -> None:
    """An input of the ledger's runs, as they read it (its digest checked against the
    manifest's before it is put in place)."""
    known = read_json(ledger / MANIFEST).get("inputs", {})
    if key not in known:
        raise WordorderError(f"the ledger's manifest names no input {key}", path=ledger / MANIFEST)
    data = gzip.decompress(stored_input(ledger, key).read_bytes())  # inputs: a few MB
    if hashlib.sha256(data).hexdigest() != known[key]:
        raise WordorderError(
            "this stored input differs from its digest in the manifest (edited or damaged)",
            path=stored_input(ledger, key),
            hint="restore it with `git checkout -- <file>`",
        )
    with atomic_open(output, "wb") as f:
        f.write(data)
