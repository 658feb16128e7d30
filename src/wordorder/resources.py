"""What a job asks the cluster for (memory from the size of its input, GPUs from the device), and
what it used (peak memory, CPU time: every ``wordorder`` command logs them last).

Snakemake evaluates ``mem_mb`` when it schedules the job, with the job's real input files, so a
4.5M-pair WMT corpus asks for what it needs and the demo asks little; each retry (the SLURM
profile retries once) asks for half as much again. The table is measured: peak RSS of each
rule's job = ``base`` + ``slope`` x input MB, fitted on two corpus sizes by
``benchmarks/bench_memory.py`` (every ``wordorder`` command logs its peak memory last);
:data:`HEADROOM` covers what the fit does not see (larger vocabularies, longer sentences).
"""

from __future__ import annotations

import math
import os
import resource
from collections.abc import Callable
from typing import Any

#: rule -> (base MB, MB per MB of input). The fits of benchmarks/bench_memory.py on 100k and
#: 400k en-ja pairs (peak RSS on the CPU; 2026-11-24), rounded up.
MEMORY: dict[str, tuple[float, float]] = {
    "tokenize": (100, 0.0),  # streams
    "split": (100, 4.0),  # holds the tokenized training corpus
    "select": (100, 3.0),
    "subword_train": (100, 5.0),  # sentencepiece on the (sampled) training sentences
    "subword_encode": (100, 0.2),  # streams
    "align": (200, 16.0),  # eflomal over all splits at once
    "align_split": (100, 0.1),
    "preorder_gold": (400, 15.0),
    "word_classes": (400, 30.0),
    "train": (500, 12.0),  # the whole training corpus as token ids, plus the model
    # Not fitted (model-bound; peaks seen on the demo and a 2,000-line parse): a fixed ask.
    "parse_shard": (1500, 0.0),  # spaCy en 370 MB, GiNZA ja 910 MB; stanza needs more
    "translate": (1500, 0.0),  # the demo's small model: 760 MB
    "btg_train": (1500, 0.0),  # capped by preorder.btg.max_sentences; demo 630 MB
    "btg_apply": (1500, 0.0),
    "rvnn_train": (2000, 0.0),  # capped by preorder.rvnn.max_sentences; demo 990 MB
    "rvnn_apply": (2000, 0.0),
}
DEFAULT = (1000.0, 0.0)
HEADROOM = 1.5  # real corpora have larger vocabularies and longer sentences than the fit's
RETRY_GROWTH = 1.5
# Host memory of the CUDA context and libraries. Seen on an H100 (torch 2.11, 2026-11-26): a whole
# Transformer-base training process on Multi30k peaked at 2,286 MB (asked: 4,700 MB).
CUDA_HOST_MB = 2500


def memory_mb(base: float, slope: float, input_mb: float, attempt: int = 1) -> int:
    """MB to ask for, rounded up to 100 MB."""
    need = (base + slope * input_mb) * HEADROOM * RETRY_GROWTH ** (max(attempt, 1) - 1)
    return int(math.ceil(need / 100.0) * 100)


def mem_mb(rule: str, device: Any = None) -> Callable[..., int]:
    """The ``mem_mb`` resource of a rule: a function of the job's input and attempt, of the
    attempt alone where the rule's fit has no slope (plus the CUDA context when ``device`` is
    CUDA)."""
    base, slope = MEMORY.get(rule, DEFAULT)
    base += CUDA_HOST_MB if gpus(device) else 0
    if not slope:  # no input parameter: Snakemake then knows the value before the input exists

        def fixed(wildcards: Any, attempt: int) -> int:
            return memory_mb(base, 0.0, 0.0, attempt)

        return fixed

    def resource(wildcards: Any, input: Any, attempt: int) -> int:  # noqa: A002 - Snakemake's name
        return memory_mb(base, slope, input_mb(input), attempt)

    return resource


def input_mb(files: Any) -> float:
    """MB of a job's input files. A missing file raises FileNotFoundError naming it, which
    Snakemake takes for "not known until the input exists" (a dry run's ``<TBD>``).

    Local files by ``os.stat``: Snakemake's ``input.size_mb`` runs an event loop per call (~1 ms,
    2,000 calls in the union's dry run) and, called inside Snakemake's own loop, gives up with
    ``<TBD>`` even where the files exist. Storage-plugin files keep Snakemake's way."""
    if any(getattr(f, "is_storage", False) for f in files):
        return float(files.size_mb)
    return sum(os.stat(f).st_size for f in files) / 1024**2


def gpus(device: Any, count: int = 1) -> int:
    """GPUs a job asks for: ``count`` when its device is CUDA (``cuda``, ``cuda:1``), else none.

    ``auto`` asks for none: a cluster job only gets a GPU it asks for, so full-scale configs say
    ``cuda``."""
    return count if str(device).startswith("cuda") else 0


def peak_memory_mb() -> float:
    """Peak resident memory of this process or of the largest child it waited for (eflomal)."""
    kib = max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    )
    return kib / 1024  # Linux reports KiB


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and of the children it waited for."""
    return sum(
        u.ru_utime + u.ru_stime
        for u in (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
    )
