"""Compile the numba kernels into their on-disk cache once. They are ``cache=True``: a process
that finds a kernel's cache loads it in well under a second, but in a fresh checkout every
process compiles what it calls until one has written the cache (~45 s on one core for the BTG
and RvNN-oracle kernels alone), and parallel jobs or test workers each pay it.

``python -m wordorder.preorder.jit_cache`` runs every kernel family once, on a tiny synthetic
corpus, through the steps the pipeline runs (word classes, Pharaoh files, symmetrization, gold
preorders, BTG and RvNN training and application), so what it compiles are the pipeline's
signatures; ``make test`` runs it beside the linters, which use one core.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

TAGS = ("DT", "JJ", "NN", "VB", "IN")


def _tree(a: int, n: int) -> str:
    """A right-branching binary tree over the words a..n-1."""
    return str(a) if a == n - 1 else f"({a} {_tree(a + 1, n)})"


def write_corpus(folder: Path, n: int = 40, seed: int = 1) -> dict[str, Path]:
    """A synthetic corpus in ``folder``: tokens, CoNLL-U, binary trees and alignments whose
    target order reverses a prefix of each sentence (always BTG-parsable)."""
    from wordorder.align.pharaoh import write_alignments
    from wordorder.syntax.conllu import Sentence, write_conllu

    rng = np.random.default_rng(seed)
    sents, links = [], []
    for _ in range(n):
        length = int(rng.integers(3, 8))
        tags = [TAGS[int(t)] for t in rng.integers(len(TAGS), size=length)]
        words = [f"{t.lower()}{int(rng.integers(4))}" for t in tags]
        cut = int(rng.integers(1, length + 1))
        order = list(range(cut))[::-1] + list(range(cut, length))  # target j <- source order[j]
        sents.append((words, tags))
        links.append(np.array([[s, j] for j, s in enumerate(order)], dtype=np.int64))
    files = {k: folder / f"s.{k}" for k in ("tok", "conllu", "tree", "align")}
    files["tok"].write_text("".join(" ".join(w) + "\n" for w, _ in sents), encoding="utf-8")
    with open(files["conllu"], "w", encoding="utf-8") as f:
        write_conllu(f, [Sentence(list(w), list(w), list(t), list(t)) for w, t in sents])
    files["tree"].write_text("".join(_tree(0, len(w)) + "\n" for w, _ in sents), encoding="utf-8")
    write_alignments(files["align"], links)
    return files


def warm(folder: Path) -> None:
    """Call every kernel family once (outputs in ``folder``)."""
    from wordorder.align.pharaoh import read_alignments
    from wordorder.align.symmetrize import symmetrize
    from wordorder.preorder.runner import (
        btg_apply_step,
        btg_train_step,
        gold_step,
        read_tokens,
        rvnn_apply_step,
        rvnn_train_step,
    )
    from wordorder.preorder.wordclass import train_word_classes, write_word_classes

    f = write_corpus(folder)
    tokens = read_tokens(f["tok"])
    write_word_classes(folder / "s.classes", train_word_classes(tokens, 4, 1, seed=1))
    lens = [len(t) for t in tokens]
    links = read_alignments(f["align"], lens, lens)
    symmetrize(links, links, lens, lens)
    gold_step(f["align"], f["tok"], folder / "gold.perm", "mean", "left")
    btg = {"iterations": 1, "beam": 4, "hash_bits": 12}
    btg_train_step(
        f["tok"], f["conllu"], folder / "s.classes", f["align"], folder / "btg.npz",
        folder / "btg.json", btg,
    )  # fmt: skip
    btg_apply_step(
        [folder / "btg.npz"], f["tok"], f["conllu"], folder / "s.classes", folder / "btg.perm",
        "xpos", 1,
    )  # fmt: skip
    rvnn = {"epochs": 1, "batch_size": 10, "embed": 8, "hidden": 8, "device": "cpu"}
    rvnn_train_step(
        f["tok"], f["conllu"], f["tree"], f["align"], folder / "rvnn.pt", folder / "rvnn.json",
        rvnn,
    )  # fmt: skip
    rvnn_apply_step([folder / "rvnn.pt"], f["tok"], f["conllu"], f["tree"], folder / "rvnn.perm")


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        warm(Path(folder))
    print("numba kernels compiled into their cache", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
