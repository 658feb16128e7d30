"""What jobs ask a cluster for: memory from their input size, GPUs from the device."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from wordorder.resources import (
    CUDA_HOST_MB,
    HEADROOM,
    MEMORY,
    RETRY_GROWTH,
    gpus,
    input_mb,
    mem_mb,
    memory_mb,
)

REPO = Path(__file__).resolve().parents[2]


def input_of(folder: Path, *sizes_mb: float) -> list[str]:
    """A job's input as Snakemake hands it to a resource function: its files' paths."""
    files = []
    for i, size in enumerate(sizes_mb):
        path = folder / f"in{i}"
        path.write_bytes(b"x" * int(size * 1024**2))
        files.append(str(path))
    return files


def test_memory_grows_with_input_and_attempt_and_rounds_up_to_100():
    assert HEADROOM == 1.5 and RETRY_GROWTH == 1.5
    assert memory_mb(100, 4.0, 100) == 800  # (100 + 400) x 1.5 = 750 -> 800
    assert memory_mb(100, 4.0, 100, attempt=2) == 1200  # 750 x 1.5 = 1125 -> 1200
    assert memory_mb(100, 4.0, 0) == 200
    sizes = [memory_mb(200, 16.0, x) for x in (0, 10, 100, 1000)]
    assert sizes == sorted(sizes) and sizes[-1] == 24300  # eflomal on ~1 GB of tokens: 24 GB


def test_rule_resource_reads_the_jobs_input_size_and_adds_cuda_context(tmp_path):
    base, slope = MEMORY["train"]
    files = input_of(tmp_path, 3, 4.5)
    assert input_mb(files) == 7.5
    cpu, gpu = mem_mb("train", "cpu"), mem_mb("train", "cuda:0")
    assert cpu(None, files, 1) == memory_mb(base, slope, 7.5)
    assert gpu(None, files, 2) == memory_mb(base + CUDA_HOST_MB, slope, 7.5, attempt=2)


def test_a_missing_input_is_named_so_snakemake_waits_for_it(tmp_path):
    from snakemake.exceptions import is_file_not_found_error

    files = [*input_of(tmp_path, 1), str(tmp_path / "not-yet")]
    with pytest.raises(FileNotFoundError) as caught:
        mem_mb("align")(None, files, 1)
    assert is_file_not_found_error(caught.value, files)  # Snakemake's test: "<TBD>" in a dry run


def test_a_rule_whose_memory_ignores_its_input_does_not_ask_for_it():
    # without an ``input`` parameter Snakemake knows the value before the input exists
    for rule in ("no_such_rule", "translate", "tokenize"):
        assert "input" not in inspect.signature(mem_mb(rule)).parameters
    assert "input" in inspect.signature(mem_mb("align")).parameters
    assert mem_mb("no_such_rule")(None, 1) == 1500 and mem_mb("no_such_rule")(None, 2) == 2300
    assert mem_mb("translate", "cuda")(None, 1) == memory_mb(1500 + CUDA_HOST_MB, 0, 0)


@pytest.mark.parametrize(
    "device, count, expected",
    [("cuda", 1, 1), ("cuda:1", 1, 1), ("cuda", 4, 4), ("cpu", 4, 0), ("auto", 1, 0), (None, 1, 0)],
)
def test_gpus_only_for_cuda(device, count, expected):
    assert gpus(device, count) == expected


def test_every_rule_asking_for_memory_is_in_the_table():
    named = set()
    for smk in (REPO / "workflow" / "rules").glob("*.smk"):
        named |= set(re.findall(r'mem_mb\("(\w+)"', smk.read_text(encoding="utf-8")))
    assert named and named <= set(MEMORY)
    # the heavy stages all declare it
    assert {
        "split",
        "subword_train",
        "align",
        "word_classes",
        "train",
        "parse_shard",
        "translate",
    } <= named


def test_every_command_logs_its_time_and_peak_memory(caplog, monkeypatch):
    from wordorder.cli import main

    monkeypatch.chdir(REPO)
    with caplog.at_level("INFO", logger="wordorder"):
        assert main(["check-config", "--config", "configs/default.yaml"]) == 0
    line = caplog.records[-1].getMessage()
    match = re.fullmatch(
        r"check-config finished in [\d.]+ s; peak memory (\d+) MB; cpu [\d.]+ s", line
    )
    assert match and 20 < int(match.group(1)) < 4000
