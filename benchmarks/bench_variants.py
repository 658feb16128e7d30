"""Training and decoding speed of every Transformer variant against the baseline, in one run.

Setup (the issue's benchmark config):

* English→Japanese, the first ``--pairs`` (20,000) pairs of
  ``../shared/data/ja-en_small_parallel_enja/train.{en,ja}.gz``; a joint sentencepiece BPE of
  8,000 pieces trained on them by the project's trainer (cached in ``--work``).
* The small preset (3+3 layers, d_model 256, 4 heads, FFN 1024), fp32, ``--threads`` (2)
  threads, dropout on, label smoothing 0.1, Adam. An update is the training loop's own
  :func:`wordorder.train.loop.update` (collate included in the time); batches come from
  :func:`make_batches` re-made every epoch as in training, with the padded-token budget
  chosen so that an update has ≈ ``--target-tokens`` (2,048) non-PAD target tokens.
  Updates ``--timed-from``..``--steps`` (50..300) are timed.
* Train tokens/s = non-PAD source + target tokens (each with its EOS) per second.
* Decoding: beam 5 over the first ``--decode-sentences`` (500) dev sentences with the model
  as trained by the benchmark, ``translate_batches`` (batch of 4,000 source tokens); sentences/s
  and the mean hypothesis length (a variant that emits longer outputs does more steps).
* Variants needing source features get random POS/BIEO/dependency tags (tag sets of a real
  parser's size) and random preorders: their speed does not depend on the values.
  Variants with the same model options (e.g. Kawara's gold/BTG/RvNN inputs) are one row.
* Model FLOPs (matmuls of the weights only, training = 3 × forward) per update:
  ``6 · (N_enc · source tokens + (N_dec + V·d) · target tokens)``, N_enc / N_dec the
  ``nn.Linear`` weights of the encoder / decoder side (modules outside both count as encoder),
  V·d the tied output projection. MFU = those FLOP/s ÷ the fp32 matmul peak, the best rate of
  ``torch.mm`` on two 2048×2048 matrices, measured before and after the variants.
* On a GPU (``--device cuda``): each update is timed up to its last kernel; with ``--amp`` the
  updates run under bf16 autocast (fp16 where the GPU has no bf16), and MFU is against the
  measured bf16 ``torch.mm`` peak (8192×8192) and against the data sheet's dense peak.
  On the CPU ``--amp`` is training's ``cpu_amp`` (bf16 autocast; needs AVX512-BF16 or AMX),
  MFU against the bf16 ``torch.mm`` peak (2048×2048).
  ``--preset base`` gives every variant the base size (the papers' Transformer-base).

    .venv/bin/python benchmarks/bench_variants.py [--variants a,b] [--steps 300] [--json out.json]
    python3 benchmarks/bench_variants.py --device cuda --amp --preset base --target-tokens 8192
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import time
from pathlib import Path

import torch

from wordorder.config import load_variants
from wordorder.decode.batches import translate_batches
from wordorder.device import autocast_dtype, keep_freed_cpu_memory, precision_name
from wordorder.model_io.batching import collate, make_batches
from wordorder.models import build_model
from wordorder.models.registry import resolve_options
from wordorder.specials import PAD_ID
from wordorder.text.subword import SubwordModel
from wordorder.text.subword_train import train_sentencepiece
from wordorder.train.loop import TrainOptions, make_optimizer
from wordorder.train.routes import route_from_options

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "ja-en_small_parallel_enja"
TAG_SETS = {"pos": 17, "bieo": 4, "dep": 45}  # UPOS, B/I/E/O, UD relations


def read_gz(path: Path, limit: int) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(limit), f)]


def load_data(args) -> tuple[int, list, list]:
    """(vocabulary size, training pairs of ids, dev source ids)."""
    args.work.mkdir(parents=True, exist_ok=True)
    en, ja = (read_gz(args.data / f"train.{lang}.gz", args.pairs) for lang in ("en", "ja"))
    prefix = args.work / f"spm_enja_{args.pairs}_{args.vocab}"
    if not Path(f"{prefix}.model").is_file():
        inputs = []
        for lang, lines in (("en", en), ("ja", ja)):
            inputs.append(args.work / f"train_{args.pairs}.{lang}")
            inputs[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
        train_sentencepiece(inputs, prefix, args.vocab, model_type="bpe", seed=1)
    sp = SubwordModel(Path(f"{prefix}.model"))
    pairs = list(zip(sp.encode_batch(en, out_type=int), sp.encode_batch(ja, out_type=int)))
    dev = sp.encode_batch(read_gz(args.data / "dev.en.gz", args.decode_sentences), out_type=int)
    return sp.vocab_size, pairs, dev


def random_features(
    names: set[str], sources: list[list[int]], seed: int
) -> dict[str, list[list[int]]]:
    """Feature ids per source subword, as :mod:`wordorder.model_io.features` hands them over."""
    rng = random.Random(seed)
    out: dict[str, list[list[int]]] = {}
    for name in sorted(names):
        if name == "order":
            out[name] = [rng.sample(range(len(s)), len(s)) for s in sources]
        else:  # ids 3.. are tags (0..2: PAD, UNK, EOS)
            out[name] = [[rng.randrange(3, 3 + TAG_SETS[name]) for _ in s] for s in sources]
    return out


def feature_sizes(names: set[str]) -> dict[str, int]:
    return {name: 3 + TAG_SETS[name] for name in names if name in TAG_SETS}


def mean_target_tokens(pairs, batch_tokens: int, seed: int) -> float:
    batches = make_batches(pairs, batch_tokens, seed)
    return sum(len(t) + 1 for _, t in pairs) / len(batches)


def choose_batch_tokens(pairs, target: float, seed: int) -> int:
    """The padded-token budget whose batches hold ``target`` non-PAD target tokens on average."""
    lo, hi = 64, 65536
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if mean_target_tokens(pairs, mid, seed) < target else (lo, mid)
    return hi


def matmul_peak(
    n: int = 2048, repeats: int = 10, device: str = "cpu", dtype: torch.dtype = torch.float32
) -> float:
    """Best FLOP/s of ``torch.mm`` on two n×n matrices of ``dtype`` on ``device``."""
    a, b = (torch.randn(n, n, device=device, dtype=dtype) for _ in range(2))
    out = torch.empty(n, n, device=device, dtype=dtype)
    best = float("inf")
    for i in range(repeats + 3):
        sync(device)
        t0 = time.perf_counter()
        torch.mm(a, b, out=out)
        sync(device)
        if i >= 3:
            best = min(best, time.perf_counter() - t0)
    return 2 * n**3 / best


def sync(device: str | torch.device) -> None:
    """Wait for the device's queued work, so that a CPU clock times it (a no-op on the CPU)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


