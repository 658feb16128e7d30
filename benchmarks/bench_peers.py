"""Training speed of wordorder against eole 0.6.4 (OpenNMT-py's successor), interleaved A/B.

    .venv/bin/python benchmarks/bench_peers.py [--work benchmarks/.peers] [--direction en-ja]
        [--pairs 20000] [--steps 300] [--warmup-steps 50] [--rounds 2] [--threads 2]
        [--batch-tokens 4096[,8192...]] [--amp] [--device cpu|cuda] [--preset small|base]
        [--wordorder-train-opt KEY=VALUE ...] [--eole-train-opt KEY=VALUE ...]
        [--eole-python PYTHON --eole-pythonpath DIR] [--json out.json]

    # on the GPU machine (benchmarks/gpu/check.sh peers): Transformer-base, bf16, two batch sizes
    python3 benchmarks/bench_peers.py --device cuda --preset base --amp \
        --batch-tokens 8192,25000 --warmup-steps 20 --steps 60 --rounds 1 \
        --eole-python python3 --eole-pythonpath /tmp/eole_site

* eole is installed on the first run into ``--work``/venv (pip, ``-c constraints.txt``, plus
  aiohttp, which eole needs and does not declare); later runs reuse it. Offline, the run stops
  with one ``error:`` line.
* Data: the first ``--pairs`` pairs of ``../shared/data/ja-en_small_parallel_enja/train``,
  segmented once by a joint sentencepiece BPE (``--vocab`` 8000) trained with wordorder's
  trainer, written as space-separated pieces; both toolkits read those files (eole with
  ``transforms: []`` and the sentencepiece vocabulary as its vocabulary, so both output layers
  have the same size). ``--data-only`` makes this folder and stops (``prepare.sh peers`` packs
  it for the GPU machine).
* eole's environment: ``--work``/venv, or ``--eole-python`` with ``--eole-pythonpath`` (eole's
  wheels installed with ``pip --target``: the GPU machine has no network) as the only
  PYTHONPATH of eole's processes. eole runs as ``python -m eole.bin.main`` (its ``eole``
  command).
* The same model: Transformer 3+3 layers, d 256, FFN 1024, 4 heads, pre-norm (eole's decoder
  has no post-norm), biases in every linear layer, one embedding matrix for source, target and
  output, sinusoidal positions, dropout 0.1, no attention dropout, label smoothing 0.1, Adam
  (0.9, 0.98, eps 1e-9) without gradient clipping, the Noam schedule (factor 2, 4000 warm-up
  updates), fp32 (``--amp``: bf16 mixed precision in both, see below) on the CPU with
  ``--threads`` threads (OMP_NUM_THREADS and torch's threads), batches of at most
  ``--batch-tokens`` padded tokens, one batch per update, data prepared in the training
  process (eole ``num_workers: 0``). Both build 7,578,624 parameters. ``--preset base``:
  Transformer-base instead (6+6 layers, d 512, FFN 2048, 8 heads; 44,126,208 parameters with
  the 8k vocabulary), the rest alike.
* ``--device cuda``: both train on GPU 0 (eole ``gpu_ranks [0]``, its single-GPU mode; with
  its default 2 data-loader processes, ``--eole-workers``; wordorder ``train.device: cuda``);
  ``--amp`` is then bf16 autocast in both (eole ``compute_dtype: bf16`` with ``use_amp``,
  wordorder ``train.amp``), float32 weights and Adam. wordorder's clock reads at the window's
  two ends wait for the GPU (``torch.cuda.synchronize``; the updates in between are not
  synchronised by the benchmark); eole's report lines follow its per-step loss read-out.
  eole runs without flash-attn (not installed; ``self_attn_backend`` falls back to torch's
  ``scaled_dot_product_attention``, which has its own flash kernels) and without its optional
  ``EOLE_TORCH_COMPILE``: both toolkits as installed, default settings.
* ``--wordorder-train-opt KEY=VALUE`` (repeatable): more ``train:`` options of wordorder
  (``TrainOptions.from_dict``: an unknown one is an error), e.g. ``cuda_graphs=true``; values
  are read as YAML. ``--eole-train-opt KEY=VALUE``: likewise for eole's ``training`` section.
* ``--batch-tokens 8192,25000``: each size is its own comparison (rounds interleave the
  toolkits within each size: eole, wordorder at the first size, then at the next, ...).
* How a batch is counted (S, T: pieces of a pair). wordorder: n × max(max(S+1, T+1)) over the
  batch (source + EOS, BOS + target), examples sorted by that width then S, cut at ≤ budget,
  per epoch. eole (``batch_type: tokens``, inputters/dynamic_iterator.py): n × max(max(S, T+2))
  (no source EOS; BOS + target + EOS), examples of a bucket (here one pass over the corpus)
  sorted by (S, T+2), an example that overflows the budget starts the next batch, and a source
  already in the batch is dropped. Sorted by source length first, eole's batches carry more
  target padding, hence fewer target tokens per update at the same budget (both shown).
* Not equal: eole uses torch's plain Adam (wordorder the fused one), its own init (xavier),
  no EOS on the source, and logits + loss unfused; these are part of what is measured.
* ``--amp``: both train in bf16 mixed precision on the CPU (float32 weights and Adam, torch's
  CPU autocast): eole with ``compute_dtype: bf16`` and ``use_amp``, wordorder with
  ``train.cpu_amp``; MFU is then against the bf16 ``torch.mm`` peak. It needs a CPU with native
  bf16 (AVX512-BF16 or AMX).
* Rounds: eole, wordorder, eole, wordorder, ... each a fresh process training
  ``--warmup-steps`` + ``--steps`` updates; only updates warmup+1..warmup+steps are timed, from
  the end of update ``warmup`` to the end of the last update (batching, logging every
  gcd(warmup, steps) updates included in both). eole: the timestamps of its reports at those two
  updates; wordorder: a clock read after each call of its update function inside
  :func:`wordorder.train.loop.train`.
* Reported per toolkit, over all its rounds: sentence pairs/s and non-pad target tokens/s
  (EOS included), MFU = model FLOPs (:func:`peers_lib.training_flops`) per second ÷ the fp32
  ``torch.mm`` peak measured in this run (bf16 with ``--amp``; on CUDA 8192² products, and also
  ÷ the data sheet's dense peak), and the peak RSS of each training process (wait4). The JSON
  (``--json``) is rewritten after every run, so a run stopped by a time limit leaves the rounds
  it finished.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peers_lib import (  # noqa: E402
    ARCH,
    EOLE_VERSION,
    PRESETS,
    Eole,
    Lengths,
    eole_config,
    eole_python,
    eole_window,
    external_eole,
    matmul_peak,
    parse_eole_log,
    parse_options,
    training_flops,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "ja-en_small_parallel_enja"


def prepare_data(args) -> Path:
    """Segmented train.src / train.tgt, spm.model and eole's vocab.txt in a cached folder."""
    from wordorder.text.subword import SubwordModel
    from wordorder.text.subword_train import train_sentencepiece

    src, tgt = args.direction.split("-")
    folder = args.work / f"data_{args.direction}_{args.pairs}_{args.vocab}"
    if (folder / "done").is_file():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    lines = {}
    for lang in (src, tgt):
        with gzip.open(args.data / f"train.{lang}.gz", "rt", encoding="utf-8") as f:
            lines[lang] = [line.rstrip("\n") for _, line in zip(range(args.pairs), f)]
        (folder / f"raw.{lang}").write_text("\n".join(lines[lang]) + "\n", encoding="utf-8")
    train_sentencepiece(
        [folder / f"raw.{src}", folder / f"raw.{tgt}"], folder / "spm", args.vocab, seed=1
    )
    sp = SubwordModel(folder / "spm.model")
    for side, lang in (("src", src), ("tgt", tgt)):
        pieces = sp.encode_batch(lines[lang])
        (folder / f"train.{side}").write_text(
            "".join(" ".join(p) + "\n" for p in pieces), encoding="utf-8"
        )
    # eole's vocabulary = the sentencepiece one in id order, its pad token named as eole names it.
    vocab = [sp.id_to_piece(i) for i in range(sp.vocab_size)]
    vocab[0] = "<blank>"
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    (folder / "done").write_text("")
    return folder


