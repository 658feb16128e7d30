"""The top-down BTG preorderer (Nakagawa, ACL 2015; docs/algorithms.md §BTG): training and
preordering (its options and model file: :mod:`wordorder.preorder.btg_file`, re-exported here).

A sentence is parsed top-down into a binary bracketing whose nodes are straight (STR) or
inverted (INV); reading the leaves with the inverted nodes' children swapped gives the preorder.
The parser is a beam search over split actions scored by a linear model of 78 hashed feature
templates (:mod:`wordorder.preorder.btg_features`), trained online against word-order
constraints from alignments (:mod:`wordorder.preorder.constraint`) as a latent-variable model:
any derivation that keeps the aligned words in target order is correct. The kernels are in
:mod:`wordorder.preorder.btg_beam` (the search), :mod:`wordorder.preorder.btg_search`
(decoding) and :mod:`wordorder.preorder.btg_update` (training).

Decisions the paper and the reference code leave open (docs/algorithms.md §BTG-UPDATE):
- Sentence order (``order``): ``shuffled`` (default) visits the usable sentences in a fresh
  random order drawn from ``seed`` each iteration; ``file`` keeps corpus order, as the reference
  code does. On the 20k benchmark (``benchmarks/bench_preorder.py``) file order reached test tau
  0.856 against 0.862 shuffled (one run each), hence the default.
- Averaging follows the reference code for both update rules: the averaged table gathers
  ``tau * Δ * (N - u) / N`` with N = iterations × usable sentences, so stopping early after an
  error-free iteration gives the same average as running on.
- Sentences with fewer than two aligned words are not used for training (as in the reference
  code: every derivation is valid for them).
- A model with no usable training sentence is an error rather than an all-zero model.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from wordorder.errors import WordorderError
from wordorder.preorder.btg_features import hash_tokens
from wordorder.preorder.btg_file import FORMAT, BTGOptions, read_model, write_model
from wordorder.preorder.btg_search import decode_all
from wordorder.preorder.btg_update import train_chunk
from wordorder.preorder.constraint import REASONS, btg_constraint
from wordorder.progress import progress

__all__ = ["FORMAT", "BTGOptions", "BTGPreorderer", "Sentence"]

_CHUNK = 500  # sentences per kernel call: the progress bar's granularity

Sentence = tuple[Sequence[str], Sequence[str], Sequence[str]]


def _check_sentences(sentences: Sequence[Sentence]) -> None:
    for k, sent in enumerate(sentences):
        if len(sent) != 3 or not (len(sent[0]) == len(sent[1]) == len(sent[2])):
            lens = "/".join(str(len(x)) for x in sent)
            raise WordorderError(
                f"sentence {k + 1}: words, POS tags and classes differ in length ({lens})",
                line=k + 1,
                hint="the annotations must have one entry per token",
            )


def _usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


class BTGPreorderer:
    """A trained model: a [2**hash_bits, 2] float32 weight table (columns STR, INV) and its options.

    ``fold`` is (k, K) for a cross-fitting model trained without fold k of K (stored with the
    options).
    """

    def __init__(self, weights: np.ndarray, options: BTGOptions) -> None:
        self.options = options
        self.fold: tuple[int, int] | None = None
        self.weights = np.ascontiguousarray(weights, dtype=np.float32)
        if self.weights.shape != (1 << options.hash_bits, 2):
            raise ValueError(
                f"weights of shape {self.weights.shape} do not match hash_bits={options.hash_bits}"
            )

    @classmethod
    def train(
        cls,
        sentences: list[Sentence],
        links: list[np.ndarray],
        options: BTGOptions | None = None,
        progress_bar: bool = True,
    ) -> tuple[BTGPreorderer, dict]:
        """Train on (words, POS, classes) sentences and their [L, 2] (source, target) links.

        Returns:
            The model and statistics: sentences, used, skipped {reason: count}, per-iteration
            errors / early updates / seconds, total seconds, nonzero weights.
        """
        options = (options or BTGOptions()).check()
        start = time.perf_counter()
        if len(links) != len(sentences):
            raise WordorderError(
                f"{len(links)} alignments for {len(sentences)} sentences",
                hint="the alignment file must have one line per sentence",
            )
        _check_sentences(sentences)
        skipped = dict.fromkeys(REASONS, 0)
        used, ranks = [], []
        for k, (sent, lk) in enumerate(zip(sentences, links)):
            try:
                r, reason = btg_constraint(lk, len(sent[0]))
            except WordorderError as err:
                raise WordorderError(
                    f"sentence {k + 1}: {err.message}", line=k + 1, hint=err.hint
                ) from None
            if r is None:
                skipped[reason] += 1
            else:
                used.append(k)
                ranks.append(r)
        if not used:
            raise WordorderError(
                (
                    f"none of the {len(sentences)} training sentences has a "
                    "usable alignment constraint"
                ),
                hint="check that the alignments belong to these sentences",
            )
        hashes, offsets = hash_tokens([sentences[k] for k in used])
        flat_ranks = np.concatenate(ranks).astype(np.int64)
        size = 1 << options.hash_bits
        W = np.zeros((size, 2), np.float32)
        avg = np.zeros((size, 2), np.float64)
        cnt = np.zeros((size, 2), np.int32)
        shift, pa = 64 - options.hash_bits, options.update == "pa"
        N = options.iterations * len(used)
        rng = np.random.default_rng(options.seed)
        history = []
        for it in range(options.iterations):
            t_it = time.perf_counter()
            order = (
                rng.permutation(len(used)) if options.order == "shuffled" else np.arange(len(used))
            ).astype(np.int64)
            stats = np.zeros(2, np.int64)
            with progress(
                total=len(used),
                desc=f"btg iteration {it + 1}/{options.iterations}",
                unit=" sent",
                enabled=progress_bar,
            ) as bar:
                for c in range(0, len(used), _CHUNK):
                    ids = order[c : c + _CHUNK]
                    train_chunk(
                        ids,
                        hashes,
                        offsets,
                        flat_ranks,
                        W,
                        avg,
                        cnt,
                        shift,
                        options.beam,
                        pa,
                        it * len(used) + c,
                        N,
                        stats,
                    )
                    bar.update(len(ids))
                    bar.set_postfix(errors=int(stats[0]), refresh=False)
            history.append(
                {
                    "iteration": it + 1,
                    "errors": int(stats[0]),
                    "early_updates": int(stats[1]),
                    "seconds": round(time.perf_counter() - t_it, 2),
                }
            )
            if stats[0] == 0:
                break
        final = avg.astype(np.float32)
        if options.min_updates > 0:
            final[cnt < options.min_updates] = 0.0
        model = cls(final, options)
        info = {
            "sentences": len(sentences),
            "used": len(used),
            "skipped": skipped,
            "iterations": history,
            "converged": history[-1]["errors"] == 0,
            "nonzero_weights": int(np.count_nonzero(final)),
            "total_seconds": round(time.perf_counter() - start, 2),
        }
        return model, info

    def preorder(
        self, sentences: Sequence[Sentence], progress_bar: bool = True, threads: int | None = None
    ) -> list[np.ndarray]:
        """One int64 permutation per sentence: ``order[k]`` = source index at output position k.

        Chunks of sentences are decoded on ``threads`` threads (default: the usable cores); the
        kernel releases the GIL and each sentence is independent, so the result does not depend
        on the thread count.
        """
        _check_sentences(sentences)
        hashes, offsets = hash_tokens(sentences)
        out = np.empty(int(offsets[-1]), np.int64)
        shift, S = 64 - self.options.hash_bits, len(sentences)
        threads = threads or _usable_cores()
        step = max(1, min(_CHUNK, -(-S // threads)))

        def run(c: int) -> int:
            a, b = int(offsets[c]), int(offsets[min(c + step, S)])
            decode_all(
                hashes[a:b],
                offsets[c : c + step + 1] - a,
                self.weights,
                shift,
                self.options.beam,
                out[a:b],
            )
            return min(step, S - c)

        with (
            progress(total=S, desc="btg preorder", unit=" sent", enabled=progress_bar) as bar,
            ThreadPoolExecutor(max_workers=threads) as pool,
        ):
            for done in pool.map(run, range(0, S, step)):
                bar.update(done)
        return [out[offsets[s] : offsets[s + 1]].copy() for s in range(S)]

    def save(self, path: str | Path) -> None:
        """Write the nonzero weights and the options to ``path`` (compressed npz), atomically."""
        write_model(path, self.weights, self.options, self.fold)

    @classmethod
    def load(cls, path: str | Path) -> BTGPreorderer:
        """Read a model written by :meth:`save`.

        Raises:
            WordorderError: the file is missing, not a BTG model, or corrupt.
        """
        weights, options, fold = read_model(path)
        model = cls(weights, options)
        model.fold = fold
        return model
