"""Training throughput (target tokens per second) and MFU of one preset, on the CPU and on CUDA;
the operators an update dispatches.

Random sentence pairs of realistic length (20-30 tokens each side), token-budget batches, the
real loss (label-smoothed cross-entropy) and the trainer's update (fused Adam); warm-up updates
are not timed. Runs on the CPU with ``--threads`` threads, and on CUDA when a GPU is present:
fp32, then bf16 AMP in each of ``--modes`` at each of ``--amp-batch-tokens``:

* ``eager``: the update as the trainer runs it by default (``train.stack_parameters: auto``,
  ``wordorder.train.routes``): stacked by shape after the first update where the route table
  says stacked updates passed on a GPU (``wordorder.gpu_table``), else per parameter;
* ``stacked`` / ``unstacked``: the same update with the parameters stacked / with a leaf per
  parameter (``stack_parameters`` true / false);
* ``graphs``: ``train.cuda_graphs`` (``wordorder.train.graphs``: batches padded to static shapes,
  8 width steps per doubling; every shape is captured within the warm-up, which covers two
  passes over the batches);
* ``compile``: the loss through ``torch.compile`` (dynamic shapes; compiling happens in the
  warm-up, whose time is printed).

MFU: model FLOPs (``6 · (N_enc · source tokens + (N_dec + V·d) · target tokens)``, the weight
matmuls over real tokens, as in bench_variants.py; padding counts against the run) per second ÷
the best ``torch.mm`` rate measured in the same run in the same precision, and for AMP also
against the GPU's data-sheet dense peak. ``GPU busy``: kernel time ÷ wall time over 5 profiled
updates (far below 100 %: the GPU waits for the host), with the host's ATen calls per update.

On the CPU the ``--cpu-modes`` (default: stacked and unstacked) alternate over ``--rounds``
rounds, fastest of each reported, with their ratio.

``--count-ops``: the operators one update dispatches (``wordorder.train.opcount``: through
CUDA's code paths, bf16 autocast and fp32; stacked and unstacked), for the preset's structure
at width 64 (the count does not depend on the width; the real width takes minutes on a CPU).

    .venv/bin/python benchmarks/bench_train.py [--preset small] [--threads 2] [--steps 30]
    .venv/bin/python benchmarks/bench_train.py --preset base --count-ops --steps 0
    python3 benchmarks/bench_train.py --preset base --cpu-steps 0 --cuda-fp32 0 \\
        --amp-batch-tokens 8192,25000 --modes eager,graphs --json out.json
"""

from __future__ import annotations

import argparse
import json
import random
import time

import torch
from bench_variants import datasheet_peak, linear_weights, matmul_peak, sync

from wordorder.device import autocast_dtype
from wordorder.model_io.batching import collate, make_batches, static_shape
from wordorder.models import PRESETS, build_model
from wordorder.specials import PAD_ID
from wordorder.train.options import TrainOptions
from wordorder.train.routes import route_from_options
from wordorder.train.stacked import use_stacks
from wordorder.train.update import loss_function, make_optimizer

VOCAB = 8000
WIDTH_STEPS = 8