def read_pieces(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text(encoding="utf-8").splitlines()]


def wordorder_child(job: dict) -> None:
    """Train wordorder in this process and write the end time and size of each update."""
    import torch

    import wordorder.train.trainer as trainer
    from wordorder.model_io.subwords import read_ids
    from wordorder.models import build_model
    from wordorder.text.subword import SubwordModel
    from wordorder.train.loop import TrainOptions, train

    torch.set_num_threads(job["threads"])
    device = job.get("device", "cpu")
    folder, out = Path(job["data"]), Path(job["out"])
    sp = SubwordModel(folder / "spm.model")
    pairs = list(
        zip(
            read_ids(
                [" ".join(p) for p in read_pieces(folder / "train.src")], sp, folder / "train.src"
            ),
            read_ids(
                [" ".join(p) for p in read_pieces(folder / "train.tgt")], sp, folder / "train.tgt"
            ),
        )
    )
    a = {**ARCH, **job.get("arch", {})}
    torch.manual_seed(job["seed"])
    model = build_model(
        {
            "preset": "small",
            # the shared architecture (ARCH is the small preset; bench_peers_decode may shrink it)
            "d_model": a["d"],
            "d_ff": a["ff"],
            "heads": a["heads"],
            "encoder_layers": a["enc_layers"],
            "decoder_layers": a["dec_layers"],
            "norm": "pre",
            "dropout": a["dropout"],
            "attention_dropout": a["attention_dropout"],
            "tie_embeddings": True,
            "tie_output": True,
        },
        sp.vocab_size,
    )
    amp = job.get("amp", False)
    # TrainOptions.from_dict: the extra options (--wordorder-train-opt) are checked like a
    # config's train: section (an unknown key is an error naming the valid ones).
    opts = TrainOptions.from_dict(
        {
            "device": device,
            "amp": amp and device != "cpu",
            "cpu_amp": amp and device == "cpu",
            "batch_tokens": job["batch_tokens"],
            "lr": a["noam_factor"],
            "schedule": "noam",
            "warmup": a["warmup"],
            "betas": list(a["betas"]),
            "eps": a["eps"],
            "clip_norm": 0.0,
            "label_smoothing": a["label_smoothing"],
            "max_steps": job["steps"],
            "eval_every": 10 * job["steps"],
            "eval_beam": 1,
            "seed": job["seed"],
            "log_every": job["report_every"],
            "threads": job["threads"],
            **job.get("train_opts", {}),
        }
    )
    records: list[tuple[float, int, int, int]] = []
    real_update = trainer.Trainer.update
    # The window's two ends (updates timed_from and steps) wait for the GPU's queued work; the
    # updates in between run as the trainer runs them.
    ends = {job.get("timed_from", 0), job["steps"]} if device != "cpu" else set()

    def timed_update(self, share):
        result = real_update(self, share)
        if len(records) + 1 in ends:
            torch.cuda.synchronize()
        now = time.perf_counter()  # the counts below are taken after the clock
        records.append(
            (
                now,
                sum(len(idx) for idx in share),
                # source tokens with their EOS, no padding (as eole counts them)
                sum(int(self.packed.src.length[list(idx)].sum()) for idx in share),
                sum(self.packed.target_tokens(idx) for idx in share),
            )
        )
        return result

    # Trainer.update runs every update, eager or replayed from CUDA graphs (train.cuda_graphs):
    # the real one, with a clock read after it.
    trainer.Trainer.update = timed_update
    dev = [s for s, _ in pairs[:8]]  # the final evaluation only (untimed): 8 greedy decodings
    train(model, pairs, dev, lambda hyps: 0.0, opts, out / "model")
    if len(records) != job["steps"]:
        sys.exit(
            f"error: {len(records)} calls of wordorder.train.trainer.Trainer.update timed for "
            f"{job['steps']} updates: the trainer no longer runs its updates through that name, "
            "and bench_peers.py's clock (wordorder_child) must follow it"
        )
    (out / "updates.json").write_text(json.dumps(records))


