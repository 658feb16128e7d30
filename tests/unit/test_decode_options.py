"""The decoding defaults are held once, in DecodeOptions: the config schema's ``decode`` block
and the beam search's keyword defaults must agree with it."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from wordorder.config import SCHEMA_DIR, read_yaml
from wordorder.decode.options import DecodeOptions
from wordorder.errors import WordorderError


def test_schema_defaults_equal_decode_options():
    block = read_yaml(SCHEMA_DIR / "config.schema.yaml")["properties"]["decode"]["properties"]
    schema_defaults = {name: spec["default"] for name, spec in block.items()}
    assert schema_defaults == dataclasses.asdict(DecodeOptions())


def test_beam_search_keyword_defaults_are_decode_options():
    from wordorder.decode import batches, beam

    want = dataclasses.asdict(DecodeOptions())
    # translate_batches' device is a torch device (None: the model's), resolved by the runner
    del want["device"]
    for fn in (
        beam.beam_search_hypotheses,
        beam.beam_search,
        beam.greedy_decode,
        batches.translate_batches,
    ):
        for name, param in inspect.signature(fn).parameters.items():
            if name in want:
                assert param.default == want[name], (fn.__name__, name)


def test_from_dict_fills_defaults_and_casts_to_the_declared_types():
    opts = DecodeOptions.from_dict({"beam_size": 4.0, "length_penalty": 1, "device": "cpu"})
    assert opts == DecodeOptions(beam_size=4, length_penalty=1.0, device="cpu")
    assert type(opts.beam_size) is int and type(opts.length_penalty) is float
    assert DecodeOptions.from_dict({}) == DecodeOptions()


def test_from_dict_refuses_an_unknown_key():
    with pytest.raises(WordorderError, match="unknown decode option.*beam_sise") as e:
        DecodeOptions.from_dict({"beam_sise": 4})
    assert "beam_size" in e.value.hint
