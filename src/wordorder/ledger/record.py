"""Adding a finished run to the ledger: its record, its files, and the manifest's check that it
read the same inputs as every run before it (see :mod:`wordorder.ledger`)."""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.evaluate.cost import FOOTER
from wordorder.io import locked
from wordorder.ledger.files import (
    digest_json,
    gzip_copy,
    publish_folder,
    read_json,
    sha256_file,
    write_json,
)

VERSION = 1
RUNS = "runs"
MANIFEST = "manifest.json"
RECORD = "record.json"
INPUTS = "inputs"
NAME = re.compile(r"\A(?P<pair>[^./]+)\.(?P<variant>[^/]+)\.seed(?P<seed>\d+)\Z")


def run_name(pair: str, variant: str, seed: int | str) -> str:
    """``<pair>.<variant>.seed<n>``: a run's folder in ``<ledger>/runs``."""
    return f"{pair}.{variant}.seed{seed}"


def ledgered_runs(ledger: str | Path | None) -> frozenset[str]:
    """The names of the runs the ledger holds (those with a record; a folder without one is an
    interrupted copy, which adding the run again replaces)."""
    if not ledger:
        return frozenset()
    runs = Path(ledger) / RUNS
    if not runs.is_dir():
        return frozenset()
    return frozenset(
        p.name for p in runs.iterdir() if NAME.match(p.name) and (p / RECORD).is_file()
    )


def input_key(path: str | Path, root: str | Path) -> str:
    """A path as the manifest names it: relative to the experiment's results folder, so that a
    checkout with another ``results:`` root names the same file the same way."""
    rel = os.path.relpath(Path(path).resolve(), Path(root).resolve())
    return Path(path).name if rel.startswith("..") else rel


@dataclass
class Translation:
    """One test set's decoding of a run: its outputs and its job's benchmark and log."""

    hyp: Path
    hyp_tok: Path
    benchmark: Path | None = None
    log: Path | None = None


@dataclass
class Run:
    """What :func:`add_run` records. ``config``: the settings that define the run (model, train
    and decode options, seed); ``inputs``: label -> path of every file it read."""

    pair: str
    variant: str
    seed: int
    config: Mapping[str, Any]
    inputs: Mapping[str, Path]
    metrics: Path
    train_log: Path | None
    translations: Mapping[str, Translation]
    threads: Mapping[str, int] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return run_name(self.pair, self.variant, self.seed)


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _footer(log: Path | None) -> dict[str, float]:
    """Wall and CPU seconds from a ``wordorder`` job log's last line (:mod:`..evaluate.cost`)."""
    if log is None or not log.is_file():
        return {}
    matches = FOOTER.findall(log.read_text(encoding="utf-8", errors="replace"))
    if not matches:
        return {}
    _, wall, memory, cpu = matches[-1]
    return {"wall_s": float(wall), "cpu_s": float(cpu), "peak_memory_mb": float(memory)}


def _summary(metrics: Path) -> dict[str, Any]:
    """The training's summary record (the metrics log's last line, written when it finished)."""
    lines = metrics.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1]) if lines else {}
    if "summary" not in last:
        raise WordorderError(
            "the metrics log has no summary record: the training did not finish",
            path=metrics,
            hint="only finished runs go into the ledger: let the training end, then rerun",
        )
    return dict(last["summary"])


def provenance(run: Run) -> dict[str, Any]:
    """Where and how the run was made: commit (and whether the work tree had changes), CPU,
    threads, device and precision, library versions, wall and CPU time."""
    summary = _summary(run.metrics)
    # A copy of the tree elsewhere (the GPU machine's) is told its commit, and that wins: such
    # a copy can hold a stale .git of its own (2026-11-29: HEAD of the previous day, "changed").
    told = os.environ.get("WORDORDER_COMMIT")
    status = None if told else _git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": told or _git("rev-parse", "HEAD"),
        "work_tree_changed": bool(status) if status is not None else None,
        "cpu_model": _cpu_model(),
        "cpus": os.cpu_count(),
        "host": platform.node(),
        "threads": dict(run.threads),
        "device": summary.get("device"),
        "precision": summary.get("precision"),
        "torch": _version("torch"),
        "wordorder": _version("wordorder"),
        "python": sys.version.split()[0],
        "train": {k: summary.get(k) for k in ("steps", "wall_s", "cpu_s", "params", "stop_reason")}
        | {"job": _footer(run.train_log)},
        "translate": {t: _footer(x.log) for t, x in run.translations.items()},
    }


