"""System test: a tiny Transformer learns translation with reordering (SVO → SOV).

Synthetic language pair. Source sentences are SVO: ``[Adj] Noun Verb [Adj] Noun [Prep Noun]``
(3–8 words). The target puts the verb last, adjectives after their noun and turns the
preposition into a postposition: ``Noun' [Adj'] [Noun' Post'] Noun' [Adj'] Verb'``, every word
mapped to a different target-side id. Subjects and objects are drawn from the same nouns, so
only word order tells the roles apart: the model must learn to reorder, not to copy.

Training (``train``) and decoding (``beam_search``) are the real code paths; an untrained model
scores BLEU ≈ 0, so passing the bar shows that the loss, masks, incremental decoding and the
search all work together.
"""

from __future__ import annotations

import time

import pytest
import torch
from reordering_task import (
    BATCH_TOKENS,
    BLEU_BAR,
    EXACT_BAR,
    MAX_STEPS,
    TARGET_DEV_BLEU,
    THREADS,
    VOCAB,
    bleu,
    make_data,
)

from wordorder.decode.beam import beam_search
from wordorder.model_io.batching import pad
from wordorder.models import build_model
from wordorder.specials import EOS_ID
from wordorder.train.loop import TrainOptions, train


@pytest.mark.slow
def test_tiny_transformer_learns_svo_to_sov(tmp_path):
    start = time.perf_counter()
    torch.manual_seed(1)
    threads = torch.get_num_threads()
    train_pairs, test_src, test_ref = make_data(20_000, 200, seed=7)
    dev_src, dev_ref = test_src[:50], test_ref[:50]
    model = build_model({"preset": "tiny", "dropout": 0.0}, VOCAB)

    src = pad([s + [EOS_ID] for s in test_src])
    untrained = bleu([h[0] for h in beam_search(model.eval(), src, beam_size=4)], test_ref)

    opts = TrainOptions(
        device="cpu",
        batch_tokens=BATCH_TOKENS,
        lr=2e-3,
        warmup=150,
        max_steps=MAX_STEPS,
        eval_every=100,
        target_bleu=TARGET_DEV_BLEU,
        log_every=100,
        label_smoothing=0.1,
        seed=1,
        threads=THREADS,
    )
    try:
        summary = train(
            model,
            train_pairs,
            dev_src,
            lambda h: bleu(h, dev_ref),
            opts,
            tmp_path,
            {"task": "svo-sov"},
        )
    finally:
        torch.set_num_threads(threads)
    model.eval()
    hyps = [h[0] for h in beam_search(model, src, beam_size=4)]
    score = bleu(hyps, test_ref)
    exact = sum(h == r for h, r in zip(hyps, test_ref)) / len(test_ref)
    elapsed = time.perf_counter() - start
    print(
        f"\nuntrained BLEU {untrained:.1f}; trained {summary['steps']} steps: BLEU {score:.2f}, "
        f"exact match {exact:.1%}, {elapsed:.1f} s, {summary['tokens_per_s']:.0f} tok/s"
    )
    assert (tmp_path / "best.pt").is_file() and (tmp_path / "metrics.jsonl").is_file()
    assert untrained < 10
    assert score >= BLEU_BAR
    assert exact >= EXACT_BAR
