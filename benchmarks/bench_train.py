"""Training throughput (target tokens per second) and MFU of one preset, on the CPU and on CUDA.

Random sentence pairs of realistic length (25 tokens each side), token-budget batches, the
real loss (label-smoothed cross-entropy) and Adam update; a few warm-up steps are not timed.
Runs on the CPU with ``--threads`` threads, and on CUDA in fp32 and with AMP (bf16 autocast,
fp16 where the GPU has no bf16) when a GPU is present.

MFU: model FLOPs (``6 · (N_enc · source tokens + (N_dec + V·d) · target tokens)``, the weight
matmuls, as in bench_variants.py) per second ÷ the best ``torch.mm`` rate measured in the same
run in the same precision (fp32 on the CPU and for CUDA fp32; bf16/fp16 for AMP). For AMP it is
also given against the GPU's data-sheet dense peak.

    .venv/bin/python benchmarks/bench_train.py [--preset small] [--threads 2] [--steps 30]
    python3 benchmarks/bench_train.py --preset base --cpu-steps 0 --batch-tokens 8192
"""

from __future__ import annotations

import argparse
import random
import time

import torch
from bench_variants import datasheet_peak, linear_weights, matmul_peak, sync

from wordorder.device import autocast_dtype
from wordorder.model_io.batching import collate, make_batches
from wordorder.models import PRESETS, build_model
from wordorder.specials import PAD_ID
from wordorder.train.options import TrainOptions
from wordorder.train.update import make_optimizer, update

VOCAB = 8000


def throughput(
    preset: str,
    device: str,
    amp: bool,
    pairs,
    batch_tokens: int,
    steps: int,
    warmup_steps: int = 3,
    compile_model: bool = False,
    busy: bool = False,
) -> tuple[float, float]:
    """(target tokens/s, model FLOP/s) over ``steps`` timed updates.

    ``compile_model``: run the model through ``torch.compile`` (dynamic shapes; the warm-up
    updates absorb the compilation). ``busy``: also print the share of the wall time the GPU
    spent in kernels over 5 profiled updates, and the host's busiest operators: a share far
    below 1 means the GPU waits for Python to issue kernels (launch-bound).
    """
    torch.manual_seed(0)
    model = build_model({"preset": preset}, VOCAB).to(device).train()
    n_enc, n_dec = linear_weights(model)
    if compile_model:
        model = torch.compile(model, dynamic=True)
    # the trainer's own update: its optimizer (fused Adam), loss scaling and gradient scaler
    opts = TrainOptions(device=device, lr=1e-4, warmup=1, label_smoothing=0.1)
    optimizer = make_optimizer(model, opts)
    amp_dtype = autocast_dtype(device, amp)
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
    step = lambda batch: update(  # noqa: E731
        model, optimizer, scaler, [batch], opts, torch.device(device), amp_dtype
    )
    batches = make_batches(pairs, batch_tokens, seed=1)
    tokens, flops, start = 0, 0.0, 0.0
    for i in range(warmup_steps + steps):
        if i == warmup_steps:
            sync(device)
            tokens, flops, start = 0, 0.0, time.perf_counter()
        batch = collate(pairs, batches[i % len(batches)])
        tokens += batch.target_tokens
        flops += 6.0 * (n_enc * int(batch.src.ne(PAD_ID).sum()) + n_dec * batch.target_tokens)
        step(batch)
    sync(device)
    seconds = time.perf_counter() - start
    if busy:
        profiled = [collate(pairs, b) for b in batches[:5]]
        gpu_busy(step, profiled, device)
    return tokens / seconds, flops / seconds