def wordorder_window(records: list, first: int, last: int) -> dict[str, float]:
    inside = records[first:last]
    return {
        "seconds": records[last - 1][0] - records[first - 1][0],
        "sents": sum(r[1] for r in inside),
        "src_tokens": sum(r[2] for r in inside),
        "tgt_tokens": sum(r[3] for r in inside),
    }


def run_child(cmd: list, log: Path, env: dict) -> tuple[float, float]:
    """Run ``cmd`` with its output in ``log``; (wall seconds, peak RSS in MB of that process)."""
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as f:
        proc = subprocess.Popen(
            [str(c) for c in cmd], stdout=f, stderr=subprocess.STDOUT, env=env, cwd=ROOT
        )
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines() or [
            "(no output)"
        ]
        last = ([line for line in lines if "Error" in line] or lines)[-1].strip()
        sys.exit(f"error: {log}: training exited with {proc.returncode}: {last[:300]}")
    return time.perf_counter() - t0, usage.ru_maxrss / 1024


def one_round(
    toolkit: str,
    k: int | str,
    args,
    data: Path,
    eole: Eole,
    every: int,
    arch: dict = ARCH,
    train_from: Path | None = None,
) -> dict:
    """Train ``toolkit`` in a fresh process (``arch``: the shared architecture and schedule)
    with batches of ``args.batch_tokens`` (one size); the timed window of its updates
    (``args.warmup_steps``+1 .. ``args.warmup_steps`` + ``args.steps``), wall time and peak RSS.
    ``train_from``: eole only, an eole model to go on training from (its step count must be
    below the window's start). ``args.device`` (default cpu), ``args.eole_workers``,
    ``args.eole_train_opt`` and ``args.wordorder_train_opt`` are optional."""
    device = getattr(args, "device", "cpu")
    out = args.work / "runs" / f"{k}_{toolkit}"
    if out.exists():
        import shutil

        shutil.rmtree(out)
    out.mkdir(parents=True)
    total = args.warmup_steps + args.steps
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    if toolkit == "eole":
        cfg = eole_config(
            data / "train.src",
            data / "train.tgt",
            data / "vocab.txt",
            out,
            args.batch_tokens,
            total,
            every,
            args.seed,
            args.pairs,
            arch,
            train_from,
            amp=args.amp,
            device=device,
            workers=getattr(args, "eole_workers", None),
            extra=parse_options(getattr(args, "eole_train_opt", None), "--eole-train-opt"),
        )
        (out / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False), encoding="utf-8")
        wall, rss = run_child(
            eole.command("train", "-config", out / "config.yaml"), out / "log.txt", eole.env(env)
        )
        window = eole_window(
            parse_eole_log((out / "log.txt").read_text(encoding="utf-8")),
            args.warmup_steps,
            total,
            every,
        )
    else:
        if train_from is not None:
            raise ValueError("going on from a checkpoint is implemented for eole only")
        job = {
            "data": str(data),
            "out": str(out),
            "threads": args.threads,
            "batch_tokens": args.batch_tokens,
            "steps": total,
            "report_every": every,
            "seed": args.seed,
            "arch": arch,
            "amp": args.amp,
            "device": device,
            "timed_from": args.warmup_steps,
            "train_opts": parse_options(
                getattr(args, "wordorder_train_opt", None), "--wordorder-train-opt"
            ),
        }
        (out / "job.json").write_text(json.dumps(job))
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")])
        )
        wall, rss = run_child(
            [sys.executable, Path(__file__).resolve(), "--wordorder-child", out / "job.json"],
            out / "log.txt",
            env,
        )
        records = json.loads((out / "updates.json").read_text())
        window = wordorder_window(records, args.warmup_steps, total)
    row = {
        "toolkit": toolkit,
        "round": k,
        "batch_tokens": args.batch_tokens,
        "wall_s": wall,
        "peak_rss_mb": rss,
        **window,
    }
    print(
        f"  round {k} {toolkit:9s} ≤ {args.batch_tokens} tokens: "
        f"{window['sents'] / window['seconds']:7.1f} pairs/s, "
        f"{window['tgt_tokens'] / window['seconds']:8.0f} target tok/s, {window['seconds']:.1f} s "
        f"timed, {wall:.0f} s wall, peak RSS {rss:.0f} MB",
        flush=True,
    )
    return row


