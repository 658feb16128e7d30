"""Config validation: schema errors name the key, cross-checks name the pair / variant."""

from __future__ import annotations

import pytest
import yaml

from wordorder.config import clean_options, entry_model, load_config, load_variants, read_yaml
from wordorder.corpus.pairdata import split_names
from wordorder.errors import WordorderError


def write(tmp_path, config: dict):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def base_config(repo) -> dict:
    return yaml.safe_load((repo / "configs" / "default.yaml").read_text(encoding="utf-8"))


def test_default_config_is_valid_and_gets_defaults(repo, monkeypatch):
    monkeypatch.chdir(repo)
    config = load_config(repo / "configs" / "default.yaml")
    assert config["pairs"] == ["en-ja"]
    assert config["seeds"] == [1]
    assert config["subword"]["model_type"] == "bpe"  # default filled in
    assert config["decode"]["beam_size"] == 5
    assert split_names(config["data"]["en-ja"]) == ["train", "dev", "bible"]
    assert clean_options(config, "en-ja") == {"min_len": 1, "max_len": 50, "max_ratio": 9}


def test_typo_in_key_names_the_key(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    config = base_config(repo)
    config["subword"]["vocab_sise"] = 100
    with pytest.raises(WordorderError, match=r"subword.*vocab_sise"):
        load_config(write(tmp_path, config))


def test_unknown_pair_is_rejected_with_the_defined_ones(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    config = base_config(repo)
    config["pairs"] = ["de-en"]
    with pytest.raises(WordorderError, match="unknown pair 'de-en'") as e:
        load_config(write(tmp_path, config))
    assert "en-ja" in str(e.value)


def test_unknown_variant_lists_registered_ones(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    config = base_config(repo)
    config["variants"] = ["transformer_huge"]
    with pytest.raises(WordorderError, match="unknown variant 'transformer_huge'") as e:
        load_config(write(tmp_path, config))
    assert "transformer_small" in str(e.value)


def test_testset_may_not_be_called_train(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    config = base_config(repo)
    config["data"]["en-ja"]["test"] = {"train": {"holdout": 10}}
    with pytest.raises(WordorderError, match="data.en-ja.test"):
        load_config(write(tmp_path, config))


def test_bad_yaml_names_the_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("experiment: x\npairs: [en-ja\nvariants: []\n", encoding="utf-8")
    with pytest.raises(WordorderError) as e:
        load_config(path)
    assert str(path) in str(e.value) and e.value.line is not None


def test_variant_registry_entries_have_a_model(repo):
    variants = load_variants(repo / "configs" / "variants.yaml")
    assert variants["transformer_base"]["model"] == {"family": "transformer", "preset": "base"}


def test_schema_train_block_lists_exactly_the_training_options(repo):
    """The config's train keys are TrainOptions' fields (seed and threads come from elsewhere)."""
    import dataclasses

    from wordorder.config import read_yaml
    from wordorder.train.loop import TrainOptions

    schema = read_yaml(repo / "workflow" / "schemas" / "config.schema.yaml")
    keys = set(schema["properties"]["train"]["properties"])
    assert keys == {f.name for f in dataclasses.fields(TrainOptions)} - {"seed", "threads"}


def test_typo_in_train_option_is_caught_by_the_schema(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    config = base_config(repo)
    config["train"]["max_step"] = 10
    with pytest.raises(WordorderError, match=r"train.*max_step"):
        load_config(write(tmp_path, config))


def test_variant_needing_trees_is_refused_for_a_pos_only_source(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    registry = tmp_path / "variants.yaml"
    registry.write_text(
        yaml.safe_dump(
            {
                "variants": {
                    "sdatt": {
                        "needs": ["trees"],
                        "model": {"family": "transformer", "preset": "tiny"},
                    },
                    "lingfeat": {
                        "needs": ["pos"],
                        "model": {"family": "transformer", "preset": "tiny"},
                    },
                    # reads the tree through its model options alone (no
                    # `needs`): the check derives it
                    "rnn_sdatt": {
                        "model": {"family": "rnn", "preset": "rnn_tiny", "attention": "syntax"}
                    },
                }
            }
        ),
        encoding="utf-8",
    )
    config = base_config(repo)
    config["variants_file"] = str(registry)
    config["data"]["de-en"] = config["data"]["en-ja"]
    config["pairs"] = ["en-ja", "de-en"]
    config["variants"] = ["lingfeat"]
    config["preorder"] = {"methods": ["gold", "btg"]}  # BTG needs POS only
    load_config(write(tmp_path, config))  # POS is enough: HanTa gives it for German
    config["preorder"] = {"methods": ["rvnn"]}
    with pytest.raises(
        WordorderError, match="preorder method 'rvnn' on de-en needs dependency trees"
    ):
        load_config(write(tmp_path, config))
    config["preorder"] = {"methods": []}
    config["variants"] = ["sdatt"]
    with pytest.raises(
        WordorderError, match=r"variant 'sdatt' on de-en needs dependency trees.*'de' \(hanta\)"
    ) as e:
        load_config(write(tmp_path, config))
    assert "stanza" in e.value.hint
    config["variants"] = ["rnn_sdatt"]
    with pytest.raises(
        WordorderError, match=r"variant 'rnn_sdatt' on de-en needs dependency trees"
    ):
        load_config(write(tmp_path, config))
    config["syntax"] = {"parsers": {"de": {"backend": "stanza", "model_dir": "/models/stanza"}}}
    load_config(write(tmp_path, config))  # a configured stanza model gives trees
    config["pairs"], config["data"] = ["fi-en"], {"fi-en": config["data"]["en-ja"]}
    with pytest.raises(WordorderError, match="no parser is configured for the language 'fi'"):
        load_config(write(tmp_path, config))


@pytest.mark.parametrize(
    "name",
    [
        "default",
        "kawara2021",
        "kawara2021_clipping",
        "chen2019",
        "chen2020",
        "chen2020_heads",
        "chen2018",
        "zhang2018",
    ],
)
def test_every_shipped_config_validates_and_its_variants_build(repo, monkeypatch, name):
    from wordorder.models import build_model
    from wordorder.models.options import CATEGORICAL_FEATURES
    from wordorder.models.registry import resolve_options

    monkeypatch.chdir(repo)  # variants_file and local data paths are relative to the repository
    config = load_config(repo / "configs" / f"{name}.yaml")
    registry = load_variants(repo / "configs" / "variants.yaml")
    for variant in config["variants"]:
        for pair in config["pairs"]:
            model = entry_model(registry[variant], pair)
            needs = resolve_options(dict(model)).required_features()
            sizes = {n: 20 for n in needs if n in CATEGORICAL_FEATURES}
            build_model({**model, "feature_sizes": sizes} if sizes else model, 100)
    baseline = config["evaluation"]["baseline"]
    assert baseline is None or baseline in config["variants"]


def test_update_size_must_split_over_the_training_processes(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    config = base_config(repo)
    config["train_processes"] = 2
    config["train"]["accum_steps"] = 3
    with pytest.raises(
        WordorderError, match=r"accum_steps \(3\) must be a multiple of train_processes \(2\)"
    ):
        load_config(write(tmp_path, config))
    config["train"]["accum_steps"] = 4
    assert load_config(write(tmp_path, config))["train_processes"] == 2


def test_config_model_options_are_checked_before_any_job(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    config = base_config(repo)
    config["model"] = {"attention_dropot": 0.1}
    with pytest.raises(WordorderError, match=r"model: unknown model option 'attention_dropot'"):
        load_config(write(tmp_path, config))
    config["model"] = {"attention_dropout": 0.1}
    config["data"]["en-ja"]["model"] = {"tie_outptu": False}
    with pytest.raises(
        WordorderError, match=r"data\.en-ja\.model: unknown model option 'tie_outptu'"
    ):
        load_config(write(tmp_path, config))
    config["data"]["en-ja"]["model"] = {"preset": "big"}  # sizes come from presets / keep_preset
    with pytest.raises(WordorderError, match=r"data\.en-ja\.model"):
        load_config(write(tmp_path, config))


def test_separate_vocabularies_need_untied_embeddings(repo, tmp_path, monkeypatch):
    monkeypatch.chdir(repo)
    config = base_config(repo)
    config["subword"]["joint"] = False
    with pytest.raises(
        WordorderError, match=r"subword.joint is false .* ties its source and target embeddings"
    ) as e:
        load_config(write(tmp_path, config))
    assert "tie_embeddings: false" in e.value.hint
    config["model"] = {"tie_embeddings": False}
    assert load_config(write(tmp_path, config))["subword"]["joint"] is False
    # the default
    assert load_config(write(tmp_path, base_config(repo)))["subword"]["joint"] is True


def test_variant_names_follow_one_rule_in_config_and_registry(repo):
    config = read_yaml(repo / "workflow" / "schemas" / "config.schema.yaml")
    registry = read_yaml(repo / "workflow" / "schemas" / "variants.schema.yaml")
    assert (
        config["$defs"]["variant_name"]["pattern"]
        == registry["properties"]["variants"]["propertyNames"]["pattern"]
    )


def test_swap_noise_perturbs_the_test_sets_named(repo, tmp_path, monkeypatch):
    """evaluation.swap_noise.testsets: the swap-noise figures of those test sets only (null:
    every one); a name that is no pair's test set is refused, naming the ones there are."""
    from wordorder.flow import Experiment

    monkeypatch.chdir(repo)
    config = base_config(repo)
    config["data"]["en-ja"]["test"]["held"] = {"holdout": 10}
    config["evaluation"] = {"swap_noise": {"percents": [0, 50]}}

    def swap_figures(testsets) -> list[str]:
        config["evaluation"]["swap_noise"]["testsets"] = testsets
        targets = Experiment(load_config(write(tmp_path, config))).all_targets()
        return sorted(t.rsplit("/", 1)[1] for t in targets if "/swap_noise_" in t)

    assert swap_figures(None) == ["swap_noise_en-ja_bible.png", "swap_noise_en-ja_held.png"]
    assert swap_figures(["held"]) == ["swap_noise_en-ja_held.png"]
    with pytest.raises(WordorderError, match="swap_noise.testsets names 'newstest'") as e:
        swap_figures(["newstest"])
    assert "bible, held" in str(e.value)


def test_a_filled_in_default_is_a_copy_of_its_own():
    """Defaults are copied into each config (two modules' configs never share a list), as plain
    YAML data: mappings and lists new, scalars kept, a tuple written as YAML would (a list)."""
    from wordorder.schema import plain_copy

    default = {"a": [1, {"b": [2.5, None, "x"]}], "c": (3, 4), "d": True}
    copy = plain_copy(default)
    assert copy == {"a": [1, {"b": [2.5, None, "x"]}], "c": [3, 4], "d": True}
    assert copy["a"] is not default["a"] and copy["a"][1] is not default["a"][1]
    assert copy["a"][1]["b"] is not default["a"][1]["b"]
