"""Beam search of static shapes, whose step a CUDA graph captures (``decode.cuda_graphs``).

The search of :mod:`wordorder.decode.beam` drops finished sentences from the batch and asks
the device at every step whether anything finished (``bool(...any())``): right for the CPU,
but on a GPU each such read waits for the device, and a step of a few hundred small kernels
is bound by the host that launches them. Here every sentence keeps its K rows until the
batch is done, finished sentences are frozen by masks instead of dropped, and the step
number lives on the device: a step is the same kernels on the same buffers at every t, with
no value read back. On CUDA one step is captured as a graph per shape bucket and replayed
by every batch of the bucket (:mod:`wordorder.decode.graph_buckets`); the host asks whether
all sentences are done every ``check_every`` steps only.

The hypotheses and scores are those of :func:`wordorder.decode.beam.beam_search_hypotheses`
(same candidates, same finishing and stopping rules; see there), up to the order of exactly
equal scores. Families with ``static_decoding`` only: the Transformer and the RNNs but those
with flexible attention.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, cast

import torch
from torch import Tensor

from wordorder.decode.beam import (
    DEFAULT,
    NEG_INF,
    Feats,
    Hypothesis,
    check_beam,
    finished_hypotheses,
    max_lengths,
    top_candidates,
)
from wordorder.decode.graph_buckets import DecodeGraphs
from wordorder.errors import WordorderError
from wordorder.models.base import Seq2SeqModel
from wordorder.specials import BOS_ID, EOS_ID, PAD_ID


class StaticStep(Protocol):
    """A decoder state of fixed shapes with its step number on the device."""

    t: Tensor

    def advance(self) -> None: ...


class StaticDecoder(Protocol):
    """What a family with ``static_decoding`` implements (the Transformer:
    :mod:`wordorder.models.transformer_static`; the RNNs: :mod:`wordorder.models.fixed_state`)."""

    def static_state(self, enc: Any, beams: int, width: int) -> Any: ...

    def static_step(self, prev: Tensor, state: Any) -> Tensor: ...

    def static_reorder(self, state: Any, rows: Tensor) -> None: ...


@dataclass
class SearchState:
    """The search's tensors, (B, K, ...) for B sentences of K beams, updated in place.

    Attributes:
        live: (B, K) float32 scores of the live hypotheses (-inf: none).
        tokens: (B, K, W) long, their prefixes (PAD beyond the step).
        fin_score: (B, K) float32 length-normalised scores of finished hypotheses, best first.
        fin_tok: (B, K, W) long and fin_len (B, K) long: their tokens and lengths.
        done: (B,) bool, the sentence's search is over (its lists no longer change).
        prev: (B·K,) long, the last token of each row (the next step's input).
        limit: (B,) long, each sentence's maximum target length.
    """

    live: Tensor
    tokens: Tensor
    fin_score: Tensor
    fin_tok: Tensor
    fin_len: Tensor
    done: Tensor
    prev: Tensor
    limit: Tensor

    @classmethod
    def start(cls, limit: Tensor, beams: int, width: int) -> SearchState:
        b, dev = limit.size(0), limit.device
        live = torch.full((b, beams), NEG_INF, device=dev)
        live[:, 0] = 0.0  # one hypothesis (BOS) per sentence; the other beams start empty
        return cls(
            live=live,
            tokens=torch.full((b, beams, width), PAD_ID, dtype=torch.long, device=dev),
            fin_score=torch.full((b, beams), NEG_INF, device=dev),
            fin_tok=torch.full((b, beams, width), PAD_ID, dtype=torch.long, device=dev),
            fin_len=torch.zeros((b, beams), dtype=torch.long, device=dev),
            done=torch.zeros(b, dtype=torch.bool, device=dev),
            prev=torch.full((b * beams,), BOS_ID, dtype=torch.long, device=dev),
            limit=limit,
        )


def search_step(
    model: StaticDecoder, state: StaticStep, s: SearchState, n_best: int, alpha: float
) -> None:
    """One step of the search at the model state's step ``t`` (a (1,) device tensor): score,
    finish, keep the best K live hypotheses, reorder the model's caches; every tensor updated
    in place, no value read back by the host."""
    b, k = s.live.shape
    t = state.t
    lp = model.static_step(s.prev, state)  # (B·K, V)
    v = lp.size(-1)
    at_max = t >= s.limit  # (B,)
    lp[:, PAD_ID] = NEG_INF
    lp[:, BOS_ID] = NEG_INF
    eos_lp = lp[:, EOS_ID].clone()
    lp.masked_fill_(at_max[:, None].expand(b, k).reshape(-1, 1), NEG_INF)
    lp[:, EOS_ID] = eos_lp
    cand, idx = top_candidates((s.live[:, :, None] + lp.view(b, k, v)).view(b, k * v), 2 * k)
    beam, tok = idx // v, idx % v  # (B, 2K)
    width = s.tokens.size(2)

    # Finished: EOS among the top K candidates of a sentence still searching.
    eos = tok.eq(EOS_ID)
    new_fin = eos[:, :k] & cand[:, :k].gt(NEG_INF) & ~s.done[:, None]
    norm = (t + 1).double().pow(alpha)
    new_score = torch.where(new_fin, (cand[:, :k].double() / norm).float(), NEG_INF)
    new_tok = s.tokens.gather(1, beam[:, :k, None].expand(-1, -1, width))
    top, pick = torch.cat([s.fin_score, new_score], dim=1).topk(k, dim=1)
    all_tok = torch.cat([s.fin_tok, new_tok], dim=1)
    all_len = torch.cat([s.fin_len, t.expand(b, k)], dim=1)
    s.fin_tok.copy_(all_tok.gather(1, pick[:, :, None].expand(-1, -1, width)))
    s.fin_len.copy_(all_len.gather(1, pick))
    s.fin_score.copy_(top)

    # Live: the best K non-EOS candidates.
    live, keep = cand.masked_fill(eos, NEG_INF).topk(k, dim=1)
    src_beam, next_tok = beam.gather(1, keep), tok.gather(1, keep)  # (B, K)
    s.tokens.copy_(s.tokens.gather(1, src_beam[:, :, None].expand(-1, -1, width)))
    s.tokens.scatter_(2, t.view(1, 1, 1).expand(b, k, 1), next_tok[:, :, None])
    s.live.copy_(live)
    s.prev.copy_(next_tok.reshape(-1))

    # Done: K finished, the maximum length, nothing alive, or no live hypothesis can beat the
    # n_best-th finished one (the bound of beam_search_hypotheses).
    n_fin = top.gt(NEG_INF).sum(dim=1)
    best_live = live.max(dim=1).values
    denom = torch.maximum((s.limit + 1).double().pow(alpha), (t + 2).double().pow(alpha))
    bound = best_live.double() / denom
    s.done.logical_or_(
        n_fin.ge(k) | at_max | best_live.isinf() | bound.le(top[:, n_best - 1].double())
    )
    rows = (torch.arange(b, device=t.device)[:, None] * k + src_beam).reshape(-1)
    model.static_reorder(state, rows)
    state.advance()


@torch.inference_mode()
def static_beam_search_hypotheses(
    model: Seq2SeqModel,
    src: Tensor,
    beam_size: int = DEFAULT.beam_size,
    max_len_a: float = DEFAULT.max_len_a,
    max_len_b: int = DEFAULT.max_len_b,
    length_penalty: float = DEFAULT.length_penalty,
    n_best: int = 1,
    feats: Feats | None = None,
    graphs: DecodeGraphs | None = None,
    check_every: int = 8,
    width: int | None = None,
) -> list[list[Hypothesis]]:
    """Beam search of static shapes; for each sentence its ``n_best`` hypotheses, best first.

    Args as :func:`~wordorder.decode.beam.beam_search_hypotheses`, and:
        graphs: the steps replayed from the graph of the batch's shape bucket
            (:class:`~wordorder.decode.graph_buckets.DecodeGraphs`); eager steps when None.
        check_every: steps between the host's reads of "all sentences done".
        width: the search's width (steps), at least the batch's longest length limit + 1
            (that by default); a bucket's graph needs one width for all its batches.
    """
    if not getattr(model, "static_decoding", False):
        raise WordorderError(
            f"{type(model).__name__} has no decoding step of static shapes",
            hint="set decode.cuda_graphs: false for this model family",
        )
    check_beam(beam_size, n_best)
    b = src.size(0)
    limit = max_lengths(src, max_len_a, max_len_b)
    steps = (max(int(limit.max()), 1) if b else 1) + 1  # t = 0 .. width, as the other search
    if width is not None:
        if width < steps:
            raise WordorderError(f"a search width of {width} is under this batch's {steps}")
        steps = width
    decoder = cast(StaticDecoder, model)
    state = decoder.static_state(model.encode(src, feats), beam_size, steps)
    search = SearchState.start(limit, beam_size, steps)
    alpha = float(length_penalty)

    def step(state: Any, search: SearchState) -> None:
        search_step(decoder, state, search, n_best, alpha)

    if graphs is None:
        for t in range(steps):
            step(state, search)
            if (t + 1) % check_every == 0 and bool(search.done.all()):
                break
    else:
        shapes = (
            tuple(src.shape),
            tuple((k, tuple(v.shape)) for k, v in sorted((feats or {}).items())),
        )
        key = (shapes, beam_size, steps, n_best, alpha)
        search = graphs.search(key, state, search, step, steps, check_every)
    return finished_hypotheses(search.fin_score, search.fin_tok, search.fin_len, n_best)


def use_decode_graphs(setting: bool | str, device: torch.device, model: Seq2SeqModel) -> bool:
    """Whether a decoding uses the graphed search of static shapes. ``decode.cuda_graphs``:
    ``true`` demands it (an error saying why where it cannot be used), ``auto`` uses it on a
    CUDA device for a family with ``static_decoding`` where the route table says it passed the
    GPU checks with the running torch (:mod:`wordorder.gpu_table`, row ``decode-graphed``), and
    the default search elsewhere (said in the log on a GPU)."""
    from wordorder.gpu_table import family_of, tried, untried

    if not setting:
        return False
    if device.type != "cuda":
        why = f"it needs a CUDA device, and this decoding runs on {device}"
    elif not getattr(model, "static_decoding", False):
        why = (
            f"this {type(model).__name__} has no decoding step of static shapes (flexible "
            "attention counts its vision span on the host)"
        )
    elif setting == "auto" and not tried("decode-graphed", "fp32", family_of(model)):
        why = untried("decode-graphed", "fp32", family_of(model))
    else:
        return True
    if setting == "auto":
        if device.type == "cuda":
            print(f"decode.cuda_graphs auto: the default search ({why})", flush=True)
        return False
    raise WordorderError(
        f"decode.cuda_graphs: {why}",
        hint="set decode.cuda_graphs: auto (graphs where they can be used) or false",
    )