def summary(
    rows: list[dict],
    lengths: Lengths,
    vocab: int,
    peak: float,
    steps: int,
    arch: dict = ARCH,
    sheet: float | None = None,
) -> dict[str, dict]:
    """Per toolkit over its rounds (``rows`` of one batch size; a toolkit without a finished
    round is left out). ``sheet``: the data sheet's peak, for a second MFU."""
    out = {}
    for toolkit in ("eole", "wordorder"):
        mine = [r for r in rows if r["toolkit"] == toolkit]
        if not mine:
            continue
        sec = sum(r["seconds"] for r in mine)
        src, tgt = sum(r["src_tokens"] for r in mine), sum(r["tgt_tokens"] for r in mine)
        flops = training_flops(src, tgt, lengths, vocab, arch) / sec
        out[toolkit] = {
            "pairs_s": sum(r["sents"] for r in mine) / sec,
            "tgt_tok_s": tgt / sec,
            "src_tok_s": src / sec,
            "tgt_per_update": tgt / (len(mine) * steps),
            "model_flops_s": flops,
            "mfu": flops / peak,
            **({"mfu_datasheet": flops / sheet} if sheet else {}),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in mine),
            "per_round_tgt_tok_s": [r["tgt_tokens"] / r["seconds"] for r in mine],
        }
    if len(out) == 2:
        w, e = out["wordorder"], out["eole"]
        out["ratio"] = {k: w[k] / e[k] for k in ("pairs_s", "tgt_tok_s", "mfu", "peak_rss_mb")}
    return out


