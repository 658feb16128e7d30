"""``train.cuda_graphs``: true, false or auto, and which runs replay from CUDA graphs
(:func:`wordorder.train.graphs.use_graphs`). Decided from the device, the processes, the
precision and the model's family, so it is tested here without a GPU."""

from __future__ import annotations

import pytest
import torch

from wordorder.errors import WordorderError
from wordorder.models import build_model
from wordorder.train.graphs import use_graphs
from wordorder.train.options import TrainOptions

CUDA, CPU = torch.device("cuda"), torch.device("cpu")
BF16 = torch.bfloat16


@pytest.fixture(scope="module")
def models():
    """A Transformer and an RNN; the RNN marked as reading the device inside an update, as a
    model that cannot be captured declares (none of today's can: tests/system/test_capture.py
    counts every variant's host syncs)."""
    rnn = build_model({"preset": "rnn_tiny", "attention": "syntax"}, 40)
    rnn.capture_blocker = "its update reads the device"
    return {"transformer": build_model({"preset": "tiny"}, 40), "rnn": rnn}


def test_false_never_graphs(models):
    for model in models.values():
        for device in (CPU, CUDA):
            assert use_graphs(False, device, model, 1, BF16) is False


@pytest.fixture
def graphs_passed(monkeypatch):
    """The route table as it will read once graphed Transformer updates pass the GPU checks
    with the pinned torch (tests/unit/test_gpu_table.py: auto without that row)."""
    from wordorder import gpu_table

    pinned = (gpu_table.PINNED_TORCH, gpu_table.PINNED_TORCH)
    rows = {("graphed", p, "transformer"): pinned for p in ("fp32", "bf16")}
    monkeypatch.setattr(gpu_table, "PASSED", {**gpu_table.PASSED, **rows})
    monkeypatch.setattr(torch, "__version__", gpu_table.PINNED_TORCH + "+cu130")


def test_auto_graphs_only_where_they_can_be_used(models, capsys, graphs_passed):
    transformer, rnn = models["transformer"], models["rnn"]
    assert use_graphs("auto", CUDA, transformer, 1, BF16) is True
    assert use_graphs("auto", CUDA, transformer, 1, None) is True  # float32
    assert use_graphs("auto", CPU, transformer, 1, BF16) is False
    assert capsys.readouterr().out == ""  # on a CPU there is nothing to say
    assert use_graphs("auto", CUDA, rnn, 1, BF16) is False
    assert use_graphs("auto", CUDA, transformer, 2, BF16) is False
    assert use_graphs("auto", CUDA, transformer, 1, torch.float16) is False
    said = capsys.readouterr().out.splitlines()
    assert len(said) == 3 and all(line.startswith("train.cuda_graphs auto: eager") for line in said)
    assert "RNNModel" in said[0] and "2 processes" in said[1] and "1 process, fp16" in said[2]


@pytest.mark.parametrize(
    "device, family, processes, amp, words",
    [
        (CPU, "transformer", 1, BF16, "CUDA device"),
        (CUDA, "rnn", 1, BF16, "RNNModel cannot be captured"),
        (CUDA, "transformer", 2, BF16, "one process"),
        (CUDA, "transformer", 1, torch.float16, "fp16"),
    ],
)
def test_true_is_an_error_where_graphs_cannot_be_used(
    models, device, family, processes, amp, words
):
    with pytest.raises(WordorderError, match=words) as e:
        use_graphs(True, device, models[family], processes, amp)
    assert "auto" in e.value.hint
    assert use_graphs(True, CUDA, models["transformer"], 1, BF16) is True


def test_the_option_takes_true_false_and_auto_only():
    for value in (True, False, "auto"):
        assert TrainOptions.from_dict({"cuda_graphs": value}).cuda_graphs == value
    for bad in ("yes", 1.5, "Auto"):
        with pytest.raises(WordorderError, match="cuda_graphs"):
            TrainOptions.from_dict({"cuda_graphs": bad})


def test_dev_evaluations_follow_the_training_route(models):
    """The dev evaluations take decode.cuda_graphs' search where the training's updates replay
    from graphs (the graphed route: a CUDA device, one process, no fp16, so never where
    use_graphs refused) and the model decodes with static shapes (not flexible attention)."""
    from wordorder.train.state import eval_graphs

    transformer, rnn = models["transformer"], models["rnn"]
    flexible = build_model({"preset": "rnn_tiny", "attention": "flexible"}, 40)
    assert eval_graphs("graphed", transformer) and eval_graphs("graphed", rnn)
    assert not eval_graphs("graphed", flexible)
    for route in ("eager", "stacked", "ddp"):
        assert not eval_graphs(route, transformer)
