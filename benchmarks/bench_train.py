"""Training throughput (target tokens per second) of the small preset.

Random sentence pairs of realistic length (25 tokens each side), token-budget batches, the
real loss (label-smoothed cross-entropy) and Adam update; a few warm-up steps are not timed.
Runs on the CPU with ``--threads`` threads, and on CUDA with and without AMP when a GPU is
present.

    .venv/bin/python benchmarks/bench_train.py [--threads 2] [--steps 30] [--batch-tokens 4096]
"""

from __future__ import annotations

import argparse
import random
import time

import torch

from wordorder.model_io.batching import collate, make_batches
from wordorder.models import build_model
from wordorder.train.loop import batch_loss


def throughput(
    device: str, amp: bool, pairs, batch_tokens: int, steps: int, warmup_steps: int = 3
) -> float:
    torch.manual_seed(0)
    model = build_model({"preset": "small"}, 8000).to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4, betas=(0.9, 0.98), eps=1e-9)
    amp_dtype = None
    if amp and device.startswith("cuda"):
        amp_dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
    batches = make_batches(pairs, batch_tokens, seed=1)
    tokens, start = 0, 0.0
    for i in range(warmup_steps + steps):
        if i == warmup_steps:
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            tokens, start = 0, time.perf_counter()
        batch = collate(pairs, batches[i % len(batches)])
        tokens += batch.target_tokens
        optimizer.zero_grad(set_to_none=True)
        loss, _ = batch_loss(model, batch.to(device), 0.1, amp_dtype)
        scaler.scale(loss / batch.target_tokens).backward()
        scaler.step(optimizer)
        scaler.update()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return tokens / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--cuda-steps", type=int, default=200)
    ap.add_argument("--batch-tokens", type=int, default=4096)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rng = random.Random(0)
    # Lengths around 25 (20..30) on both sides, ids from an 8000-entry vocabulary.
    pairs = [
        (
            [rng.randrange(4, 8000) for _ in range(rng.randint(20, 30))],
            [rng.randrange(4, 8000) for _ in range(rng.randint(20, 30))],
        )
        for _ in range(4000)
    ]
    print(
        "small preset (d=256, ff=1024, 3+3 layers, V=8000), batches of <= "
        f"{a.batch_tokens} padded tokens"
    )
    cpu = throughput("cpu", False, pairs, a.batch_tokens, a.steps)
    print(f"  cpu ({a.threads} threads): {cpu:9.0f} target tokens/s")
    if torch.cuda.is_available():
        fp32 = throughput("cuda", False, pairs, a.batch_tokens, a.cuda_steps)
        amp = throughput("cuda", True, pairs, a.batch_tokens, a.cuda_steps)
        name = torch.cuda.get_device_name()
        print(f"  cuda fp32 ({name}): {fp32:9.0f} target tokens/s")
        print(
            f"  cuda amp  ({name}): {amp:9.0f} target tokens/s  ",
            f"(amp/fp32 {amp / fp32:.2f}x, cuda fp32/cpu {fp32 / cpu:.1f}x)",
        )
    else:
        print("  cuda: not available")


if __name__ == "__main__":
    main()
