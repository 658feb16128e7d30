"""System test: every system of the RNN family (Chen et al. 2018, Zhang et al. 2018) learns the
synthetic SVO → SOV task of ``test_learns_reordering`` to the Transformer's bar.

The syntax variants read the source dependency tree of the synthetic grammar: the verb is the
root, subject, object and prepositional noun hang under it, an adjective under its noun and
the preposition under its noun (Universal Dependencies' choice of content-word heads). No
word is split, so each subword is its own word.
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
    THREADS,
    VERBS,
    VOCAB,
    make_data,
    train_and_score,
)

from wordorder.models import build_model
from wordorder.train.loop import TrainOptions

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
    # Zhang 2018 §5.2: RNNsearch* (cGRU) with relation layers shaped as for En-De (one k=3
    # convolution), dropout on the output layer only, U(-0.1, 0.1), untied embeddings
    "rnmt": {
        "relation_layers": True,
        "relation_convs": [[3, 24]],
        "relation_width": 32,
        "output_dropout": 0.5,
        "init_uniform": 0.1,
        "tie_embeddings": False,
    },
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
    torch.manual_seed(1)
    data = make_data(20_000, 200, seed=7)
    model = build_model({"preset": "rnn_tiny", "dropout": 0.0, **VARIANTS[name]}, VOCAB)
    feats = (
        {"train": features([s for s, _ in data[0]]), "test": features(data[1])}
        if model.options.syntax_tree()
        else None
    )
    opts = TrainOptions(
        device="cpu",
        batch_tokens=BATCH_TOKENS,
        lr=3e-3,
        warmup=100,
        max_steps=MAX_STEPS,
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