# Dense (no sparsity) tensor-core peaks from the vendor's data sheets, for MFU against the
# chip's rating besides the measured matmul rate: bf16/fp16 (also TF32 for fp32 matmuls).
DATASHEET_PEAKS = {"H100": 989.4e12, "H200": 989.4e12, "A100": 312e12, "L40S": 362.05e12}


def datasheet_peak(device: str) -> float | None:
    if torch.device(device).type != "cuda":
        return None
    name = torch.cuda.get_device_name()
    return next((v for k, v in DATASHEET_PEAKS.items() if k in name), None)


def linear_weights(model) -> tuple[int, int]:
    """(encoder-side, decoder-side + tied output projection) ``nn.Linear`` weight counts."""
    enc = dec = 0
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear):
            if name.startswith("decoder."):
                dec += module.weight.numel()
            else:
                enc += module.weight.numel()
    return enc, dec + model.output_weight.numel()


def train_speed(model, pairs, feats, batch_tokens: int, args) -> dict[str, float]:
    opts = TrainOptions(lr=5e-4, label_smoothing=0.1, seed=args.seed)
    device = torch.device(args.device)
    amp_dtype = autocast_dtype(args.device, args.amp, cpu_amp=args.amp)
    model.to(device)
    optimizer = make_optimizer(model, opts)
    scaler = torch.amp.GradScaler("cuda", enabled=amp_dtype == torch.float16)
    route = route_from_options("eager", model, optimizer, opts, device, amp_dtype, scaler)
    n_enc, n_dec = linear_weights(model)
    model.train()
    queue: list[list[int]] = []
    epoch = 0
    src_tok = tgt_tok = 0
    seconds = flops = 0.0
    times = []
    for step in range(args.steps):
        if not queue:
            epoch += 1
            queue = make_batches(pairs, batch_tokens, seed=args.seed * 100_003 + epoch)[::-1]
        idx = queue.pop()
        t0 = time.perf_counter()
        batch = collate(pairs, idx, feats)
        route.update([batch], batch.target_tokens)
        sync(device)  # per update: the median needs each update's time
        dt = time.perf_counter() - t0
        if step >= args.timed_from:
            ns, nt = int(batch.src.ne(PAD_ID).sum()), batch.target_tokens
            src_tok, tgt_tok = src_tok + ns, tgt_tok + nt
            flops += 6.0 * (n_enc * ns + n_dec * nt)
            seconds += dt
            times.append(dt)
    n = len(times)
    return {
        "tok_s": (src_tok + tgt_tok) / seconds,
        "tgt_tok_s": tgt_tok / seconds,
        "flop_s": flops / seconds,
        "src_tokens": src_tok / n,
        "tgt_tokens": tgt_tok / n,
        "median_ms": 1000 * statistics.median(times),
    }


