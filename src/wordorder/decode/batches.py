"""Translating a corpus: sentences sorted by length, cut into batches of padded source tokens,
each decoded by beam search (or greedy search at beam size 1), results back in input order."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import torch
from tqdm import tqdm

from wordorder.cuda_graphs import CudaGraphs
from wordorder.decode.beam import DEFAULT, beam_search_hypotheses, greedy_decode
from wordorder.decode.graph_buckets import Buckets, DecodeGraphs
from wordorder.decode.static_beam import static_beam_search_hypotheses
from wordorder.device import keep_freed_cpu_memory, same_device
from wordorder.model_io.batching import pad_feature
from wordorder.models.base import Seq2SeqModel
from wordorder.specials import EOS_ID, PAD_ID


def length_batches(
    lengths: Sequence[int], batch_tokens: int, batch_size: int | None = None
) -> list[list[int]]:
    """Indices sorted by length (longest first), cut into batches of at most ``batch_tokens``
    padded source tokens (and ``batch_size`` sentences); a longer sentence is alone."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        # Longest first: the first sentence of a batch sets its padded width.
        if (
            batches
            and (len(batches[-1]) + 1) * lengths[batches[-1][0]] <= batch_tokens
            and (batch_size is None or len(batches[-1]) < batch_size)
        ):
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


def translate_batches(
    model: Seq2SeqModel,
    sources: Sequence[list[int]],
    batch_tokens: int = DEFAULT.batch_tokens,
    batch_size: int | None = None,
    beam_size: int = DEFAULT.beam_size,
    max_len_a: float = DEFAULT.max_len_a,
    max_len_b: int = DEFAULT.max_len_b,
    length_penalty: float = DEFAULT.length_penalty,
    device: torch.device | str | None = None,
    progress: bool = True,
    feats: Mapping[str, Sequence[Sequence[int]]] | None = None,
    cuda_graphs: bool = False,
    graph_backend: Any = None,
) -> list[list[int]]:
    """Translate id lists (without EOS) to the best hypothesis each, in input order.

    ``feats``: extra source inputs of models that need them (name → per-sentence id lists,
    one item per source subword; see :mod:`wordorder.model_io.features`).

    Sentences are sorted by length so that batches hold little padding; ``batch_tokens``
    counts padded source tokens (including EOS) per batch, before beam expansion.
    Beam size 1 uses :func:`greedy_decode` (same result, less work). ``cuda_graphs``: the
    search of static shapes instead (:mod:`wordorder.decode.static_beam`; same hypotheses),
    resolved from ``decode.cuda_graphs`` by
    :func:`~wordorder.decode.static_beam.use_decode_graphs`; on a GPU (or with a
    ``graph_backend``, a stand-in for CUDA graphs in tests) its steps replay from one graph per
    shape bucket (:mod:`wordorder.decode.graph_buckets`: the batches cut on bucket widths and
    padded to the bucket's rows). On the CPU the process
    keeps freed memory for reuse (:func:`~wordorder.device.keep_freed_cpu_memory`): every step
    allocates (rows, vocabulary) score tensors of megabytes, which glibc would otherwise map
    afresh and the kernel zero-fill each time (measured: 0.30 → 0.12 s of system time and
    ~100k → ~37k page faults decoding 500 Tanaka sentences in 4,000-token batches, ~8 % of
    the CPU time).
    """
    device = torch.device(device) if device is not None else model.device
    if not same_device(model.device, device):
        model.to(device)
    if device.type == "cpu":
        keep_freed_cpu_memory()
    graphs = None
    if cuda_graphs and (graph_backend is not None or device.type == "cuda"):
        graphs = DecodeGraphs(graph_backend or CudaGraphs(device, "decode.cuda_graphs"))
    was_training = model.training
    model.eval()
    results: list[list[int]] = [[] for _ in sources]
    lengths = [len(s) + 1 for s in sources]
    if graphs is not None:
        lengths = [Buckets.width(n) for n in lengths]
    batches = length_batches(lengths, batch_tokens, batch_size)
    buckets = Buckets.of(batches, lengths, max_len_a, max_len_b) if graphs is not None else None
    bar = tqdm(total=len(sources), desc="translate", unit="sent", disable=not progress, leave=False)
    try:
        for batch in batches:
            width = lengths[batch[0]]
            rows = buckets.rows[width] if buckets else len(batch)
            # rows past the batch's: empty sentences (EOS only) filling a graph's bucket
            src = torch.full((rows, width), PAD_ID, dtype=torch.long)
            src[:, 0] = EOS_ID
            for row, i in enumerate(batch):
                src[row, : len(sources[i]) + 1] = torch.tensor(
                    list(sources[i]) + [EOS_ID], dtype=torch.long
                )
            src = src.to(device)
            batch_feats = (
                {
                    name: pad_feature(
                        name, [values[i] for i in batch] + [[]] * (rows - len(batch)), width
                    ).to(device)
                    for name, values in feats.items()
                }
                if feats
                else None
            )
            if beam_size == 1 and not cuda_graphs:
                hyps = greedy_decode(model, src, max_len_a, max_len_b, feats=batch_feats)
            else:
                search = (
                    partial(
                        static_beam_search_hypotheses,
                        graphs=graphs,
                        width=buckets.steps(width) if buckets else None,
                    )
                    if cuda_graphs
                    else beam_search_hypotheses
                )
                found = search(
                    model, src, beam_size, max_len_a, max_len_b, length_penalty, feats=batch_feats
                )
                hyps = [h[0].tokens if h else [] for h in found]
            for i, h in zip(batch, hyps):
                results[i] = h
            bar.update(len(batch))
    finally:
        bar.close()
        model.train(was_training)
    return results