def gpu_busy(step, batches, device: str) -> None:
    """Prints kernel time ÷ wall time of ``step`` over ``batches`` and the top host operators."""
    from torch.profiler import ProfilerActivity, profile

    sync(device)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    with profile(activities=activities) as prof:
        t0 = time.perf_counter()
        for batch in batches:
            step(batch)
        sync(device)
        wall = time.perf_counter() - t0
    events = prof.key_averages()
    kernels = sum(e.self_device_time_total for e in events) / 1e6  # microseconds -> s
    launches = sum(e.count for e in events if e.key.startswith("aten::"))
    print(
        f"    GPU busy {100 * kernels / wall:.0f} % of {1e3 * wall / len(batches):.1f} ms/update "
        f"(profiled; {launches // len(batches)} aten calls/update)"
    )
    top = sorted(events, key=lambda e: -e.self_cpu_time_total)[:8]
    print("    host: " + ", ".join(f"{e.key} {e.self_cpu_time_total / 1e3:.0f} ms" for e in top))


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--preset", default="small", choices=sorted(PRESETS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--steps",
        "--cpu-steps",
        dest="steps",
        type=int,
        default=30,
        help="timed CPU updates (0: skip the CPU)",
    )
    ap.add_argument("--cuda-steps", type=int, default=200)
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument(
        "--amp-batch-tokens",
        default="",
        help="comma-separated larger batch sizes for more CUDA AMP runs (does MFU grow with it?)",
    )
    ap.add_argument(
        "--compile", action="store_true", help="also CUDA AMP with torch.compile(dynamic=True)"
    )
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    rng = random.Random(0)
    # Lengths around 25 (20..30) on both sides, ids from an 8000-entry vocabulary.
    pairs = [
        (
            [rng.randrange(4, VOCAB) for _ in range(rng.randint(20, 30))],
            [rng.randrange(4, VOCAB) for _ in range(rng.randint(20, 30))],
        )
        for _ in range(4000)
    ]
    p = PRESETS[a.preset]
    print(
        f"{a.preset} preset (d={p['d_model']}, ff={p['d_ff']}, {p['encoder_layers']}+"
        f"{p['decoder_layers']} layers, V={VOCAB}), batches of <= {a.batch_tokens} padded tokens"
    )
    cpu = None
    if a.steps > 0:
        cpu, cpu_flops = throughput(a.preset, "cpu", False, pairs, a.batch_tokens, a.steps)
        peak = matmul_peak(2048, 10, "cpu", torch.float32)
        print(
            f"  cpu ({a.threads} threads): {cpu:9.0f} target tokens/s, "
            f"MFU {100 * cpu_flops / peak:.1f} % of fp32 torch.mm {peak / 1e9:.0f} GFLOP/s"
        )
    if not torch.cuda.is_available():
        print("  cuda: not available")
        return
    name = torch.cuda.get_device_name()
    fp32, fp32_flops = throughput(a.preset, "cuda", False, pairs, a.batch_tokens, a.cuda_steps)
    amp, amp_flops = throughput(
        a.preset, "cuda", True, pairs, a.batch_tokens, a.cuda_steps, busy=True
    )
    half = autocast_dtype("cuda", True)
    assert half is not None
    fp32_peak = matmul_peak(8192, 10, "cuda", torch.float32)
    half_peak = matmul_peak(8192, 10, "cuda", half)
    sheet = datasheet_peak("cuda")
    print(
        f"  cuda fp32 ({name}): {fp32:9.0f} target tokens/s, "
        f"MFU {100 * fp32_flops / fp32_peak:.1f} % of fp32 torch.mm {fp32_peak / 1e12:.1f} TFLOP/s"
    )

    def report(label: str, tok: float, fl: float) -> None:
        of_sheet = (
            f", {100 * fl / sheet:.1f} % of the data sheet's {sheet / 1e12:.0f}" if sheet else ""
        )
        print(
            f"  cuda amp {str(half).split('.')[-1]}{label} ({name}): {tok:9.0f} target tokens/s, "
            f"MFU {100 * fl / half_peak:.1f} % of torch.mm {half_peak / 1e12:.0f} TFLOP/s"
            + of_sheet
        )

    report("", amp, amp_flops)
    for size in [int(x) for x in a.amp_batch_tokens.split(",") if x]:
        tok, fl = throughput(a.preset, "cuda", True, pairs, size, max(20, a.cuda_steps // 4))
        report(f", batches <= {size}", tok, fl)
    if a.compile:
        t0 = time.perf_counter()
        try:
            tok, fl = throughput(
                a.preset,
                "cuda",
                True,
                pairs,
                a.batch_tokens,
                a.cuda_steps,
                warmup_steps=10,
                compile_model=True,
                busy=True,
            )
            report(f", torch.compile ({time.perf_counter() - t0:.0f} s with compiling)", tok, fl)
        except Exception as e:  # report, not crash: the rest of the run has its numbers
            print(f"  torch.compile failed: {type(e).__name__}: {str(e)[:300]}")
    print(f"  amp/fp32 {amp / fp32:.2f}x" + (f", cuda fp32/cpu {fp32 / cpu:.1f}x" if cpu else ""))


if __name__ == "__main__":
    main()
