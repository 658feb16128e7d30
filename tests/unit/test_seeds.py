"""seeds_by_variant: a variant's own training seeds in place of the global ones, and the config
checks (the schema's list rules, and
every key a variant of the config, refused before any job with the file and line)."""

from __future__ import annotations

import pytest
import yaml

from wordorder.config import load_config
from wordorder.errors import WordorderError
from wordorder.seeds import seeds_of

CONFIG = {
    "variants": ["base", "costly", "other"],
    "seeds": [1, 2, 3],
    "seeds_by_variant": {"base": [1, 2, 3, 4, 5, 6], "costly": [7, 8]},
}


def test_seeds_of_a_variant():
    assert seeds_of(CONFIG, "base") == [1, 2, 3, 4, 5, 6]
    assert seeds_of(CONFIG, "costly") == [7, 8]
    assert seeds_of(CONFIG, "other") == [1, 2, 3]  # not named: the global seeds
    assert seeds_of({"seeds": [5]}, "x") == [5]  # no seeds_by_variant at all
    assert seeds_of({"seeds": [5], "seeds_by_variant": {}}, "x") == [5]


def _config(repo, tmp_path, text: str):
    base = yaml.safe_load((repo / "configs" / "default.yaml").read_text(encoding="utf-8"))
    base["variants"] = ["transformer_small", "transformer_tiny"]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(base, sort_keys=False) + text, encoding="utf-8")
    return path


def test_config_accepts_seeds_by_variant(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    config = load_config(_config(repo, tmp_path, "seeds_by_variant: {transformer_tiny: [2, 3]}\n"))
    assert seeds_of(config, "transformer_tiny") == [2, 3]
    assert seeds_of(config, "transformer_small") == [1]
    assert load_config(_config(repo, tmp_path, ""))["seeds_by_variant"] == {}  # the default


def test_config_refuses_a_key_that_is_not_a_variant_of_the_config(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    path = _config(repo, tmp_path, "seeds_by_variant:\n  transformer_tiny: [1]\n  rnn_tiny: [2]\n")
    line = len(path.read_text(encoding="utf-8").splitlines())
    with pytest.raises(WordorderError) as e:
        load_config(path)
    # rnn_tiny is in the registry, but this config does not train it
    assert e.value.message == (
        "seeds_by_variant: 'rnn_tiny' is not one of the variants of this config"
    )
    assert (e.value.path, e.value.line) == (str(path), line)
    assert e.value.hint and "transformer_small, transformer_tiny" in e.value.hint


@pytest.mark.parametrize(
    ("value", "must"),
    [
        ("{transformer_tiny: []}", "should be non-empty"),
        ("{transformer_tiny: [1, 1]}", "non-unique elements"),
        ("{transformer_tiny: [-1]}", "less than the minimum of 0"),
        ("{transformer_tiny: 3}", "is not of type 'array'"),
        ("{'-x': [1]}", "the key '-x' is refused"),
    ],
)
def test_schema_refuses_bad_seed_lists(repo, tmp_path, monkeypatch, value, must):
    monkeypatch.chdir(repo)
    with pytest.raises(WordorderError, match="invalid config at 'seeds_by_variant") as e:
        load_config(_config(repo, tmp_path, f"seeds_by_variant: {value}\n"))
    assert must in e.value.message