def decode_speed(model, dev, feats, args) -> dict[str, float]:
    t0 = time.perf_counter()
    hyps = translate_batches(
        model,
        dev,
        batch_tokens=4000,
        beam_size=5,
        max_len_a=1.5,
        max_len_b=10,
        device=args.device,
        progress=False,
        feats=feats,
    )
    sync(args.device)
    seconds = time.perf_counter() - t0
    return {"sent_s": len(dev) / seconds, "mean_len": sum(map(len, hyps)) / max(len(hyps), 1)}


def run_variant(
    names: list[str], model_options: dict, vocab: int, pairs, dev, batch_tokens: int, args
) -> dict:
    needs = resolve_options(dict(model_options)).required_features()
    options = (
        {**model_options, "feature_sizes": feature_sizes(needs)} if needs else dict(model_options)
    )
    if args.preset:  # the variant's mechanism at another size
        sizes = ("d_model", "d_ff", "heads", "encoder_layers", "decoder_layers")
        options = {k: v for k, v in options.items() if k not in sizes} | {"preset": args.preset}
    torch.manual_seed(args.seed)
    model = build_model(options, vocab)
    train_feats = random_features(needs, [s for s, _ in pairs], args.seed) if needs else None
    dev_feats = random_features(needs, dev, args.seed + 1) if needs else None
    train = train_speed(model, pairs, train_feats, batch_tokens, args)
    dec = (
        decode_speed(model, dev, dev_feats, args)
        if dev
        else {"sent_s": float("nan"), "mean_len": 0.0}
    )
    row = {
        "variants": names,
        "params": sum(p.numel() for p in model.parameters()),
        "train": train,
        "decode": dec,
    }
    print(
        f"  {', '.join(names)}: {train['tok_s']:,.0f} tok/s, {dec['sent_s']:.1f} sent/s", flush=True
    )
    return row