def throughput(
    preset: str,
    device: str,
    amp: bool,
    pairs,
    batch_tokens: int,
    steps: int,
    mode: str = "eager",
    warmup_steps: int = 3,
    busy: bool = False,
) -> dict:
    """Target tokens/s, model FLOP/s and more of ``steps`` timed updates after the warm-up."""
    torch.manual_seed(0)
    model = build_model({"preset": preset}, VOCAB).to(device).train()
    n_enc, n_dec = linear_weights(model)
    opts = TrainOptions(device=device, lr=1e-4, warmup=1, label_smoothing=0.1)
    amp_dtype = autocast_dtype(device, amp)
    graphs = mode == "graphs"
    optimizer = make_optimizer(model, opts, capturable=graphs)
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
    loss_fn = loss_function(opts.label_smoothing, amp_dtype, compile_it=mode == "compile")
    steps_wide = WIDTH_STEPS if graphs else 0
    batches = make_batches(pairs, batch_tokens, seed=1, width_steps=steps_wide)
    dev = torch.device(device)
    if graphs:
        route = route_from_options(
            "graphed", model, optimizer, opts, dev, amp_dtype, scaler, loss_fn
        )
        collated = [
            collate(pairs, b, shape=static_shape(pairs, b, batch_tokens, WIDTH_STEPS))
            for b in batches
        ]
        warmup_steps = max(warmup_steps, 2 * len(batches) + 1)
    else:
        collated = [collate(pairs, b) for b in batches]
        setting = {"eager": "auto", "stacked": True}.get(mode, False)
        stack = use_stacks(setting, dev, 1, mode == "compile", False)
        name = "stacked" if stack else "eager"  # stacked: as the trainer, after the 1st update
        route = route_from_options(name, model, optimizer, opts, dev, amp_dtype, scaler, loss_fn)

    def step(batch):
        route.update([batch], batch.target_tokens)

    tokens, flops, start, padded = 0, 0.0, 0.0, 0
    t0 = time.perf_counter()
    for i in range(warmup_steps + steps):
        if i == warmup_steps:
            sync(device)
            warm_s = time.perf_counter() - t0
            tokens, flops, padded, start = 0, 0.0, 0, time.perf_counter()
        batch = collated[i % len(collated)]
        tokens += batch.target_tokens
        padded += batch.src.numel() + batch.tgt_in.numel()
        flops += 6.0 * (n_enc * int(batch.src.ne(PAD_ID).sum()) + n_dec * batch.target_tokens)
        step(batch)
    sync(device)
    seconds = time.perf_counter() - start
    out = {
        "mode": mode,
        "batch_tokens": batch_tokens,
        "tokens_per_s": tokens / seconds,
        "flops_per_s": flops / seconds,
        "ms_per_update": 1e3 * seconds / steps,
        "padded_positions_per_update": padded / steps,
        "warmup_s": warm_s,
    }
    if graphs:
        out["graphs"] = route.shapes
    if busy:
        out.update(gpu_busy(step, collated[:5], device))
    return out


