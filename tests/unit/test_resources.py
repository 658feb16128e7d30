"""What jobs ask a cluster for: memory from their input size, GPUs from the device."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wordorder.resources import (
    CUDA_HOST_MB,
    HEADROOM,
    MEMORY,
    RETRY_GROWTH,
    gpus,
    mem_mb,
    memory_mb,
)

REPO = Path(__file__).resolve().parents[2]


class Input(list):
    """What Snakemake hands a resource function as ``input``: the files and their total size."""

    def __init__(self, size_mb: float) -> None:
        super().__init__()
        self.size_mb = size_mb


def test_memory_grows_with_input_and_attempt_and_rounds_up_to_100():
    assert HEADROOM == 1.5 and RETRY_GROWTH == 1.5
    assert memory_mb(100, 4.0, 100) == 800  # (100 + 400) x 1.5 = 750 -> 800
    assert memory_mb(100, 4.0, 100, attempt=2) == 1200  # 750 x 1.5 = 1125 -> 1200
    assert memory_mb(100, 4.0, 0) == 200
    sizes = [memory_mb(200, 16.0, x) for x in (0, 10, 100, 1000)]
    assert sizes == sorted(sizes) and sizes[-1] == 24300  # eflomal on ~1 GB of tokens: 24 GB


def test_rule_resource_reads_the_jobs_input_size_and_adds_cuda_context():
    base, slope = MEMORY["train"]
    cpu, gpu = mem_mb("train", "cpu"), mem_mb("train", "cuda:0")
    assert cpu(None, Input(700), 1) == memory_mb(base, slope, 700)
    assert gpu(None, Input(700), 1) == memory_mb(base + CUDA_HOST_MB, slope, 700)
    assert mem_mb("no_such_rule")(None, Input(5000), 1) == 1500  # the default ignores the input


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
