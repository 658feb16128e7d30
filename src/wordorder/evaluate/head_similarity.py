"""Similarity of the encoder's attention heads between source-feature groups (Chen et al. 2020,
Eq. 14 and Table IV, following Li et al. 2018).

For groups G₁, G₂ of heads (Chen 2020's input groups own consecutive heads, in the order of
``input_groups``; a plain Transformer has one group, "global", of all heads):

    Sim(G₁, G₂) = 1/(H₁·H₂) Σ_{i∈G₁} Σ_{j∈G₂} cos(O_i, O_j)

where O_i is head i's output for a token in the last encoder layer; the scores are summed over
the tokens of a test set and divided by their number. Pairs i = j count (cos = 1), as the
formula has them. "Average" is the mean of the G×G table (Table IV's 0.641).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from wordorder.model_io.batching import pad, pad_feature
from wordorder.specials import EOS_ID


def head_groups(options) -> list[tuple[str, int]]:
    """(group name, number of heads) in head order (input groups resolved to this model's heads)."""
    if options.input_groups:
        return options.group_heads()
    return [("global", int(options.heads))]


def token_cosines(heads: Tensor, valid: Tensor) -> tuple[Tensor, int]:
    """(B, H, S, d_h) head outputs, (B, S) real tokens → Σ over tokens of the (H, H) cosine
    matrices, and the number of tokens."""
    o = torch.nn.functional.normalize(heads.float(), dim=-1)  # (B, H, S, d)
    cos = torch.einsum("bisd,bjsd->bsij", o, o)  # (B, S, H, H)
    return cos[valid].sum(dim=0), int(valid.sum())


def group_similarity(
    cos_sum: np.ndarray, tokens: int, groups: Sequence[tuple[str, int]]
) -> np.ndarray:
    """(H, H) summed cosines → (G, G) Sim of every pair of groups."""
    mean = cos_sum / max(tokens, 1)
    bounds = np.cumsum([0] + [n for _, n in groups])
    g = len(groups)
    out = np.zeros((g, g))
    for a in range(g):
        for b in range(g):
            out[a, b] = mean[bounds[a] : bounds[a + 1], bounds[b] : bounds[b + 1]].mean()
    return out


@torch.inference_mode()
def encoder_head_similarity(
    model,
    sources: Sequence[list[int]],
    feats: Mapping[str, Sequence[Sequence[int]]] | None,
    batch_size: int = 64,
) -> dict:
    """Sim table of a Transformer's last encoder layer over ``sources`` (id lists without EOS)."""
    if model.options.family != "transformer":
        raise ValueError(
            "head similarity is defined for the Transformer family (multi-head self-attention)"
        )
    model.eval()
    attn = model.encoder[-1].self_attn
    groups = head_groups(model.options)
    total, tokens = None, 0
    attn.record = True
    try:
        for start in range(0, len(sources), batch_size):
            chunk = list(sources[start : start + batch_size])
            src = pad([s + [EOS_ID] for s in chunk]).to(model.device)
            batch_feats = (
                {
                    k: pad_feature(k, v[start : start + batch_size], src.size(1)).to(model.device)
                    for k, v in feats.items()
                }
                if feats
                else None
            )
            model.encode(src, batch_feats)
            valid = src.ne(0) & src.ne(EOS_ID)
            s, n = token_cosines(attn.recorded["heads"], valid)
            total = s if total is None else total + s
            tokens += n
    finally:
        attn.record = False
        attn.recorded.clear()
    if total is None:  # no sentence: nothing to average (was an AttributeError on None)
        raise ValueError("head similarity needs at least one source sentence")
    sim = group_similarity(total.cpu().numpy(), tokens, groups)
    return {
        "groups": [name for name, _ in groups],
        "heads": [n for _, n in groups],
        "similarity": sim.tolist(),
        "average": float(sim.mean()),
        "tokens": tokens,
    }


def similarity_markdown(results: Sequence[tuple[str, dict]], title: str) -> str:
    """One block per system: its groups × groups table and the average (Table IV's shape)."""
    lines = [
        f"# {title}",
        "",
        "Mean cosine similarity of the last encoder layer's head outputs per token (Chen et al. "
        "2020, Eq. 14); lower = more diverse heads.",
        "",
    ]
    for name, r in results:
        groups = r["groups"]
        lines += [
            f"## {name}",
            "",
            "| group | " + " | ".join(groups) + " |",
            "| --- |" + " ---: |" * len(groups),
        ]
        for g, row in zip(groups, r["similarity"]):
            lines.append(f"| {g} | " + " | ".join(f"{x:.3f}" for x in row) + " |")
        lines += [f"| average | {r['average']:.3f} |" + " |" * (len(groups) - 1), ""]
    return "\n".join(lines)


def load_results(paths: Sequence[Path]) -> list[tuple[str, dict]]:
    import json

    out = []
    for p in paths:
        data = json.loads(Path(p).read_text(encoding="utf-8"))
        out.append((f"{data['meta']['variant']} (seed {data['meta']['seed']})", data))
    return out
