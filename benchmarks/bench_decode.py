"""Beam search with incremental decoding (key/value cache) vs recomputing the whole prefix.

Both runs use the same beam search code; the "no cache" model answers each ``step`` by running
the decoder stack over the whole prefix (causal self-attention, cross-attention keys/values
recomputed from the memory) and projecting only the last position onto the vocabulary, which
is what decoding without a cache costs. Small preset, random weights, 64 sentences of 30
tokens; random weights rarely emit EOS, so every hypothesis runs to the length limit
(1.5 * 30 + 10 = 55 tokens) in both runs.

    .venv/bin/python benchmarks/bench_decode.py [--threads 2] [--device cpu] [--beam 5]
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import torch

from wordorder.decode.beam import beam_search
from wordorder.models import build_model
from wordorder.models.base import DecoderState, EncoderOut, Seq2SeqModel
from wordorder.models.layers import key_padding_mask
from wordorder.specials import EOS_ID


@dataclass
class PrefixState(DecoderState):
    memory: torch.Tensor  # (N, S, d)
    src_pad: torch.Tensor  # (N, S)
    prefix: torch.Tensor  # (N, t) decoder inputs so far


class NoCache(Seq2SeqModel):
    """Wraps a model: every step recomputes the decoder over the whole prefix."""

    def __init__(self, model: Seq2SeqModel) -> None:
        super().__init__()
        self.model = model

    def encode(self, src):
        return self.model.encode(src)

    def init_state(self, enc: EncoderOut) -> PrefixState:
        empty = torch.zeros(enc.memory.size(0), 0, dtype=torch.long, device=enc.memory.device)
        return PrefixState(enc.memory, enc.src_pad, empty)

    def step(self, prev, state):
        prefix = torch.cat([state.prefix, prev[:, None]], dim=1)
        m = self.model
        # TransformerModel.decode without its output layer: only the last position's logits
        # are needed, so projecting every position onto the vocabulary would overstate the cost.
        mask = key_padding_mask(state.src_pad)
        x = m._embed(m.tgt_embed, prefix)
        for layer in m.decoder:
            x, _ = layer(x, mask, layer.cross_attn.project_kv(state.memory))
        logits = m._logits(x[:, -1])
        return torch.log_softmax(logits.float(), dim=-1), PrefixState(
            state.memory, state.src_pad, prefix
        )


def timed(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--beam", type=int, default=5)
    ap.add_argument("--sentences", type=int, default=64)
    ap.add_argument("--length", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    vocab = 8000
    model = build_model({"preset": "small"}, vocab).to(a.device).eval()
    src = torch.randint(4, vocab, (a.sentences, a.length + 1), device=a.device)
    src[:, -1] = EOS_ID
    kwargs = dict(beam_size=a.beam, max_len_a=1.5, max_len_b=10)

    t_cache, out_cache = timed(lambda: beam_search(model, src, **kwargs), a.repeats)
    t_full, out_full = timed(lambda: beam_search(NoCache(model), src, **kwargs), a.repeats)
    same = sum(x == y for x, y in zip(out_cache, out_full))
    n = a.sentences
    print(
        f"device {a.device}, threads {a.threads}, small preset (d=256, 3+3 layers), beam {a.beam}, "
        f"{n} sentences x {a.length} tokens, max target length {int(1.5 * a.length + 10)}"
    )
    print(f"  with cache    : {t_cache:7.2f} s  {n / t_cache:7.2f} sentences/s")
    print(f"  without cache : {t_full:7.2f} s  {n / t_full:7.2f} sentences/s")
    print(f"  speed-up      : {t_full / t_cache:.2f}x   (identical outputs: {same}/{n})")


if __name__ == "__main__":
    main()