def check_manifest(
    known: Mapping[str, str], digests: Mapping[str, str], paths: Mapping[str, Path], manifest: Path
) -> None:
    """Every input the manifest knows must have the manifest's digest: else one error naming
    the file (the first differing one)."""
    for key, digest in digests.items():
        if key in known and known[key] != digest:
            raise WordorderError(
                f"this input differs from the one the ledger's runs read (sha256 {digest[:12]}… "
                f"here, {known[key][:12]}… in {manifest})",
                path=paths[key],
                hint="rebuild it as the ledger's runs had it (same data, config and code), or "
                "record this experiment in a new ledger folder",
            )


def _store(run: Run, staging: Path) -> dict[str, str]:
    """The run's files, gzipped where they are text of some size; -> name: sha256."""
    files = {"metrics.jsonl.gz": run.metrics}
    if run.train_log is not None and run.train_log.is_file():
        files["train.log.gz"] = run.train_log
    for testset, t in run.translations.items():
        files[f"{testset}.hyp.gz"] = t.hyp
        files[f"{testset}.hyp.tok.gz"] = t.hyp_tok
        if t.log is not None and t.log.is_file():
            files[f"{testset}.translate.log.gz"] = t.log
    stored = {}
    for name, source in files.items():
        gzip_copy(source, staging / name)
        stored[name] = sha256_file(staging / name)
    for testset, t in run.translations.items():
        if t.benchmark is not None and t.benchmark.is_file():
            name = f"{testset}.translate.tsv"
            (staging / name).write_bytes(t.benchmark.read_bytes())
            stored[name] = sha256_file(staging / name)
    return stored


def add_run(ledger: Path, experiment: str, root: Path, run: Run) -> dict[str, Any]:
    """Record a finished run in ``ledger``: refused if one of its inputs differs from the
    manifest's digest or the run is already there; inputs new to the manifest are added. The
    run's folder appears whole (written aside, renamed into place). -> the record."""
    digests = {input_key(p, root): sha256_file(p) for p in run.inputs.values()}
    paths = {input_key(p, root): Path(p) for p in run.inputs.values()}
    manifest_path = ledger / MANIFEST
    with locked(ledger):
        manifest: dict[str, Any] = (
            read_json(manifest_path)
            if manifest_path.is_file()
            else {"version": VERSION, "experiment": experiment, "inputs": {}}
        )
        if manifest.get("experiment") != experiment:
            raise WordorderError(
                f"the ledger is experiment {manifest.get('experiment')!r}'s, not {experiment!r}",
                path=manifest_path,
                hint="give each experiment its own ledger folder (config key ledger)",
            )
        check_manifest(manifest["inputs"], digests, paths, manifest_path)
        target = ledger / RUNS / run.name
        if (target / RECORD).is_file():
            raise WordorderError(
                "this run is already in the ledger",
                path=target,
                hint="a ledger run is never replaced: `git rm -r` its folder to train it again",
            )
        (ledger / RUNS).mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{run.name}.", dir=ledger / RUNS))
        try:
            record = {
                "version": VERSION,
                "experiment": experiment,
                "run": {"pair": run.pair, "variant": run.variant, "seed": run.seed},
                "config": dict(run.config),
                "config_digest": digest_json(run.config),
                "inputs": {k: digests[k] for k in sorted(digests)},
                "testsets": sorted(run.translations),
                "provenance": provenance(run),
                "files": _store(run, staging),
            }
            write_json(staging / RECORD, record)
            os.chmod(staging, 0o755)
            if target.exists():  # a folder without a record: an interrupted copy
                shutil.rmtree(target)
            publish_folder(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        store_inputs(ledger, paths, digests)
        manifest["inputs"] = {**manifest["inputs"], **digests}
        write_json(manifest_path, manifest)
    return record


def stored_input(ledger: Path, key: str) -> Path:
    """Where the ledger keeps the content of the input named ``key`` (gzipped)."""
    return ledger / INPUTS / f"{key}.gz"


def store_inputs(ledger: Path, paths: Mapping[str, Path], digests: Mapping[str, str]) -> None:
    """Keep every input the ledger does not hold yet: a run on another machine then reads the
    same files instead of rebuilding them (the word alignments, and with them the BTG and gold
    preorders, differ from one eflomal run to the next: it cannot be seeded)."""
    for key, path in paths.items():
        target = stored_input(ledger, key)
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            gzip_copy(path, target)
