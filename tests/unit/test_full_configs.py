"""The full-scale configs (configs/full/): valid, every source well formed and resolvable offline
as far as that goes (sacreBLEU's test-set index, sha256 of every download), and all five in the
union workflow (workflow/papers.smk)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wordorder.config import apply_presets, load_config, load_variants, variant_model
from wordorder.corpus.pairdata import split_names, split_spec
from wordorder.errors import WordorderError

REPO = Path(__file__).resolve().parents[2]
FULL = sorted((REPO / "configs" / "full").glob("*.yaml"))
PAPERS = {"chen2018", "chen2019", "chen2020", "kawara2021", "zhang2018"}
# configs of one table beside a paper's main config (not in the union workflow)
TABLE_CONFIGS = {"kawara2021_clipping"}


def sources(spec):
    """A source and, for concat, its parts (recursively)."""
    yield spec
    for part in spec.get("parts", []):
        yield from sources(part)


def test_one_full_config_per_paper():
    assert {p.stem for p in FULL} == PAPERS | TABLE_CONFIGS


def test_kawara_full_configs_have_the_papers_directions_and_units(monkeypatch):
    """§V-A: eight directions; footnote 12: word-level preorders; Table I: k in {1, 2, 4, 8}."""
    monkeypatch.chdir(REPO)
    main = load_config(REPO / "configs" / "full" / "kawara2021.yaml")
    assert sorted(main["pairs"]) == sorted(
        ["ja-en", "en-ja", "en-de", "de-en", "en-cs", "cs-en", "en-ru", "ru-en"]
    )
    sweep = load_config(REPO / "configs" / "full" / "kawara2021_clipping.yaml")
    for config in (main, sweep):
        assert config["preorder"]["positions"] == "word"
    variants = load_variants(sweep["variants_file"])
    ks = {
        (variants[v]["model"]["relative_k"], variants[v]["model"].get("preorder_encoding", "none"))
        for v in sweep["variants"]
    }
    assert ks == {(k, enc) for k in (1, 2, 4, 8) for enc in ("none", "relative")}
    assert sweep["data"]["en-ja"]["test"]["aspec_dev"] == sweep["data"]["en-ja"]["dev"]


@pytest.mark.parametrize("path", FULL, ids=lambda p: p.stem)
def test_full_config_is_valid_and_its_sources_resolve(path, monkeypatch):
    from sacrebleu.dataset import DATASETS

    monkeypatch.chdir(REPO)
    config = load_config(path)  # schema, variants, parsers and every source's keys
    assert config["experiment"] == f"{path.stem}_full"
    assert config["presets"], "a full-scale config sets the paper's model sizes"
    variants = apply_presets(load_variants(config["variants_file"]), config["presets"])
    registry = load_variants(config["variants_file"])
    for name in config["variants"]:
        family = variants[name]["model"].get("family", "transformer")
        # a size the paper names for the system (keep_preset), else the config's for the family
        want = (
            registry[name]["model"]["preset"]
            if registry[name].get("keep_preset")
            else config["presets"][family]
        )
        assert variants[name]["model"]["preset"] == want
    kinds = set()
    for pair in config["pairs"]:
        data = config["data"][pair]
        for split in split_names(data):
            for spec in sources(split_spec(data, split)):
                kinds.add(spec["kind"])
                if spec["kind"] == "url":
                    assert re.fullmatch(r"[0-9a-f]{64}", spec["sha256"])
                    assert spec["url"].startswith(("https://", "http://"))
                if spec["kind"] == "sacrebleu":
                    langpair = spec.get("langpair", pair)
                    assert langpair in DATASETS[spec["test_set"]].langpairs, (pair, spec)
                if spec["kind"] == "manual":
                    assert "corpora/" in str(spec.get("src", spec.get("files")))
    # every paper needs at least one corpus it cannot download
    assert "manual" in kinds


def test_the_union_workflow_includes_every_full_config():
    text = (REPO / "workflow" / "papers.smk").read_text(encoding="utf-8")
    assert set(re.findall(r"^module (\w+):", text, flags=re.M)) == PAPERS
    assert set(re.findall(r'read_yaml\("configs/full/(\w+)\.yaml"\)', text)) == PAPERS


def test_presets_replace_the_registry_preset_per_family():
    registry = {
        "t": {"model": {"family": "transformer", "preset": "small", "relative_k": 4}},
        "r": {"model": {"family": "rnn", "preset": "rnn_small", "d_model": 300}},
        "u": {"model": {"preset": "tiny"}},
    }
    out = apply_presets(registry, {"rnn": "rnmt", "transformer": "base"})
    assert out["t"]["model"] == {"family": "transformer", "preset": "base", "relative_k": 4}
    # explicit keys stay
    assert out["r"]["model"] == {"family": "rnn", "preset": "rnmt", "d_model": 300}
    assert out["u"]["model"]["preset"] == "base"  # no family = transformer
    assert registry["t"]["model"]["preset"] == "small"  # the registry itself is untouched
    assert apply_presets(registry, {}) == registry


def test_an_entry_with_keep_preset_keeps_its_size():
    registry = {
        "big": {"keep_preset": True, "model": {"family": "transformer", "preset": "big"}},
        "rows": {"keep_preset": False, "model": {"family": "transformer", "preset": "small"}},
    }
    out = apply_presets(registry, {"transformer": "base"})
    assert out["big"]["model"]["preset"] == "big"
    assert out["rows"]["model"]["preset"] == "base"


def test_keep_preset_without_a_preset_is_an_error(tmp_path):
    path = tmp_path / "variants.yaml"
    path.write_text(
        "variants:\n  v: {keep_preset: true, model: {family: transformer, relative_k: 4}}\n",
        encoding="utf-8",
    )
    with pytest.raises(WordorderError, match="keep_preset") as e:
        load_variants(path)
    assert e.value.path == str(path)


def test_model_options_of_a_variant_on_a_pair_layer_registry_config_and_pair():
    variants = {
        "v": {"model": {"family": "transformer", "preset": "base", "dropout": 0.3, "relative_k": 4}}
    }
    config = {
        "model": {"dropout": 0.1, "attention_dropout": 0.1, "tie_output": False},
        "data": {"zh-en": {"model": {"tie_output": True}}, "en-de": {}},
    }
    assert variant_model(config, variants, "v", "en-de") == {
        "family": "transformer",
        "preset": "base",
        "dropout": 0.1,
        "relative_k": 4,
        "attention_dropout": 0.1,
        "tie_output": False,
    }
    assert variant_model(config, variants, "v", "zh-en")["tie_output"] is True
    assert variant_model({"data": {}}, variants, "v", "en-de") == variants["v"]["model"]


def test_schema_presets_are_the_registry_presets():
    import yaml

    from wordorder.models.registry import PRESETS

    schema = yaml.safe_load(
        (REPO / "workflow" / "schemas" / "config.schema.yaml").read_text(encoding="utf-8")
    )
    allowed = schema["properties"]["presets"]["properties"]
    by_family = {"transformer": set(), "rnn": set()}
    for name, preset in PRESETS.items():
        by_family[preset.get("family", "transformer")].add(name)
    assert {family: set(spec["enum"]) for family, spec in allowed.items()} == by_family
