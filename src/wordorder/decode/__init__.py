"""Decoding: batched beam search and greedy search over the model state interface, and
the decoding options (:class:`DecodeOptions`, their defaults held once)."""

from wordorder.decode.beam import Hypothesis, beam_search, beam_search_hypotheses, greedy_decode, translate_batches
from wordorder.decode.options import DecodeOptions

__all__ = ["DecodeOptions", "Hypothesis", "beam_search", "beam_search_hypotheses", "greedy_decode",
           "translate_batches"]