def table(rows: list[dict], peak: float, peak_name: str, sheet: float | None = None) -> str:
    base = rows[0]
    # MFU per row separates "more work per token" (e.g. the REs' extra 3·d² matmuls) from
    # "slower per unit of work": a variant at the baseline's MFU is as efficient as it can be.
    lines = [
        (
            "| variant | params | train tok/s | ratio | MFU | decode sent/s | "
            "ratio | mean hyp. length |"
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {', '.join(r['variants'])} | {r['params']:,} | {r['train']['tok_s']:,.0f} | "
            f"{r['train']['tok_s'] / base['train']['tok_s']:.2f} | "
            f"{100 * r['train']['flop_s'] / peak:.1f} % | {r['decode']['sent_s']:.1f} | "
            f"{r['decode']['sent_s'] / base['decode']['sent_s']:.2f} | "
            f"{r['decode']['mean_len']:.1f} |"
        )
    bt = base["train"]
    lines += [
        "",
        f"Baseline: {bt['tok_s']:,.0f} source+target tokens/s ({bt['tgt_tok_s']:,.0f} target), "
        f"{bt['flop_s'] / 1e9:.1f} GFLOP/s of model matmuls = {100 * bt['flop_s'] / peak:.1f} % "
        f"of the {peak_name} matmul peak ({peak / 1e9:.1f} GFLOP/s, measured by torch.mm).",
    ]
    if sheet:
        lines.append(
            f"Against the GPU's data-sheet dense peak ({sheet / 1e12:.0f} TFLOP/s): "
            f"{100 * bt['flop_s'] / sheet:.1f} %."
        )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--baseline", default="transformer_small")
    ap.add_argument(
        "--variants", default=None, help="comma-separated names (default: every small Transformer)"
    )
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--timed-from", type=int, default=50)
    ap.add_argument("--target-tokens", type=float, default=2048)
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--decode-sentences", type=int, default=500)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/wordorder_bench"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N]")
    ap.add_argument(
        "--amp",
        action="store_true",
        help="autocast: on CUDA bf16 (else fp16), as training's amp; on the CPU bf16, as cpu_amp",
    )
    ap.add_argument("--preset", default=None, help="every variant at this size (e.g. base)")
    args = ap.parse_args()
    if not 0 <= args.timed_from < args.steps:
        ap.error("need 0 <= --timed-from < --steps")
    if not args.data.is_dir():
        ap.error(f"{args.data} not found: the benchmark reads the shared ja-en corpus")
    torch.set_num_threads(args.threads)
    keep_freed_cpu_memory()  # as `wordorder train` does on the CPU
    registry = load_variants(ROOT / "configs" / "variants.yaml")
    preset = registry[args.baseline]["model"].get("preset")
    names = (
        args.variants.split(",")
        if args.variants
        else [
            n
            for n, e in registry.items()
            if e["model"].get("family") == "transformer" and e["model"].get("preset") == preset
        ]
    )
    unknown = [n for n in names if n not in registry]
    if unknown:
        ap.error(f"unknown variants {unknown}")
    groups: dict[str, list[str]] = {}  # identical model options → one row
    for name in [args.baseline] + [n for n in names if n != args.baseline]:
        groups.setdefault(json.dumps(registry[name]["model"], sort_keys=True), []).append(name)

    vocab, pairs, dev = load_data(args)
    batch_tokens = choose_batch_tokens(pairs, args.target_tokens, args.seed * 100_003 + 1)
    print(
        f"{len(pairs)} pairs, vocabulary {vocab}, batch_tokens {batch_tokens} "
        f"(≈{mean_target_tokens(pairs, batch_tokens, args.seed * 100_003 + 1):.0f} target tokens "
        f"per update), {args.threads} threads, torch {torch.__version__}",
        flush=True,
    )
    on_cuda = torch.device(args.device).type == "cuda"
    amp_dtype = autocast_dtype(args.device, args.amp, cpu_amp=args.amp)
    peak_dtype, peak_name = amp_dtype or torch.float32, precision_name(amp_dtype)
    if on_cuda:
        print(f"device {torch.cuda.get_device_name()}, autocast {amp_dtype}", flush=True)
    measure = lambda: matmul_peak(8192 if on_cuda else 2048, 10, args.device, peak_dtype)  # noqa: E731
    peak = measure()
    rows = [
        run_variant(group, json.loads(key), vocab, pairs, dev, batch_tokens, args)
        for key, group in groups.items()
    ]
    peak = max(peak, measure())
    sheet = datasheet_peak(args.device) if amp_dtype else None
    print(table(rows, peak, peak_name, sheet))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "peak_flop_s": peak,
                    "peak_dtype": peak_name,
                    "datasheet_peak_flop_s": sheet,
                    "batch_tokens": batch_tokens,
                    "rows": rows,
                    "args": {k: str(v) for k, v in vars(args).items()},
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
