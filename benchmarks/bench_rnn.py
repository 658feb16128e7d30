"""Training speed and peak memory of every RNN-family system against RNNsearch, in one run, and
the memory of Zhang 2018's relation-network layer, naive against chunked.

Setup: the data and update of ``bench_variants.py`` (English→Japanese Tanaka pairs, joint BPE,
≈ ``--target-tokens`` target tokens per update, the training loop's own ``update``), the
``rnn_small`` preset (embeddings and GRU states 256), fp32, ``--threads`` threads. Systems reading
the dependency tree get a random tree per sentence (each subword its own word, word i > 0 under
a uniformly chosen earlier word): speed depends on the tree only through its depth, which such
trees have close to a parser's (≈ e·ln n).

Peak memory: each system trains in a forked child process; on CUDA the peak of
``torch.cuda.max_memory_allocated``, on the CPU the growth of the child's peak resident set
(``ru_maxrss``) over the updates — model, optimizer state and activations.

Relation network: one ``RelationLayer`` (input 512, CNN 1/3 with 128/256 channels, 4-layer g of
256, as in the paper) forward + backward on a batch of ``--rn-batch`` sentences of length 50 and
100, the naive pairwise form (the (B, L, L, 2C) concatenation) against the split-and-chunked one.

    .venv/bin/python benchmarks/bench_rnn.py [--variants a,b] [--steps 60] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import resource
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_variants import DATA, choose_batch_tokens, load_data, train_speed  # noqa: E402

from wordorder.config import load_variants  # noqa: E402
from wordorder.device import keep_freed_cpu_memory  # noqa: E402
from wordorder.models import build_model  # noqa: E402
from wordorder.models.registry import resolve_options  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def random_trees(sources: list[list[int]], seed: int) -> dict[str, list[list[int]]]:
    """``word``/``head`` inputs of a random tree per sentence (see the module docstring)."""
    rng = random.Random(seed)
    heads = [
        [0] + [rng.randrange(1, i + 1) for i in range(1, len(s))] if s else [] for s in sources
    ]
    return {"word": [list(range(len(s))) for s in sources], "head": heads}


def peak_bytes_so_far() -> int:
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated()
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _measure(options: dict, vocab: int, pairs, batch_tokens: int, args, out) -> None:
    """Child process: train ``args.steps`` updates, report speed and the peak-memory growth."""
    torch.set_num_threads(args.threads)
    before = peak_bytes_so_far()
    torch.manual_seed(args.seed)
    model = build_model(options, vocab)
    feats = random_trees([s for s, _ in pairs], args.seed) if model.options.syntax_tree() else None
    speed = train_speed(model, pairs, feats, batch_tokens, args)
    out.put(
        {
            "params": sum(p.numel() for p in model.parameters()),
            "train": speed,
            "peak_mb": (peak_bytes_so_far() - before) / 2**20,
        }
    )


def in_child(target, *args) -> dict:
    ctx = mp.get_context("fork")  # the child inherits the data; its own peak is measured
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    result = queue.get()
    proc.join()
    return result


def _relation_memory(length: int, naive: bool, args, out) -> None:
    from wordorder.models import relation

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    layer = relation.RelationLayer(512)
    x = torch.randn(args.rn_batch, length, 512, requires_grad=True)
    pad = torch.zeros(args.rn_batch, length, dtype=torch.bool)
    if naive:  # the same layer with the graph propagation replaced by the naive form
        relation.graph_propagation = lambda c, valid, layers, chunk, pad_quirk, slope, checkpoint: (
            relation.naive_graph_propagation(c, valid, layers, pad_quirk, slope)
        )
    before = peak_bytes_so_far()
    layer(x, pad).sum().backward()
    out.put({"peak_mb": (peak_bytes_so_far() - before) / 2**20})


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--baseline", default="zhang2018_rnnsearch")
    ap.add_argument(
        "--variants", default=None, help="comma-separated names (default: every rnn_small system)"
    )
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--timed-from", type=int, default=10)
    ap.add_argument("--target-tokens", type=float, default=2048)
    ap.add_argument("--pairs", type=int, default=20_000)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--rn-batch", type=int, default=16)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/wordorder_bench"))
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    args.decode_sentences = 0
    if not args.data.is_dir():
        ap.error(f"{args.data} not found: the benchmark reads the shared ja-en corpus")
    torch.set_num_threads(args.threads)
    keep_freed_cpu_memory()
    registry = load_variants(ROOT / "configs" / "variants.yaml")
    names = (
        args.variants.split(",")
        if args.variants
        else [n for n, e in registry.items() if e["model"].get("preset") == "rnn_small"]
    )
    names = [args.baseline] + [n for n in names if n != args.baseline]
    vocab, pairs, _ = load_data(args)
    batch_tokens = choose_batch_tokens(pairs, args.target_tokens, args.seed * 100_003 + 1)
    print(
        f"{len(pairs)} pairs, vocabulary {vocab}, batch_tokens {batch_tokens}, {args.threads} "
        f"threads, torch {torch.__version__}",
        flush=True,
    )
    rows = []
    for name in names:
        options = dict(registry[name]["model"])
        resolve_options(dict(options))  # fail early on a bad entry
        row = {"variant": name, **in_child(_measure, options, vocab, pairs, batch_tokens, args)}
        rows.append(row)
        print(
            f"  {name}: {row['train']['tok_s']:,.0f} tok/s, peak +{row['peak_mb']:,.0f} MB",
            flush=True,
        )
    base = rows[0]
    lines = [
        "| system | params | train tok/s | ratio | peak memory (MB) | ratio |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {r['params']:,} | {r['train']['tok_s']:,.0f} | "
            f"{r['train']['tok_s'] / base['train']['tok_s']:.2f} | {r['peak_mb']:,.0f} | "
            f"{r['peak_mb'] / max(base['peak_mb'], 1e-9):.2f} |"
        )
    print("\n".join(lines))
    rn = []
    for length in (50, 100):
        naive = in_child(_relation_memory, length, True, args)["peak_mb"]
        chunked = in_child(_relation_memory, length, False, args)["peak_mb"]
        rn.append({"length": length, "naive_mb": naive, "chunked_mb": chunked})
    print(
        f"\nRelation layer, forward + backward, batch {args.rn_batch}:\n"
        "| source length | naive (MB) | chunked (MB) | naive / chunked |\n"
        "| ---: | ---: | ---: | ---: |"
    )
    for r in rn:
        print(
            f"| {r['length']} | {r['naive_mb']:,.0f} | {r['chunked_mb']:,.0f} | "
            f"{r['naive_mb'] / max(r['chunked_mb'], 1e-9):.1f} |"
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "rows": rows,
                    "relation": rn,
                    "batch_tokens": batch_tokens,
                    "args": {k: str(v) for k, v in vars(args).items()},
                },
                indent=2,
            )
            + "\n"
        )


if __name__ == "__main__":
    main()