def table(by_size: dict[str, dict[str, dict]]) -> str:
    lines = [
        "| batch tokens | toolkit | pairs/s | target tok/s | source tok/s | target tok/update "
        "| MFU | peak RSS MB | target tok/s per round |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    ratios = []
    for size, s in by_size.items():
        for name in ("eole", "wordorder"):
            if name not in s:
                continue
            r = s[name]
            rounds = ", ".join(f"{v:,.0f}" for v in r["per_round_tgt_tok_s"])
            mfu = f"{100 * r['mfu']:.1f} %"
            if "mfu_datasheet" in r:
                mfu += f" ({100 * r['mfu_datasheet']:.1f} % of the data sheet)"
            lines.append(
                f"| {size} | {name} | {r['pairs_s']:,.1f} | {r['tgt_tok_s']:,.0f} "
                f"| {r['src_tok_s']:,.0f} | {r['tgt_per_update']:,.0f} | {mfu} | "
                f"{r['peak_rss_mb']:,.0f} | {rounds} |"
            )
        if "ratio" in s:
            q = s["ratio"]
            ratios.append(
                f"≤ {size} tokens, wordorder / eole: pairs/s {q['pairs_s']:.2f}×, target tok/s "
                f"{q['tgt_tok_s']:.2f}×, MFU {q['mfu']:.2f}×, peak RSS {q['peak_rss_mb']:.2f}×"
            )
    return "\n".join(lines + [""] + ratios)


def data_arguments(ap: argparse.ArgumentParser) -> None:
    """The work folder, the data, device and eole options of :func:`setup` (shared with
    bench_peers_decode.py)."""
    ap.add_argument("--work", type=Path, default=ROOT / "benchmarks" / ".peers")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--direction", choices=("en-ja", "ja-en"), default="en-ja")
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument(
        "--eole-python",
        default=None,
        help="run eole with this python instead of --work/venv (nothing is installed)",
    )
    ap.add_argument(
        "--eole-pythonpath",
        default=None,
        help="with --eole-python: the PYTHONPATH of eole's processes (its wheels, pip --target)",
    )


def setup(args, need_eole: bool = True) -> tuple[Eole | None, Path]:
    """eole (its venv, installed on the first run, or ``--eole-python``) and the segmented
    data folder; ``need_eole`` False: the data alone."""
    if not (args.data / "train.en.gz").is_file():
        sys.exit(
            f"error: {args.data}: the Tanaka corpus (train.en.gz, train.ja.gz) is not there; "
            "the benchmark reads ../shared/data/ja-en_small_parallel_enja next to the "
            "repository (or pass --data)"
        )
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            sys.exit("error: --device cuda: torch sees no CUDA device")
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    if not need_eole:
        eole = None
    elif args.eole_python:
        eole = external_eole(args.eole_python, args.eole_pythonpath)
    else:
        eole = Eole(eole_python(args.work, ROOT / "constraints.txt"))
    return eole, prepare_data(args)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    data_arguments(ap)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup-steps", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--batch-tokens",
        default="4096",
        help="padded tokens per batch; several (8192,25000): one comparison each",
    )
    ap.add_argument("--preset", choices=sorted(PRESETS), default="small")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--amp", action="store_true", help="bf16 mixed precision in both toolkits")
    ap.add_argument(
        "--eole-workers",
        type=int,
        default=None,
        help="eole's data-loader processes (default: 0 on the CPU, eole's 2 on CUDA)",
    )
    ap.add_argument(
        "--wordorder-train-opt",
        action="append",
        metavar="KEY=VALUE",
        help="a further train: option of wordorder (repeatable; value read as YAML)",
    )
    ap.add_argument(
        "--eole-train-opt",
        action="append",
        metavar="KEY=VALUE",
        help="a further training option of eole (repeatable; value read as YAML)",
    )
    ap.add_argument("--data-only", action="store_true", help="make the data folder, then stop")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--wordorder-child", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.wordorder_child:
        return wordorder_child(json.loads(args.wordorder_child.read_text()))
    if args.warmup_steps < 1 or args.steps < 1 or args.rounds < 1:
        ap.error("--warmup-steps, --steps and --rounds must be at least 1")
    try:
        sizes = [int(b) for b in str(args.batch_tokens).split(",")]
    except ValueError:
        ap.error(f"--batch-tokens {args.batch_tokens!r}: integers separated by commas")
    # Checked before the runs (an unknown wordorder option would fail only its first run).
    from wordorder.errors import WordorderError
    from wordorder.train.options import TrainOptions

    try:
        TrainOptions.from_dict(parse_options(args.wordorder_train_opt, "--wordorder-train-opt"))
    except (WordorderError, TypeError, ValueError) as e:
        ap.error(f"--wordorder-train-opt: {e}")
    parse_options(args.eole_train_opt, "--eole-train-opt")
    eole, data = setup(args, need_eole=not args.data_only)
    if args.data_only:
        print(f"data: {data}")
        return
    arch = PRESETS[args.preset]
    vocab = len((data / "vocab.txt").read_text(encoding="utf-8").splitlines())
    lengths = Lengths.of(
        [
            (len(s) + 1, len(t) + 1)
            for s, t in zip(read_pieces(data / "train.src"), read_pieces(data / "train.tgt"))
        ]
    )
    every = math.gcd(args.warmup_steps, args.steps)
    import torch

    where = (
        f"{torch.cuda.get_device_name()}, {args.threads} threads"
        if args.device == "cuda"
        else f"CPU, {args.threads} threads"
    )
    extras = "".join(
        f"; {who} options {opts}"
        for who, opts in (
            ("wordorder train", args.wordorder_train_opt),
            ("eole training", args.eole_train_opt),
        )
        if opts
    )
    print(
        f"{args.direction}, {args.pairs} pairs, vocabulary {vocab}, Transformer "
        f"{arch['enc_layers']}+{arch['dec_layers']} d {arch['d']} FFN {arch['ff']} heads "
        f"{arch['heads']} ({args.preset}), batches ≤ {', '.join(map(str, sizes))} padded tokens, "
        f"{where}, torch {torch.__version__}, eole {EOLE_VERSION}, "
        f"{'bf16 mixed precision' if args.amp else 'fp32'}; updates "
        f"{args.warmup_steps + 1}..{args.warmup_steps + args.steps} timed, reports every {every}"
        f"{extras}",
        flush=True,
    )
    # On CUDA the peak of 8192² products (a 2048² product is too small to fill an H100).
    n = 8192 if args.device == "cuda" else 2048
    peak_name = f"{'bf16' if args.amp else 'fp32'} torch.mm {n}² on {where}"
    sheet = None
    if args.device == "cuda":
        from bench_variants import datasheet_peak

        sheet = datasheet_peak("cuda")
    unit, scale = ("TFLOP/s", 1e12) if args.device == "cuda" else ("GFLOP/s", 1e9)
    peaks = [matmul_peak(args.threads, n, bf16=args.amp, device=args.device)]
    print(f"{peak_name}: {peaks[0] / scale:,.1f} {unit}", flush=True)
    rows: list[dict] = []
    failed: dict[str, str] = {}  # toolkit -> its first failure; its later runs are skipped

    def report(final: bool) -> dict[str, dict]:
        peak = max(peaks)
        by_size = {}
        for size in sizes:
            mine = [r for r in rows if r["batch_tokens"] == size]
            if mine:
                by_size[str(size)] = summary(mine, lengths, vocab, peak, args.steps, arch, sheet)
        if args.json:
            record = {
                "complete": final,
                "device": where,
                "torch": torch.__version__,
                "eole": EOLE_VERSION,
                "preset": args.preset,
                "arch": arch,
                "peak_name": peak_name,
                "peaks": peaks,
                "datasheet_peak": sheet,
                "rows": rows,
                "failed": failed,
                "summary": by_size,
                "lengths": vars(lengths),
                "args": {k: str(v) for k, v in vars(args).items()},
            }
            args.json.write_text(json.dumps(record, indent=2) + "\n")
        return by_size

    for k in range(1, args.rounds + 1):
        for size in sizes:
            one = argparse.Namespace(**{**vars(args), "batch_tokens": size})
            name = f"{k}_{size}" if len(sizes) > 1 else k
            for toolkit in ("eole", "wordorder"):
                if toolkit in failed:
                    continue
                try:
                    rows.append(one_round(toolkit, name, one, data, eole, every, arch))
                except SystemExit as e:  # a failed training: the other toolkit still runs
                    failed[toolkit] = str(e.code)
                    print(f"  {toolkit} failed, not run again: {e.code}", flush=True)
                    continue
                rows[-1]["round"] = k
                report(final=False)
    peaks.append(matmul_peak(args.threads, n, bf16=args.amp, device=args.device))
    peak = max(peaks)
    by_size = report(final=True)
    print(
        f"{peak_name}: {', '.join(f'{p / scale:,.1f}' for p in peaks)} {unit} (before, after); "
        f"MFU against {peak / scale:,.1f}"
        + (f"; the data sheet's {sheet / 1e12:.0f} TFLOP/s in brackets" if sheet else "")
    )
    print(table(by_size))
    if failed:
        sys.exit(f"error: {', '.join(failed)} failed (see above)")


if __name__ == "__main__":
    main()
