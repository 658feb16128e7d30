"""System test: data-parallel training (DDP through torchrun, gloo on the CPU) with 2 processes
gives the weights of the single-process run with the same update size (gradient accumulation
over the same batches), up to floating-point summation order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent

# argv: out_dir. Dropout 0: the processes' dropout masks differ from the single run's.
WORKER = """
import json, sys
from pathlib import Path
import torch
from reordering_task import VOCAB, bleu, make_data
from wordorder.models import build_model
from wordorder.train.loop import TrainOptions, train

torch.manual_seed(1)
pairs, test_src, test_ref = make_data(2000, 20, seed=7)
model = build_model({"preset": "tiny", "dropout": 0.0}, VOCAB)
opts = TrainOptions(device="cpu", batch_tokens=300, accum_steps=4, lr=2e-3, warmup=10,
                    max_steps=25, eval_every=10, log_every=5, seed=1, threads=1,
                    label_smoothing=0.1)
summary = train(model, pairs, test_src, lambda h: bleu(h, test_ref), opts, Path(sys.argv[1]))
print(json.dumps(summary))
"""


def run(tmp_path: Path, out: Path, processes: int) -> subprocess.CompletedProcess:
    script = tmp_path / "worker.py"
    script.write_text(WORKER, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(HERE), str(HERE.parent / "helpers"), os.environ.get("PYTHONPATH", "")]
        ),
        "OMP_NUM_THREADS": "1",
    }
    if processes == 1:
        cmd = [sys.executable, str(script), str(out)]
    else:
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc_per_node={processes}",
            str(script),
            str(out),
        ]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)


def summaries(proc: subprocess.CompletedProcess) -> list[dict]:
    """Every JSON summary printed. The processes share one stdout, and print() writes the object
    and its newline separately, so two summaries can end up on one line: scan, don't split."""
    decoder, text, found, i = json.JSONDecoder(), proc.stdout, [], 0
    while (i := text.find('{"', i)) >= 0:
        obj, i = decoder.raw_decode(text, i)
        found.append(obj)
    return found


@pytest.mark.slow
def test_two_processes_train_like_one(tmp_path):
    single = run(tmp_path, tmp_path / "single", 1)
    assert single.returncode == 0, single.stderr[-3000:]
    pair = run(tmp_path, tmp_path / "ddp", 2)
    assert pair.returncode == 0, pair.stderr[-3000:]
    one, two = summaries(single), summaries(pair)
    assert len(one) == 1 and len(two) == 2  # both processes finish
    # the same updates over the same tokens, counted for the whole update on every process
    assert one[0]["steps"] == two[0]["steps"] == two[1]["steps"] == 25
    assert one[0]["train_tokens"] == two[0]["train_tokens"] == two[1]["train_tokens"]
    a = torch.load(tmp_path / "single" / "last.pt", weights_only=True)["state_dict"]
    b = torch.load(tmp_path / "ddp" / "last.pt", weights_only=True)["state_dict"]
    for name in a:
        x, y = a[name], b[name]
        if name.endswith("kv_proj.bias"):  # also qkv_proj (self-attention): q, k, v rows
            # The key bias adds q·b_k to every score of a query: softmax ignores it, its true
            # gradient is 0, and Adam turns the rounding noise of that 0 into full-size steps,
            # different for every summation order. Compare the other biases only.
            d = x.numel() // (3 if name.endswith("qkv_proj.bias") else 2)
            keep = torch.ones_like(x, dtype=torch.bool)
            keep[-2 * d : -d] = False
            x, y = x[keep], y[keep]
        torch.testing.assert_close(y, x, atol=2e-5, rtol=1e-4, msg=name)

    # rank 0 logs the loss of the whole update (summed over the processes), as the single run does
    def losses(folder):
        records = [
            json.loads(x) for x in (tmp_path / folder / "metrics.jsonl").read_text().splitlines()
        ]
        return [(r["step"], r["train_loss"]) for r in records if "train_loss" in r]

    assert [s for s, _ in losses("ddp")] == [5, 10, 15, 20, 25]
    for (_, x), (_, y) in zip(losses("single"), losses("ddp")):
        assert x == pytest.approx(y, abs=1e-4)
