"""Decoding: batched beam search and greedy search over the model state interface."""

from wordorder.decode.beam import Hypothesis, beam_search, beam_search_hypotheses, greedy_decode, translate_batches

__all__ = ["Hypothesis", "beam_search", "beam_search_hypotheses", "greedy_decode", "translate_batches"]
