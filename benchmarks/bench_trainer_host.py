"""Host time of the trainer's loop per update, besides the update itself, and where it goes.

The real trainer (``wordorder.train.loop.train``) on Tanaka en->ja pairs (word ids; lengths as
the peers benchmark's data), with ``wordorder.train.trainer.update`` wrapped by a clock: the
gap between the end of one update and the start of the next is host work the device waits
through (batching, padding, logging, stop checks). ``--noop`` replaces the update by a no-op,
so only that work is timed (any machine); without it the real update runs too (``--device
cuda``: the per-update wall time the peers benchmark measures). ``--profile N`` prints the N
functions with the most own time (cProfile).

    .venv/bin/python benchmarks/bench_trainer_host.py --noop [--code OTHER_CHECKOUT/src]
    python3 benchmarks/bench_trainer_host.py --device cuda --preset base --profile 25
"""

from __future__ import annotations

import argparse
import cProfile
import gzip
import pstats
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ja-en_small_parallel_enja"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--noop", action="store_true", help="time the loop's own work only")
    ap.add_argument("--profile", type=int, default=0, help="print the top N functions")
    ap.add_argument("--code", help="import wordorder from this src folder (before/after)")
    a = ap.parse_args()
    if a.code:
        sys.path.insert(0, a.code)
    import torch

    import wordorder.train.trainer as trainer
    from wordorder.models import build_model
    from wordorder.train.loop import TrainOptions, train

    vocab: dict[str, int] = {}

    def ids(line: str) -> list[int]:
        return [vocab.setdefault(w, len(vocab) + 4) % 7990 + 4 for w in line.split()]

    folder = Path(a.data)
    pairs = list(
        zip(
            [ids(x) for x in gzip.open(folder / "train.en.gz", "rt", encoding="utf-8")],
            [ids(x) for x in gzip.open(folder / "train.ja.gz", "rt", encoding="utf-8")],
        )
    )
    torch.manual_seed(1)
    model = build_model({"preset": a.preset}, 8000)
    opts = TrainOptions.from_dict(
        {
            "device": a.device,
            "batch_tokens": a.batch_tokens,
            "max_steps": a.steps,
            "eval_every": 10 * a.steps,
            "log_every": 20,
            "warmup": 100,
            "lr": 1e-3,
        }
    )
    real = trainer.update
    starts: list[float] = []
    ends: list[float] = []

    def timed(model, optimizer, scaler, group, *rest, **kw):  # type: ignore[no-untyped-def]
        starts.append(time.perf_counter())
        if a.noop:
            zero = torch.zeros(())
            result = zero, zero, sum(b.target_tokens for b in group)
        else:
            result = real(model, optimizer, scaler, group, *rest, **kw)
        ends.append(time.perf_counter())
        return result

    trainer.update = timed
    profile = cProfile.Profile() if a.profile else None
    with tempfile.TemporaryDirectory() as out:
        if profile:
            profile.enable()
        train(model, pairs, [s for s, _ in pairs[:2]], lambda h: 0.0, opts, Path(out))
        if profile:
            profile.disable()
    skip = 10  # the first updates (allocations, the first epoch's batches)
    gaps = sorted(s - e for e, s in zip(ends[skip:], starts[skip + 1 :]))
    steps = sorted(b - s for s, b in zip(starts[skip:], ends[skip:]))
    median = lambda xs: 1e3 * xs[len(xs) // 2]  # noqa: E731
    print(
        f"{len(starts)} updates on {a.device}: host work between updates median "
        f"{median(gaps):.2f} ms, mean {1e3 * sum(gaps) / len(gaps):.2f} ms; "
        f"the update call median {median(steps):.2f} ms"
    )
    if profile:
        pstats.Stats(profile).sort_stats("tottime").print_stats(a.profile)


if __name__ == "__main__":
    main()
