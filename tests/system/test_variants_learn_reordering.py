"""System test: every word-order mechanism of the Transformer family learns the synthetic
SVO → SOV task of ``test_learns_reordering`` to the same bar as the baseline.

One variant per mechanism (the registry's paper systems are these mechanisms at other sizes),
at the tiny preset, with the source features the mechanisms read made from the synthetic
grammar: POS = the word class, BIEO = O (no word is split), preordered positions = the
position of each source word in the target (the gold preorder).
"""

from __future__ import annotations

import pytest
import torch
from reordering_task import (
    ADJS,
    BATCH_TOKENS,
    BLEU_BAR,
    EXACT_BAR,
    MAX_STEPS,
    NOUNS,
    PREPS,
    TARGET_DEV_BLEU,
    TARGET_OFFSET,
    THREADS,
    VERBS,
    VOCAB,
    make_data,
    train_and_score,
)

from wordorder.models import build_model
from wordorder.train.loop import TrainOptions

SIZES = {"pos": 7, "bieo": 4}
VARIANTS = {
    "relative_pe": {"relative_k": 4},
    "encoder_res": {"reordering_embeddings": "encoder"},
    "both_res": {"reordering_embeddings": "both"},
    "additional_pe": {"additional_pe": "both"},
    "preorder_absolute": {"relative_k": 4, "preorder_encoding": "absolute"},
    "preorder_relative": {"relative_k": 4, "preorder_encoding": "relative"},
    "fusing_diverse": {"input_groups": [["global", 1], ["rec", 1], ["loc", 1], ["syn", 1]]},
    "linguistic_features": {"factors": {"bieo": 4, "pos": 8}},
    "disan": {"directional": True},
    "disreg": {"disagreement": "output"},
}
# Caps, in updates of 1,500 tokens first: the disagreement term (λ = 1) pulls against the task
# early on: at 600 updates seeds 1/2/3 gave BLEU 82.8 / 82.3 / 99.8, at 1000 updates 99.5 / 97.2
# (seeds 1/2). Linguistic features sat on the edge at 600 on some CPUs (CI's: BLEU 83.96, exact
# 65.5 %; 800 updates: 98.07, 96.5 %), since the factor embeddings start as noise added to the
# words'. Every other mechanism: 600. With TARGET_DEV_BLEU every mechanism stopped at 200
# updates (the RNN family's at 200-300); at BATCH_TOKENS (750) too, disreg at 300, and the caps
# are doubled to keep their tokens.
STEPS = {"disreg": 2000, "linguistic_features": 1600}


def word_class(w: int) -> int:
    for tag, words in enumerate((NOUNS, VERBS, ADJS, PREPS), start=3):
        if w in words:
            return tag
    raise ValueError(w)


def gold_order(src: list[int], tgt: list[int]) -> list[int]:
    """Position in the target of each source word (k-th occurrence ↦ k-th occurrence)."""
    seen: dict[int, int] = {}
    out = []
    for w in src:
        k = seen.get(w, 0)
        seen[w] = k + 1
        out.append([i for i, t in enumerate(tgt) if t == w + TARGET_OFFSET][k])
    return out


def features(srcs, tgts):
    return {
        "pos": [[word_class(w) for w in s] for s in srcs],
        "bieo": [[3] * len(s) for s in srcs],
        "order": [gold_order(s, t) for s, t in zip(srcs, tgts)],
    }


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_variant_learns_svo_to_sov(name, tmp_path):
    torch.manual_seed(1)
    data = make_data(20_000, 200, seed=7)
    options = {"preset": "tiny", "dropout": 0.0, "feature_sizes": SIZES, **VARIANTS[name]}
    model = build_model(options, VOCAB)
    needed = model.options.required_features()
    pick = lambda f: {k: v for k, v in f.items() if k in needed}  # noqa: E731
    feats = (
        {
            "train": pick(features([s for s, _ in data[0]], [t for _, t in data[0]])),
            "test": pick(features(data[1], data[2])),
        }
        if needed
        else None
    )
    opts = TrainOptions(
        device="cpu",
        batch_tokens=BATCH_TOKENS,
        lr=2e-3,
        warmup=150,
        max_steps=STEPS.get(name, MAX_STEPS),
        eval_every=100,
        target_bleu=TARGET_DEV_BLEU,
        log_every=100,
        label_smoothing=0.1,
        seed=1,
        threads=THREADS,
    )
    score, exact = train_and_score(name, model, data, feats, opts, tmp_path)
    assert score >= BLEU_BAR
    assert exact >= EXACT_BAR


@pytest.mark.slow
def test_gold_absolute_preorder_encoding_learns_at_least_as_fast_as_the_baseline(tmp_path):
    """Kawara et al.'s Table V: gold preorders are the upper bound. At equal updates (150, before
    either has converged) the absolute encoding of gold positions must score at least the
    baseline's BLEU, and it must read the test sentences' own gold positions: identity positions
    at test time (a pipeline that fed no test preorders) must score lower. Measured: baseline
    96.0, gold absolute 99.1 BLEU after 150 updates of 1,500 tokens, 69.9 with identity test
    positions; 91.4 and 97.6 after 150 of BATCH_TOKENS (750)."""
    from reordering_task import bleu

    from wordorder.decode.beam import beam_search
    from wordorder.model_io.batching import pad, pad_feature
    from wordorder.specials import EOS_ID

    data = make_data(20_000, 200, seed=7)
    train_order = [gold_order(s, t) for s, t in data[0]]
    test_order = [gold_order(s, t) for s, t in zip(data[1], data[2])]
    # equal updates whatever the machine's speed: the time cap only stops a hung run
    opts = TrainOptions(
        device="cpu",
        batch_tokens=BATCH_TOKENS,
        lr=2e-3,
        warmup=150,
        max_steps=150,
        eval_every=1000,
        log_every=100,
        label_smoothing=0.1,
        seed=1,
        threads=THREADS,
    )
    scores = {}
    for name, extra in [("baseline", {}), ("gold_absolute", {"preorder_encoding": "absolute"})]:
        torch.manual_seed(1)
        model = build_model({"preset": "tiny", "dropout": 0.0, "relative_k": 4, **extra}, VOCAB)
        feats = {"train": {"order": train_order}, "test": {"order": test_order}} if extra else None
        (tmp_path / name).mkdir()
        scores[name], _ = train_and_score(name, model, data, feats, opts, tmp_path / name)
    src = pad([s + [EOS_ID] for s in data[1]])
    identity = {"order": pad_feature("order", [list(range(len(s))) for s in data[1]], src.size(1))}
    hyps = [h[0] for h in beam_search(model, src, beam_size=4, feats=identity)]
    without_test_preorders = bleu(hyps, data[2])
    print(f"BLEU {scores}, gold absolute with identity test positions {without_test_preorders:.2f}")
    assert scores["gold_absolute"] >= scores["baseline"]
    assert without_test_preorders < scores["gold_absolute"] - 5
