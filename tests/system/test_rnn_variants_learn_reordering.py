"""System test: every system of the RNN family (Chen et al. 2018, Zhang et al. 2018) learns the
synthetic SVO → SOV task of ``test_learns_reordering`` to the Transformer's bar.

The syntax variants read the source dependency tree of the synthetic grammar: the verb is the
root, subject, object and prepositional noun hang under it, an adjective under its noun and
the preposition under its noun (Universal Dependencies' choice of content-word heads). No
word is split, so each subword is its own word.
"""

from __future__ import annotations

import time

import pytest
import torch

from test_learns_reordering import ADJS, BLEU_BAR, EXACT_BAR, NOUNS, PREPS, VERBS, VOCAB, bleu, make_data
from wordorder.decode.beam import beam_search
from wordorder.models import build_model
from wordorder.specials import EOS_ID
from wordorder.train.batching import pad, pad_feature
from wordorder.train.loop import TrainOptions, train

VARIANTS = {
    "rnnsearch": {"decoder": "rnnsearch"},
    "cgru": {},
    "local": {"attention": "local"},
    "flexible": {"attention": "flexible"},
    "sdatt": {"attention": "syntax"},
    "chen2017": {"source_dependency": True},
    "double_sdatt": {"second_context": "syntax"},
    "double_local": {"second_context": "local"},
    "double_flexible": {"second_context": "flexible"},
    "double_chen2017": {"second_context": "sdr"},
    "rnmt": {"relation_layers": True, "decoder": "rnnsearch"},
}


def heads(src: list[int]) -> list[int]:
    """1-based heads (0 = root) of a synthetic SVO sentence, see the module docstring."""
    verb = next(i for i, w in enumerate(src) if w in VERBS)
    out = []
    for i, w in enumerate(src):
        if w in VERBS:
            out.append(0)
        elif w in NOUNS:
            out.append(verb + 1)
        elif w in ADJS or w in PREPS:
            out.append(next(j for j in range(i + 1, len(src)) if src[j] in NOUNS) + 1)
        else:
            raise ValueError(w)
    return out


def features(srcs):
    return {"word": [list(range(len(s))) for s in srcs], "head": [heads(s) for s in srcs]}


def test_synthetic_trees():
    # big(18) dog(4) sees(12) cat(5) in(23) house(6)
    assert heads([18, 4, 12, 5, 23, 6]) == [2, 3, 0, 3, 6, 3]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_rnn_variant_learns_svo_to_sov(name, tmp_path):
    start = time.perf_counter()
    torch.manual_seed(1)
    threads = torch.get_num_threads()
    train_pairs, test_src, test_ref = make_data(20_000, 200, seed=7)
    dev_src, dev_ref = test_src[:50], test_ref[:50]
    model = build_model({"preset": "rnn_tiny", "dropout": 0.0, **VARIANTS[name]}, VOCAB)
    tree = model.options.syntax_tree()
    train_feats = features([s for s, _ in train_pairs]) if tree else None
    test_feats = features(test_src) if tree else None
    dev_feats = {k: v[:50] for k, v in test_feats.items()} if tree else None
    opts = TrainOptions(device="cpu", batch_tokens=1500, lr=3e-3, warmup=100, max_steps=600, max_minutes=1.2,
                        eval_every=200, log_every=100, label_smoothing=0.1, seed=1, threads=2)
    try:
        summary = train(model, train_pairs, dev_src, lambda h: bleu(h, dev_ref), opts, tmp_path,
                        {"task": "svo-sov"}, train_feats=train_feats, dev_feats=dev_feats)
    finally:
        torch.set_num_threads(threads)
    model.eval()
    src = pad([s + [EOS_ID] for s in test_src])
    feats = {k: pad_feature(k, v, src.size(1)) for k, v in test_feats.items()} if tree else None
    hyps = [h[0] for h in beam_search(model, src, beam_size=4, feats=feats)]
    score = bleu(hyps, test_ref)
    exact = sum(h == r for h, r in zip(hyps, test_ref)) / len(test_ref)
    print(f"\n{name}: {summary['steps']} steps, BLEU {score:.2f}, exact {exact:.1%}, "
          f"{time.perf_counter() - start:.1f} s, {summary['tokens_per_s']:.0f} tok/s")
    assert score >= BLEU_BAR
    assert exact >= EXACT_BAR
