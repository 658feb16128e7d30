"""Decoding speed of wordorder against eole 0.6.4 on models trained alike, at equal BLEU.

    .venv/bin/python benchmarks/bench_peers_decode.py [--work benchmarks/.peers] [--direction en-ja]
        [--updates 2500] [--eole-updates N] [--warmup 400] [--peak-lr 0.002] [--beam 4]
        [--rounds 2] [--threads 2] [--amp] [--device cpu|cuda] [--trained-only]
        [--eole-python PYTHON --eole-pythonpath DIR]
        [--d 256 --ff 1024 --heads 4 --layers 3] [--json out.json]

    # on the GPU machine (benchmarks/gpu/check.sh peers), with the models trained here and packed
    # by benchmarks/gpu/prepare.sh peers (the training settings must be these):
    python3 benchmarks/bench_peers_decode.py --device cuda --trained-only --direction ja-en \
        --vocab 4000 --d 128 --ff 512 --heads 4 --layers 2 --batch-tokens 2000 --updates 3000 \
        --eole-updates 5000 --warmup 300 --rounds 2 --work /tmp/peers_work \
        --eole-python python3 --eole-pythonpath /tmp/eole_site

* Training: both toolkits train the shared architecture of ``bench_peers.py`` (or the width and
  depth given by ``--d/--ff/--heads/--layers``; same data,
  segmentation, batches of ≤ ``--batch-tokens`` padded tokens, Adam, label smoothing, dropout)
  for ``--updates`` updates each, one fresh process each, with the Noam schedule scaled to peak
  at ``--peak-lr`` after ``--warmup`` updates (bench_peers' 4,000 warm-up updates are for its
  short timing window; a converged model needs the peak early). Training speed over updates
  101..N is printed too. The trained models stay in ``--work``/runs/model_<toolkit> and a later
  run with the same settings reuses them: on this project's 2-core machines 2,000 updates take
  about an hour per toolkit, so train once (the machine may be busy), then measure the decoding
  alone on a quiet machine. ``--eole-updates`` trains eole longer where it needs more updates
  than wordorder for equal BLEU; it goes on from the eole model trained with fewer updates (same
  settings otherwise) where there is one, with its optimizer state and step count, so the Noam
  schedule is that of one training from scratch. ``--amp``: both train in bf16 mixed precision
  (as in ``bench_peers.py --amp``); decoding stays float32 in both.
* Test: the first ``--test`` sentences of the Tanaka test set, segmented with the same
  sentencepiece model; BLEU (sacrebleu, ``tokenize none``) of the decoded pieces joined back into
  words, against the corpus' tokenized references. Equal BLEU (within ``--bleu-tolerance``) or the
  speed comparison is void, and the script says so.
* Decoding: beam ``--beam``, length normalisation by the mean log-probability per token (eole
  ``length_penalty avg``, wordorder ``length_penalty 1``), each toolkit in its own fresh process per
  run, rounds interleaved (eole, wordorder, eole, wordorder, ...), two batchings each: ``sents``
  (``--batch-sents`` sentences per batch, eole's way; wordorder ``batch_size``) and ``tokens``
  (``--batch-tokens-decode`` source tokens per batch, wordorder's way; eole ``batch_type tokens``).
  Timed: eole's own report (``-report_time``: step 0 + the subsequent prediction time, i.e. from
  the first batch to the last prediction, model loading excluded); wordorder: the call of
  :func:`wordorder.decode.beam.translate_batches` (the same span). Process wall time (start-up,
  loading, writing) is reported beside. Output tokens = pieces of the best hypothesis + EOS.
* ``--device cuda``: both decode on GPU 0 (eole ``-gpu_ranks 0``; wordorder loads the model
  there before its clock starts), float32 as on the CPU; the timed span includes each process'
  first CUDA kernels (cuBLAS set-up) in both. The models are trained beforehand (on the CPU:
  a GPU call is too short for it) and found by their settings in ``--work``/runs:
  ``--trained-only`` stops with an error instead of training when they are not there. The
  JSON (``--json``) is rewritten after every decoding run, so a run stopped by a time limit
  leaves the runs it finished.
* eole's environment (``--eole-python``, ``--eole-pythonpath``) as in ``bench_peers.py``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_peers import ROOT, data_arguments, one_round, read_pieces, run_child, setup  # noqa: E402
from peers_lib import ARCH, EOLE_VERSION, Eole  # noqa: E402

_EOLE_TIME = {
    "step0": re.compile(r"Step 0 time \(s\): ([\d.]+)"),
    "rest": re.compile(r"Subsequent prediction time including all \(s\): ([\d.]+)"),
}


def test_set(args, data: Path) -> tuple[Path, list[str]]:
    """The segmented test sources (``test.src``) and the tokenized references."""
    import gzip

    from wordorder.text.subword import SubwordModel

    src, tgt = args.direction.split("-")
    lines = {}
    for lang in (src, tgt):
        with gzip.open(args.data / f"test.{lang}.gz", "rt", encoding="utf-8") as f:
            lines[lang] = [line.rstrip("\n") for _, line in zip(range(args.test), f)]
    path = data / f"test{args.test}.src"
    pieces = SubwordModel(data / "spm.model").encode_batch(lines[src])
    path.write_text("".join(" ".join(p) + "\n" for p in pieces), encoding="utf-8")
    return path, lines[tgt]


def wordorder_decode_child(job: dict) -> None:
    """Decode in this process; write the pieces and the decode time."""
    import torch

    from wordorder.decode.batches import translate_batches
    from wordorder.model_io.checkpoint import load_model
    from wordorder.model_io.subwords import read_ids
    from wordorder.text.subword import SubwordModel

    torch.set_num_threads(job["threads"])
    device = job.get("device", "cpu")
    sp = SubwordModel(Path(job["spm"]))
    model, _ = load_model(job["model"], device)
    src = read_ids(Path(job["src"]).read_text(encoding="utf-8").splitlines(), sp, Path(job["src"]))
    t0 = time.perf_counter()
    hyps = translate_batches(
        model,
        src,
        batch_tokens=job["batch_tokens"],
        batch_size=job["batch_size"],
        beam_size=job["beam"],
        length_penalty=1.0,
        device=device,
        progress=False,
        cuda_graphs=job.get("cuda_graphs", False),
    )
    seconds = time.perf_counter() - t0
    lines = [" ".join(sp.id_to_piece(i) for i in h) for h in hyps]
    Path(job["output"]).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    Path(job["timing"]).write_text(json.dumps({"seconds": seconds}))


def decode(
    toolkit: str,
    batching: str,
    k: int,
    args,
    models: dict,
    test_src: Path,
    eole: Eole,
    data: Path,
):
    """One decoding run in a fresh process: (decode seconds, wall seconds,
    output pieces per line)."""
    out = args.work / "decode" / f"{k}_{toolkit}_{batching}"
    out.mkdir(parents=True, exist_ok=True)
    hyp, log = out / "hyp.txt", out / "log.txt"
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads), "MKL_NUM_THREADS": str(args.threads)}
    size = args.batch_sents if batching == "sents" else args.batch_tokens_decode
    if toolkit == "eole":
        cmd = eole.command(
            "predict", "-model_path", models["eole"], "-src", test_src, "-output", hyp
        )
        cmd += [
            "-beam_size",
            args.beam,
            "-length_penalty",
            "avg",
            "-batch_type",
            batching,
            "-batch_size",
            size,
        ]
        cmd += ["-compute_dtype", "fp32", "-report_time"]
        if getattr(args, "device", "cpu") == "cuda":
            cmd += ["-gpu_ranks", "0", "-world_size", "1"]
        wall, _ = run_child(cmd, log, eole.env(env))
        text = log.read_text(encoding="utf-8")
        found = {name: pattern.search(text) for name, pattern in _EOLE_TIME.items()}
        if not all(found.values()):
            sys.exit(f"error: {log}: eole reported no prediction time (-report_time)")
        seconds = sum(float(m.group(1)) for m in found.values() if m)
    else:
        job = {
            "spm": str(data / "spm.model"),
            "model": str(models["wordorder"]),
            "src": str(test_src),
            "output": str(hyp),
            "timing": str(out / "timing.json"),
            "threads": args.threads,
            "beam": args.beam,
            "batch_size": size if batching == "sents" else None,
            "batch_tokens": 10**9 if batching == "sents" else size,
            "device": getattr(args, "device", "cpu"),
            "cuda_graphs": getattr(args, "wordorder_cuda_graphs", False),
        }
        (out / "job.json").write_text(json.dumps(job))
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")])
        )
        script = Path(__file__).resolve()
        wall, _ = run_child([sys.executable, script, "--decode-child", out / "job.json"], log, env)
        seconds = json.loads((out / "timing.json").read_text())["seconds"]
    return seconds, wall, read_pieces(hyp)


def earlier_eole(runs: Path, settings: dict) -> tuple[Path, int] | None:
    """The eole model trained with ``settings`` except for fewer updates (the most such), which
    a longer training can go on from: (its folder, its updates), or None."""
    found = None
    for done in sorted(runs.glob("model_eole*/done.json")):
        had = json.loads(done.read_text(encoding="utf-8"))["settings"]
        n = int(had["updates"])
        same = {**had, "updates": settings["updates"]} == settings
        if same and n + 100 < int(settings["updates"]) and (found is None or n > found[1]):
            found = (done.parent, n)
    return found


def trained(toolkit: str, args, data: Path, eole: Eole, arch: dict, settings: dict) -> dict:
    """Train ``toolkit`` for ``settings["updates"]`` updates (into runs/model_<toolkit>), unless
    a finished training with the same settings is there; its training row. eole goes on from
    its model with the same settings and fewer updates where there is one (the earlier model
    then moves to runs/model_eole_<updates>): eole restores the optimizer and the step count,
    so the schedule is that of one training from scratch. ``args.trained_only``: an error
    instead of a training."""
    runs = args.work / "runs"
    folder = runs / f"model_{toolkit}"
    done = folder / "done.json"
    record = json.loads(done.read_text(encoding="utf-8")) if done.is_file() else None
    if record is not None and record["settings"] == settings:
        print(f"  {toolkit}: reusing the model trained with these settings ({folder})", flush=True)
        return record["row"]
    if getattr(args, "trained_only", False):
        had = "none" if record is None else json.dumps(record["settings"], sort_keys=True)
        sys.exit(
            f"error: --trained-only: {folder} holds no {toolkit} model trained with "
            f"{json.dumps(settings, sort_keys=True)} (it has: {had}); train it with the same "
            "options without --trained-only (benchmarks/gpu/prepare.sh peers trains and packs them)"
        )
    updates = int(settings["updates"])
    start = earlier_eole(runs, settings) if toolkit == "eole" else None
    window = argparse.Namespace(**vars(args))
    window.warmup_steps, window.steps, train_from = 100, updates - 100, None
    if start is not None:
        source, n = start
        if source == folder:
            kept = runs / f"model_eole_{n}"
            if kept.exists():
                shutil.rmtree(kept)
            folder.rename(kept)
            source = kept
        print(f"  eole: going on from its {n}-update model ({source})", flush=True)
        window.warmup_steps, window.steps, train_from = n + 100, updates - n - 100, source / "model"
    every = math.gcd(window.warmup_steps, window.steps)
    row = one_round(toolkit, "model", window, data, eole, every, arch, train_from)
    row["window"] = f"{window.warmup_steps + 1}..{updates}"
    done.write_text(json.dumps({"settings": settings, "row": row}), encoding="utf-8")
    return row


def bleu(pieces: list[list[str]], refs: list[str]) -> float:
    import sacrebleu

    words = ["".join(p).replace("▁", " ").strip() for p in pieces]
    # The references are the corpus' tokenized side, on purpose (tokenize none): no warning.
    return sacrebleu.corpus_bleu(words, [refs], tokenize="none", force=True).score


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    data_arguments(ap)
    ap.add_argument("--updates", type=int, default=2500)
    ap.add_argument(
        "--eole-updates",
        type=int,
        default=None,
        help="eole's updates where it needs more than wordorder for equal BLEU (default: "
        "--updates); goes on from an eole model trained with fewer updates where there is one",
    )
    ap.add_argument("--warmup", type=int, default=400)
    ap.add_argument("--peak-lr", type=float, default=0.002)
    ap.add_argument("--batch-tokens", type=int, default=4096)
    ap.add_argument("--d", type=int, default=ARCH["d"], help="model width (both toolkits)")
    ap.add_argument("--ff", type=int, default=ARCH["ff"], help="feed-forward width")
    ap.add_argument("--heads", type=int, default=ARCH["heads"])
    ap.add_argument(
        "--layers", type=int, default=ARCH["enc_layers"], help="encoder and decoder layers each"
    )
    ap.add_argument("--test", type=int, default=500)
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--batch-sents", type=int, default=30, help="eole's default batch_size")
    ap.add_argument(
        "--batch-tokens-decode", type=int, default=4000, help="wordorder's default batch_tokens"
    )
    ap.add_argument(
        "--rounds", type=int, default=2, help="decoding rounds (0: train the models, then stop)"
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bleu-tolerance", type=float, default=1.0)
    ap.add_argument("--amp", action="store_true", help="train both in bf16 mixed precision")
    ap.add_argument(
        "--trained-only",
        action="store_true",
        help="decode the models trained earlier (in --work/runs); an error if they are not there",
    )
    ap.add_argument(
        "--wordorder-cuda-graphs",
        action="store_true",
        help="wordorder decodes with decode.cuda_graphs (the search of static shapes, its step "
        "replayed from a CUDA graph on a GPU)",
    )
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--decode-child", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.decode_child:
        return wordorder_decode_child(json.loads(args.decode_child.read_text()))
    args.eole_updates = args.eole_updates or args.updates
    if min(args.updates, args.eole_updates) <= 100 or args.warmup < 1:
        ap.error(
            "--updates and --eole-updates must exceed 100 (the training window starts there) "
            "and --warmup be at least 1"
        )
    eole, data = setup(args)
    test_src, refs = test_set(args, data)
    # Noam: lr = factor · d^-0.5 · min(step^-0.5, step · warmup^-1.5), peak
    # factor · (d · warmup)^-0.5.
    arch = {
        **ARCH,
        "d": args.d,
        "ff": args.ff,
        "heads": args.heads,
        "enc_layers": args.layers,
        "dec_layers": args.layers,
        "warmup": args.warmup,
        "noam_factor": args.peak_lr * math.sqrt(args.d * args.warmup),
    }
    import torch

    where = torch.cuda.get_device_name() if args.device == "cuda" else "the CPU"
    print(
        f"{args.direction}, {args.pairs} pairs, BPE {args.vocab}, Transformer {args.layers}+"
        f"{args.layers} d {args.d} FFN {args.ff} heads {args.heads}, "
        f"{args.updates} updates (eole {args.eole_updates}) of ≤ {args.batch_tokens} "
        f"tokens (peak lr {args.peak_lr:g} at update {args.warmup}), test {args.test} sentences, "
        f"beam {args.beam}, {args.threads} threads, torch {torch.__version__}, eole {EOLE_VERSION}"
        f"{', trained in bf16 mixed precision' if args.amp else ''}, decoding on {where}",
        flush=True,
    )
    # Training (bench_peers' rounds: the window is updates 101..N), once per settings: a later run
    # (say, the decoding again on a quiet machine) reuses the trained models.
    settings = {
        k: str(getattr(args, k)) for k in ("direction", "pairs", "vocab", "batch_tokens", "seed")
    }
    settings["arch"] = json.dumps(arch, sort_keys=True)
    if args.amp:  # float32 models keep the settings (and so the reuse) of earlier runs
        settings["amp"] = "bf16"
    rows = [
        trained(t, args, data, eole, arch, {**settings, "updates": str(n)})
        for t, n in (("eole", args.eole_updates), ("wordorder", args.updates))
    ]
    if args.rounds < 1:
        print("models ready (--rounds 0: no decoding)")
        return
    runs = args.work / "runs"
    models = {
        "eole": runs / "model_eole" / "model",
        "wordorder": runs / "model_wordorder" / "model" / "best.pt",
    }
    results: list[dict] = []
    failed: dict[str, str] = {}  # toolkit -> its first failure; its later runs are skipped
    for k in range(1, args.rounds + 1):
        for batching in ("sents", "tokens"):
            for toolkit in ("eole", "wordorder"):
                if toolkit in failed:
                    continue
                try:
                    seconds, wall, pieces = decode(
                        toolkit, batching, k, args, models, test_src, eole, data
                    )
                except SystemExit as e:  # a failed decoding: the other toolkit still runs
                    failed[toolkit] = str(e.code)
                    print(f"  {toolkit} failed, not run again: {e.code}", flush=True)
                    write_json(args, rows, results, where, False, failed)
                    continue
                out_tokens = sum(len(p) + 1 for p in pieces)
                row = {
                    "toolkit": toolkit,
                    "batching": batching,
                    "round": k,
                    "seconds": seconds,
                    "wall_s": wall,
                }
                row.update(out_tokens=out_tokens, bleu=bleu(pieces, refs), sents=len(pieces))
                results.append(row)
                print(
                    f"  round {k} {toolkit:9s} by {batching:6s}: {len(pieces) / seconds:6.1f} "
                    f"sent/s, {out_tokens / seconds:7.0f} output tok/s, BLEU {row['bleu']:.2f}, "
                    f"{seconds:.2f} s decoding, {wall:.1f} s wall",
                    flush=True,
                )
                write_json(args, rows, results, where, False, failed)
    write_json(args, rows, results, where, not failed, failed)
    if failed:
        sys.exit(f"error: {', '.join(failed)} failed (see above)")
    print(report(rows, results, args))


def write_json(
    args,
    train_rows: list[dict],
    rows: list[dict],
    where: str,
    complete: bool,
    failed: dict[str, str],
):
    """The runs so far (and, per batching with both toolkits decoded, the summary) in
    ``args.json``; ``failed``: the toolkits that failed, with their errors."""
    if not args.json:
        return
    summary = {}
    for batching in ("sents", "tokens"):
        speed = {}
        for toolkit in ("eole", "wordorder"):
            mine = [r for r in rows if r["toolkit"] == toolkit and r["batching"] == batching]
            if mine:
                sec = sum(r["seconds"] for r in mine)
                speed[toolkit] = {
                    "out_tok_s": sum(r["out_tokens"] for r in mine) / sec,
                    "sent_s": sum(r["sents"] for r in mine) / sec,
                    "bleu": mine[0]["bleu"],
                    "runs": len(mine),
                }
        if len(speed) == 2:
            gap = abs(speed["eole"]["bleu"] - speed["wordorder"]["bleu"])
            speed["ratio_out_tok_s"] = speed["wordorder"]["out_tok_s"] / speed["eole"]["out_tok_s"]
            speed["bleu_gap"] = gap
            speed["equal_bleu"] = gap <= args.bleu_tolerance
        summary[batching] = speed
    record = {
        "complete": complete,
        "failed": failed,
        "device": where,
        "bleu_tolerance": args.bleu_tolerance,
        "summary": summary,
        "train": train_rows,
        "decode": rows,
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    args.json.write_text(json.dumps(record, indent=2) + "\n")


def report(train_rows: list[dict], rows: list[dict], args) -> str:
    pairs_s = {r["toolkit"]: r["sents"] / r["seconds"] for r in train_rows}
    window = {r["toolkit"]: r.get("window", f"101..{args.updates}") for r in train_rows}
    lines = [
        f"training: eole {pairs_s['eole']:.1f} pairs/s (updates {window['eole']}), wordorder "
        f"{pairs_s['wordorder']:.1f} pairs/s (updates {window['wordorder']}), "
        f"{pairs_s['wordorder'] / pairs_s['eole']:.2f}×",
        "",
        (
            "| batching | toolkit | BLEU | sent/s | output tok/s | decode s "
            "(rounds) | wall s (rounds) |"
        ),
        "| --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    ratios = []
    for batching in ("sents", "tokens"):
        speed = {}
        for toolkit in ("eole", "wordorder"):
            mine = [r for r in rows if r["toolkit"] == toolkit and r["batching"] == batching]
            sec = sum(r["seconds"] for r in mine)
            speed[toolkit] = (sum(r["out_tokens"] for r in mine) / sec, mine[0]["bleu"])
            decode_s = ", ".join(f"{r['seconds']:.2f}" for r in mine)
            wall_s = ", ".join(f"{r['wall_s']:.1f}" for r in mine)
            lines.append(
                f"| {batching} | {toolkit} | {mine[0]['bleu']:.2f} | "
                f"{sum(r['sents'] for r in mine) / sec:.1f} | {speed[toolkit][0]:,.0f} "
                f"| {decode_s} | {wall_s} |"
            )
        equal = abs(speed["eole"][1] - speed["wordorder"][1]) <= args.bleu_tolerance
        ratio = speed["wordorder"][0] / speed["eole"][0]
        paired, best = round_ratios(rows, batching)
        ratios.append(
            f"by {batching}: wordorder / eole output tok/s {ratio:.2f}× over all rounds; "
            f"median of the rounds' paired ratios {statistics.median(paired):.2f}× "
            f"({', '.join(f'{r:.2f}' for r in paired)}); best round of each {best:.2f}×"
            + ("" if equal else f" (VOID: BLEU differs by more than {args.bleu_tolerance})")
        )
    return "\n".join(lines + [""] + ratios)


def round_ratios(rows: list[dict], batching: str) -> tuple[list[float], float]:
    """wordorder / eole output tok/s in each round (the two runs of a round are adjacent in
    time, so they share the machine's state), and the ratio of each toolkit's fastest round
    (the least disturbed run of each, the ``timeit`` convention): on a shared VM whose speed
    drifted by up to 5× between minutes (2026-11-26), the totals mix fast and slow periods."""
    tok_s = {
        (r["toolkit"], r["round"]): r["out_tokens"] / r["seconds"]
        for r in rows
        if r["batching"] == batching
    }
    rounds = sorted({k for _, k in tok_s})
    paired = [tok_s["wordorder", k] / tok_s["eole", k] for k in rounds]
    best = max(tok_s["wordorder", k] for k in rounds) / max(tok_s["eole", k] for k in rounds)
    return paired, best


if __name__ == "__main__":
    main()
