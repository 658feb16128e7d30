"""Beam search and greedy decoding: a hand-made toy model with exact scores, and a random
Transformer for batching, pruning and length limits."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch

from wordorder.decode.batches import translate_batches
from wordorder.decode.beam import (
    beam_search,
    beam_search_hypotheses,
    greedy_decode,
    max_lengths,
    top_candidates,
)
from wordorder.errors import WordorderError
from wordorder.models import build_model
from wordorder.models.base import DecoderState, EncoderOut, Seq2SeqModel
from wordorder.specials import EOS_ID, PAD_ID

A, B = 4, 5  # the toy's two words; ids 0..3 are the specials
# Next-token probabilities given the prefix generated so far; any other prefix ends (EOS 1.0).
TABLE = {
    (): {A: 0.6, B: 0.4},
    (A,): {A: 0.4, B: 0.3, EOS_ID: 0.3},
    (B,): {EOS_ID: 0.9, A: 0.1},
    (A, A): {EOS_ID: 1.0},
    (A, B): {EOS_ID: 1.0},
}


@dataclass
class ToyState(DecoderState):
    inputs: torch.Tensor  # (N, t) decoder inputs fed so far: BOS + generated tokens


class ToyModel(Seq2SeqModel):
    """Implements only the decoder-state interface, with fixed probability tables.

    Greedy takes A (0.6) then A (0.4) then EOS: p = 0.24. The best sequence is B EOS with
    p = 0.4 * 0.9 = 0.36, which beam search (K = 2) finds and greedy misses.
    """

    def __init__(self):
        super().__init__()
        self.vocab_size = 6

    def encode(self, src, feats=None):
        return EncoderOut(memory=torch.zeros(*src.shape, 1), src_pad=src.eq(PAD_ID))

    def init_state(self, enc):
        return ToyState(inputs=torch.zeros(enc.memory.size(0), 0, dtype=torch.long))

    def step(self, prev, state):
        inputs = torch.cat([state.inputs, prev[:, None]], dim=1)
        lp = torch.full((prev.size(0), self.vocab_size), float("-inf"))
        for row, fed in enumerate(inputs.tolist()):
            for tok, p in TABLE.get(tuple(fed[1:]), {EOS_ID: 1.0}).items():  # fed[0] is BOS
                lp[row, tok] = math.log(p)
        return lp, ToyState(inputs)  # reorder_state: the base class's generic row selection


def toy_src(n=1, length=3):
    src = torch.full((n, length + 1), 7)
    src[:, -1] = EOS_ID
    return src


def test_toy_beam_finds_the_sequence_greedy_misses_with_exact_score():
    model = ToyModel()
    assert greedy_decode(model, toy_src()) == [[A, A]]
    hyps = beam_search_hypotheses(model, toy_src(), beam_size=2, length_penalty=0.0, n_best=2)
    assert [h.tokens for h in hyps[0]] == [[B], [A, A]]
    assert hyps[0][0].score == pytest.approx(math.log(0.36), abs=1e-6)
    assert hyps[0][1].score == pytest.approx(math.log(0.24), abs=1e-6)


def test_toy_length_penalty_normalises_by_length_including_eos():
    # Mean log-prob per token: A A EOS = log(0.24)/3 = -0.476 beats B EOS = log(0.36)/2 = -0.511.
    hyps = beam_search_hypotheses(ToyModel(), toy_src(), beam_size=3, length_penalty=1.0, n_best=3)[
        0
    ]
    assert [h.tokens for h in hyps] == [[A, A], [B], [A, B]]
    assert [h.score for h in hyps] == pytest.approx(
        [math.log(0.24) / 3, math.log(0.36) / 2, math.log(0.18) / 3]
    )
    assert beam_search(ToyModel(), toy_src(), beam_size=3, length_penalty=1.0) == [[[A, A]]]


def test_toy_max_length_forces_eos():
    # max length 1: A must end at once (0.6 * 0.3 = 0.18), B EOS = 0.36 still wins.
    hyps = beam_search_hypotheses(
        ToyModel(), toy_src(), beam_size=2, max_len_a=0.0, max_len_b=1, length_penalty=0.0, n_best=2
    )[0]
    assert [h.tokens for h in hyps] == [[B], [A]]
    assert hyps[1].score == pytest.approx(math.log(0.6 * 0.3), abs=1e-6)
    assert greedy_decode(ToyModel(), toy_src(), max_len_a=0.0, max_len_b=1) == [[A]]
    assert greedy_decode(ToyModel(), toy_src(), max_len_a=0.0, max_len_b=0) == [[]]


def test_toy_batch_of_identical_sentences_gives_identical_results():
    out = beam_search(ToyModel(), toy_src(5), beam_size=2, length_penalty=0.0)
    assert out == [[[B]]] * 5


def test_toy_beam_wider_than_the_vocabulary_finds_every_hypothesis():
    """K = 8 beams over 6 ids (2 words): step 0 has only 6 candidates, and every one of the
    toy's 5 complete sequences is found with its exact probability."""
    hyps = beam_search_hypotheses(ToyModel(), toy_src(2), beam_size=8, length_penalty=0.0, n_best=5)
    for sent in hyps:
        assert sorted(map(tuple, (h.tokens for h in sent))) == [(A,), (A, A), (A, B), (B,), (B, A)]
        assert [h.score for h in sent] == pytest.approx(
            [math.log(p) for p in (0.36, 0.24, 0.18, 0.18, 0.04)], abs=1e-6
        )