def gpu_busy(step, batches, device: str) -> dict:
    """Kernel time ÷ wall time of ``step`` over ``batches``, and the host's ATen calls."""
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
    calls = sum(e.count for e in events if e.key.startswith("aten::"))
    top = sorted(events, key=lambda e: -e.self_cpu_time_total)[:6]
    # Where the device's time goes: the kernels (not the operators that launch them) by time
    device_ops = [e for e in events if e.self_device_time_total > 0 and "::" not in e.key]
    device_top = sorted(device_ops, key=lambda e: -e.self_device_time_total)[:12]
    n = len(batches)
    return {
        "gpu_busy": kernels / wall,
        "aten_calls_per_update": calls / n,
        "kernels_per_update": sum(e.count for e in device_ops) / n,
        "host_top": ", ".join(f"{e.key} {e.self_cpu_time_total / 1e3:.0f} ms" for e in top),
        "device_top": [
            (e.key[:90], round(e.self_device_time_total / 1e3 / n, 3), e.count // n)
            for e in device_top
        ],
    }


def count_ops(preset: str) -> None:
    from wordorder.train.opcount import count_update

    rng = random.Random(1)
    pairs = [
        ([rng.randrange(4, 300) for _ in range(12)], [rng.randrange(4, 300) for _ in range(12)])
        for _ in range(32)
    ]
    for label, amp in (("bf16 autocast", torch.bfloat16), ("fp32", None)):
        for stack in (True, False):
            torch.manual_seed(0)
            model = build_model({"preset": preset, "d_model": 64, "d_ff": 128}, 300).train()
            count = count_update(model, collate(pairs), amp, stack=stack, label_smoothing=0.1)
            kind = "stacked" if stack else "unstacked"
            print(f"  {preset} update, CUDA paths, {label}, {kind}: {count.summary(8)}")


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
    ap.add_argument("--cuda-steps", type=int, default=100)
    ap.add_argument("--batch-tokens", type=int, default=4096, help="CPU and CUDA fp32 batches")
    ap.add_argument("--cuda-fp32", type=int, default=1, help="0: no CUDA fp32 run")
    ap.add_argument(
        "--amp-batch-tokens", default="8192", help="comma-separated batch sizes of the AMP runs"
    )
    ap.add_argument(
        "--modes",
        default="eager",
        help="comma-separated: eager, stacked, unstacked, graphs, compile",
    )
    ap.add_argument("--cpu-modes", default="stacked,unstacked", help="comma-separated, CPU")
    ap.add_argument("--rounds", type=int, default=1, help="CPU: alternating rounds, fastest kept")
    ap.add_argument("--count-ops", action="store_true", help="operators per update (CPU)")
    ap.add_argument("--kernels", action="store_true", help="CUDA: the kernels taking most time")
    ap.add_argument("--json", help="write the CUDA results here")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.count_ops:
        count_ops(a.preset)
    rng = random.Random(0)
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
        f"{p['decoder_layers']} layers, V={VOCAB})"
    )
    cpu = None
    if a.steps > 0:
        peak = matmul_peak(2048, 10, "cpu", torch.float32)
        best: dict[str, dict] = {}
        for _ in range(a.rounds):  # alternating, so that drifts of the machine hit all modes
            for mode in a.cpu_modes.split(","):
                r = throughput(a.preset, "cpu", False, pairs, a.batch_tokens, a.steps, mode)
                if mode not in best or r["tokens_per_s"] > best[mode]["tokens_per_s"]:
                    best[mode] = r
        for mode, r in best.items():
            print(
                f"  cpu {mode:9s} ({a.threads} threads, <= {a.batch_tokens} tokens): "
                f"{r['tokens_per_s']:9.0f} target tokens/s, {r['ms_per_update']:.0f} ms/update, "
                f"MFU {100 * r['flops_per_s'] / peak:.1f} % of fp32 torch.mm "
                f"{peak / 1e9:.0f} GFLOP/s"
            )
        cpu = next(iter(best.values()))["tokens_per_s"]
        if {"stacked", "unstacked"} <= best.keys():
            ratio = best["stacked"]["tokens_per_s"] / best["unstacked"]["tokens_per_s"]
            print(f"  cpu stacked / unstacked: {ratio:.3f}x")
    if not torch.cuda.is_available():
        print("  cuda: not available")
        return
    name = torch.cuda.get_device_name()
    results = []
    if a.cuda_fp32:
        r = throughput(a.preset, "cuda", False, pairs, a.batch_tokens, a.cuda_steps)
        fp32_peak = matmul_peak(8192, 10, "cuda", torch.float32)
        print(
            f"  cuda fp32 ({name}, <= {a.batch_tokens} tokens): {r['tokens_per_s']:9.0f} target "
            f"tokens/s, MFU {100 * r['flops_per_s'] / fp32_peak:.1f} % of fp32 torch.mm "
            f"{fp32_peak / 1e12:.1f} TFLOP/s"
        )
        results.append({**r, "precision": "fp32", "peak": fp32_peak})
    half = autocast_dtype("cuda", True)
    assert half is not None
    half_peak = matmul_peak(8192, 10, "cuda", half)
    sheet = datasheet_peak("cuda")
    for size in [int(x) for x in a.amp_batch_tokens.split(",") if x]:
        for mode in a.modes.split(","):
            try:
                r = throughput(
                    a.preset, "cuda", True, pairs, size, a.cuda_steps, mode, 10, busy=True
                )
            except Exception as e:  # report, not crash: the other runs have their numbers
                print(f"  {mode} at {size}: failed: {type(e).__name__}: {str(e)[:300]}")
                continue
            of_sheet = (
                f", {100 * r['flops_per_s'] / sheet:.1f} % of the data sheet" if sheet else ""
            )
            print(
                f"  cuda {str(half).split('.')[-1]} {mode:7s} <= {size:5d} tokens: "
                f"{r['tokens_per_s']:9.0f} target tokens/s, {r['ms_per_update']:.1f} ms/update, "
                f"MFU {100 * r['flops_per_s'] / half_peak:.1f} % of torch.mm "
                f"{half_peak / 1e12:.0f} TFLOP/s{of_sheet}; GPU busy {100 * r['gpu_busy']:.0f} %, "
                f"{r['aten_calls_per_update']:.0f} aten calls/update"
                + (f", {r['graphs']} graphs" if "graphs" in r else "")
                + f" (warm-up {r['warmup_s']:.0f} s)"
            )
            results.append({**r, "precision": str(half), "peak": half_peak, "device": name})
            if a.kernels and mode == "eager":
                print(f"    {r['kernels_per_update']:.0f} kernels/update; most device time:")
                for key, ms, count in r["device_top"]:
                    print(f"      {ms:7.3f} ms/update  x{count:<4d} {key}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"preset": a.preset, "cpu_tokens_per_s": cpu, "cuda": results}, f, indent=1)


if __name__ == "__main__":
    main()
