"""Alignment and preordering on real data: English -> Japanese order, ja-en_small_parallel_enja.

Runs the pipeline's own steps (the functions the `wordorder` CLI calls) on
../shared/data/ja-en_small_parallel_enja: parse the English side (spaCy), align train + dev +
test together (eflomal, grow-diag-final-and), cluster the English words, train the BTG
preorderer and the RvNN preorderer on ``--train-sentences`` sampled training sentences, build
the gold preorders, apply everything to the 500 test sentences, and print the
preorder_quality table (normalised Kendall tau, FRS, complete match) with the time of each
step and the sentences/s of applying each model.

    .venv/bin/python benchmarks/bench_preorder.py [--train-sentences 20000] [--btg-iterations 20]
"""

from __future__ import annotations

import argparse
import gzip
import json
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "ja-en_small_parallel_enja"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--train-sentences", type=int, default=20000, help="sentences the preorderers train on"
    )
    ap.add_argument(
        "--align-lines", type=int, default=50000, help="training lines aligned (with dev and test)"
    )
    ap.add_argument("--btg-iterations", type=int, default=20)
    ap.add_argument("--rvnn-epochs", type=int, default=5)
    ap.add_argument("--workdir", type=Path, default=None, help="keep the intermediate files here")
    args = ap.parse_args()

    from wordorder.align.eflomal_run import align_corpus
    from wordorder.preorder import runner as steps
    from wordorder.preorder.report import preorder_report
    from wordorder.preorder.wordclass import train_word_classes, write_word_classes
    from wordorder.syntax.binarize import binarize, to_sexpr
    from wordorder.syntax.conllu import read_conllu
    from wordorder.syntax.parse import parse_file

    work = args.workdir or Path(tempfile.mkdtemp(prefix="bench_preorder."))
    work.mkdir(parents=True, exist_ok=True)
    times: dict[str, float] = {}

    def timed(name, fn, *a, **kw):
        t0 = time.perf_counter()
        out = fn(*a, **kw)
        times[name] = round(time.perf_counter() - t0, 1)
        print(f"[{name}] {times[name]} s", flush=True)
        return out

    splits = {"train": args.align_lines, "dev": None, "test": None}
    for split, limit in splits.items():
        for lang in ("en", "ja"):
            with gzip.open(DATA / f"{split}.{lang}.gz", "rt", encoding="utf-8") as f:
                lines = f.read().splitlines()[:limit]
            (work / f"{split}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")

    for split in ("train", "test"):
        timed(f"parse {split}", parse_file, work / f"{split}.en", work / f"{split}.en.conllu", "en")
        with open(work / f"{split}.btree.en", "w", encoding="utf-8") as f:
            for sent in read_conllu(work / f"{split}.en.conllu"):
                f.write((to_sexpr(binarize(sent.heads)) if len(sent) else "") + "\n")

    align_stats = timed(
        "align (eflomal, both directions, gdfa)",
        align_corpus,
        [work / f"{s}.en" for s in splits],
        [work / f"{s}.ja" for s in splits],
        [work / f"{s}.align" for s in splits],
        {},
        seed=1,
    )
    print(json.dumps(align_stats)[:600])
    classes = timed(
        "word classes (256)",
        train_word_classes,
        steps.read_tokens(work / "train.en"),
        n_classes=256,
    )
    write_word_classes(work / "classes.tsv", classes)

    btg_opts = {"iterations": args.btg_iterations, "max_sentences": args.train_sentences}
    btg = timed(
        "BTG train",
        steps.btg_train_step,
        work / "train.en",
        work / "train.en.conllu",
        work / "classes.tsv",
        work / "train.align",
        work / "btg.npz",
        work / "btg.json",
        btg_opts,
    )
    btg_apply = timed(
        "BTG apply (test)",
        steps.btg_apply_step,
        [work / "btg.npz"],
        work / "test.en",
        work / "test.en.conllu",
        work / "classes.tsv",
        work / "test.btg.perm",
        "xpos",
    )
    rvnn_opts = {"epochs": args.rvnn_epochs, "max_sentences": args.train_sentences}
    rvnn = timed(
        "RvNN train",
        steps.rvnn_train_step,
        work / "train.en",
        work / "train.en.conllu",
        work / "train.btree.en",
        work / "train.align",
        work / "rvnn.pt",
        work / "rvnn.json",
        rvnn_opts,
    )
    rvnn_apply = timed(
        "RvNN apply (test)",
        steps.rvnn_apply_step,
        [work / "rvnn.pt"],
        work / "test.en",
        work / "test.en.conllu",
        work / "test.btree.en",
        work / "test.rvnn.perm",
    )
    timed(
        "gold (test)",
        steps.gold_step,
        work / "test.align",
        work / "test.en",
        work / "test.gold.perm",
        "mean",
        "left",
    )

    table = preorder_report(
        "en-ja",
        {
            "test": (
                work / "test.en",
                work / "test.align",
                {m: work / f"test.{m}.perm" for m in ("btg", "rvnn", "gold")},
            )
        },
        work / "quality.json",
        work / "quality.csv",
        work / "quality.md",
        work / "quality.png",
    )
    print()
    print(table.round(3).to_string())
    print()
    print("BTG training:", json.dumps({k: v for k, v in btg.items() if k != "iterations"})[:800])
    print("RvNN training:", json.dumps({k: v for k, v in rvnn.items() if k != "epochs"})[:800])
    print(
        f"BTG apply: {btg_apply['sentences_per_second']} sent/s;",
        f"RvNN apply: {rvnn_apply['sentences_per_second']} sent/s",
    )
    print("step times (s):", json.dumps(times))
    print(f"files in {work}")


if __name__ == "__main__":
    main()