def random_transformer(seed=0):
    torch.manual_seed(seed)
    return build_model({"preset": "tiny"}, 30).eval()


def random_sources(n=12, seed=3):
    g = torch.Generator().manual_seed(seed)
    return [
        torch.randint(4, 30, (int(torch.randint(1, 12, (1,), generator=g)),), generator=g).tolist()
        for _ in range(n)
    ]


def padded(sources):
    width = max(len(s) for s in sources) + 1
    src = torch.full((len(sources), width), PAD_ID)
    for i, s in enumerate(sources):
        src[i, : len(s) + 1] = torch.tensor(s + [EOS_ID])
    return src


def test_beam_size_one_equals_greedy():
    model, src = random_transformer(), padded(random_sources())
    greedy = greedy_decode(model, src, 1.0, 4)
    beam = [h[0] for h in beam_search(model, src, beam_size=1, max_len_a=1.0, max_len_b=4)]
    assert beam == greedy


def test_batched_search_equals_one_sentence_at_a_time():
    model, sources = random_transformer(1), random_sources(8)
    batched = beam_search_hypotheses(
        model, padded(sources), beam_size=4, n_best=3, max_len_a=0.5, max_len_b=3
    )
    for s, hyps in zip(sources, batched):
        alone = beam_search_hypotheses(
            model, padded([s]), beam_size=4, n_best=3, max_len_a=0.5, max_len_b=3
        )[0]
        assert [h.tokens for h in hyps] == [h.tokens for h in alone]
        assert [h.score for h in hyps] == pytest.approx([h.score for h in alone], abs=1e-4)


def test_max_length_respected_and_n_best_sorted():
    model, sources = random_transformer(2), random_sources(10)
    src = padded(sources)
    limits = max_lengths(src, 0.5, 2).tolist()
    assert limits == [int(0.5 * len(s) + 2) for s in sources]
    hyps = beam_search_hypotheses(model, src, beam_size=5, n_best=5, max_len_a=0.5, max_len_b=2)
    for sent, limit in zip(hyps, limits):
        assert len(sent) == 5
        assert all(len(h.tokens) <= limit for h in sent)
        assert all(
            EOS_ID not in h.tokens and PAD_ID not in h.tokens and 2 not in h.tokens for h in sent
        )
        scores = [h.score for h in sent]
        assert scores == sorted(scores, reverse=True)


def test_translate_batches_restores_input_order():
    model, sources = random_transformer(3), random_sources(15)
    out = translate_batches(
        model, sources, batch_tokens=20, beam_size=3, max_len_a=1.0, max_len_b=2, progress=False
    )
    expected = [
        beam_search(model, padded([s]), beam_size=3, max_len_a=1.0, max_len_b=2)[0][0]
        for s in sources
    ]
    assert out == expected
    greedy = translate_batches(
        model, sources, batch_size=4, beam_size=1, max_len_a=1.0, max_len_b=2, progress=False
    )
    assert greedy == [greedy_decode(model, padded([s]), 1.0, 2)[0] for s in sources]
    assert translate_batches(model, [], progress=False) == []


def test_bad_n_best_is_a_user_error():
    with pytest.raises(WordorderError):
        beam_search(random_transformer(), padded([[5, 6]]), beam_size=2, n_best=3)


@pytest.mark.parametrize("m", [40, 64 * 9, 64 * 9 + 5, 16000 + 37])
def test_top_candidates_equal_topk_values_with_ties_and_minus_infinity(m):
    g = torch.Generator().manual_seed(m)
    scores = torch.randn(6, m, generator=g)
    scores[1] = float("-inf")  # a row of dead beams only
    scores[2, : m // 2] = float("-inf")
    scores[3] = torch.randint(0, 3, (m,), generator=g).float()  # many ties
    scores[4, -1] = 10.0  # the best value in the last, shorter chunk
    for k in (1, 8):
        want = scores.topk(k, dim=1)
        values, cols = top_candidates(scores, k)
        assert torch.equal(values, want.values)
        assert torch.equal(scores.gather(1, cols), values)  # the indices point at the values
        assert all(len(set(row)) == k for row in cols.tolist())  # no column twice
    assert top_candidates(scores, 8)[1][4, 0] == m - 1
