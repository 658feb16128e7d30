"""The route table of docs/gpu.md ("Routes tried on a GPU") and the ``auto`` settings that follow
it (:mod:`wordorder.gpu_table`): a route whose row has not passed the GPU checks with the
running torch stays off under ``auto``, saying why; ``true`` still runs it."""

from __future__ import annotations

from pathlib import Path

import torch

from wordorder import gpu_table
from wordorder.models import build_model
from wordorder.train.graphs import use_graphs
from wordorder.train.stacked import use_stacks

DOC = Path(__file__).resolve().parents[2] / "docs" / "gpu.md"
CUDA = torch.device("cuda")


def doc_rows() -> dict[tuple[str, str, str], str]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("## Routes tried on a GPU")
    end = text.find("\n## ", start + 1)
    rows = {}
    for line in text[start : end if end > 0 else None].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if (
            line.startswith("| ")
            and len(cells) == 4
            and cells[0] in ("eager", "stacked", "ddp", "graphed", "decode-graphed")
        ):
            rows[cells[0], cells[1], cells[2]] = cells[3]
    return rows


def test_the_doc_table_is_the_data():
    rows = doc_rows()
    assert sorted(rows) == sorted(gpu_table.ROWS)
    for key, cell in rows.items():
        passed = gpu_table.PASSED.get(key)
        want = f"{passed[0]}, torch {passed[1]}" if passed else "not yet run"
        assert cell == want, key
    assert set(gpu_table.PASSED) <= set(gpu_table.ROWS)


def test_auto_follows_the_table(monkeypatch, capsys):
    model = build_model({"preset": "tiny"}, 40)
    monkeypatch.setattr(torch, "__version__", gpu_table.PINNED_TORCH + "+cu130")
    monkeypatch.setattr(gpu_table, "PASSED", {})
    assert use_graphs("auto", CUDA, model, 1, torch.bfloat16) is False
    assert use_stacks("auto", CUDA, 1, False, False, "bf16", "transformer") is False
    said = capsys.readouterr().out
    assert "graphed bf16 transformer has not passed" in said and "never run on one" in said
    assert "train.stack_parameters auto: unstacked (stacked bf16 transformer" in said
    assert use_graphs(True, CUDA, model, 1, torch.bfloat16) is True  # true still runs it
    assert use_stacks(True, CUDA, 1, False, False, "bf16", "transformer") is True
    pinned = ("2026-12-01", gpu_table.PINNED_TORCH)
    rows = {("graphed", "bf16", "transformer"): pinned, ("stacked", "bf16", "transformer"): pinned}
    monkeypatch.setattr(gpu_table, "PASSED", rows)
    assert use_graphs("auto", CUDA, model, 1, torch.bfloat16) is True
    assert use_stacks("auto", CUDA, 1, False, False, "bf16", "transformer") is True
    # a row passed on another torch does not count
    monkeypatch.setattr(torch, "__version__", "2.14.0+cu130")
    assert use_graphs("auto", CUDA, model, 1, torch.bfloat16) is False
    # the GPU image's own torch (not the pin) where its rows passed on it
    monkeypatch.setattr(torch, "__version__", "2.11.0+cu130")
    monkeypatch.setattr(gpu_table, "PASSED", {("graphed", "bf16", "transformer"): ("d", "2.11.0")})
    assert use_graphs("auto", CUDA, model, 1, torch.bfloat16) is True


def test_a_row_counts_for_the_torch_it_passed_on(monkeypatch):
    monkeypatch.setattr(gpu_table, "PASSED", {("graphed", "bf16", "transformer"): ("d", "2.11.0")})
    assert gpu_table.tried("graphed", "bf16", "transformer", "2.11.0") is True
    assert gpu_table.tried("graphed", "bf16", "transformer", "2.13.0") is False
    assert gpu_table.tried("graphed", "fp32", "transformer", "2.11.0") is False
    monkeypatch.setattr(torch, "__version__", "2.13.0+cpu")
    why = gpu_table.untried("graphed", "bf16", "transformer")
    assert "with torch 2.13.0 (last passed with torch 2.11.0 on d;" in why
