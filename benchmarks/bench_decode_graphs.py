"""Beam search of static shapes (``decode.cuda_graphs``) against the default search, in one run.

Decodes the first ``--n`` lines of a source file with a trained checkpoint two ways, rounds
interleaved: ``default`` (:mod:`wordorder.decode.beam`: finished sentences dropped, the device
asked at every step) and the search of static shapes (:mod:`wordorder.decode.static_beam`):
``static`` on the CPU (eager), ``graphs`` on CUDA (each step replayed from a CUDA graph).
Prints sentences/s and output tokens/s of each way's fastest round, the ratios to
``default``, and how many hypotheses differ from ``default``'s (0 expected on the CPU; a
near tie may order otherwise on a GPU).

    .venv/bin/python benchmarks/bench_decode_graphs.py --checkpoint best.pt --spm spm.model \\
        --src test500.src [--device cuda] [--n 500]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from wordorder.decode.batches import translate_batches
from wordorder.model_io.checkpoint import load_model
from wordorder.model_io.subwords import read_ids
from wordorder.text.subword import SubwordModel


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--checkpoint", type=Path, required=True)
    ap.add_argument("--spm", type=Path, required=True, help="the source side's subword model")
    ap.add_argument("--src", type=Path, required=True, help="subword-encoded source lines")
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--beam", type=int, default=4)
    ap.add_argument("--batch-tokens", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    model, _ = load_model(args.checkpoint, args.device)
    lines = args.src.read_text(encoding="utf-8").splitlines()[: args.n]
    sources = read_ids(lines, SubwordModel(args.spm), args.src)
    device = torch.device(args.device)
    # the static search: eager on the CPU, each step replayed from a CUDA graph on a GPU
    modes = {"default": False, "graphs" if device.type == "cuda" else "static": True}
    best: dict[str, float] = {}
    out: dict[str, list[list[int]]] = {}
    for _ in range(args.rounds):
        for mode, static in modes.items():
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            out[mode] = translate_batches(
                model,
                sources,
                batch_tokens=args.batch_tokens,
                beam_size=args.beam,
                device=device,
                progress=False,
                cuda_graphs=static,
            )
            best[mode] = min(best.get(mode, float("inf")), time.perf_counter() - start)
    tokens = sum(len(h) + 1 for h in out["default"])
    print(
        f"{len(sources)} sentences, beam {args.beam}, {args.batch_tokens}-token batches, "
        f"{args.device}, fastest of {args.rounds} rounds:"
    )
    for mode, seconds in best.items():
        differ = sum(a != b for a, b in zip(out[mode], out["default"]))
        print(
            f"  {mode:8s} {len(sources) / seconds:8.1f} sent/s {tokens / seconds:9.0f} output tok/s"
            f"  {best['default'] / seconds:.2f}x default  ({differ} hypotheses differ)"
        )


if __name__ == "__main__":
    main()
