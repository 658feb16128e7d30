"""The experiment as the rules see it: its pairs, splits, variants and runs, read from the
validated config and the variant registry (checked once, when the workflow is built).

Every helper here is free of heavy imports and memoises what it derives per (pair, variant):
the DAG calls them thousands of times (issue 47: the dry run of all five papers).
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

from wordorder import seeds as variant_seeds
from wordorder.config import apply_presets, check_config, load_variants, variant_model
from wordorder.corpus.pairdata import (
    is_holdout,
    pair_langs,
    split_extra_refs,
    split_names,
    split_spec,
)
from wordorder.flow.paths import Paths, fill
from wordorder.yamlfile import Locator

# Snakemake's wildcards object (attribute access: w.pair, w.variant, ...); any object with the
# attributes a helper reads will do, e.g. types.SimpleNamespace.
Wildcards = Any


def as_json(value: object) -> str:
    """Options travel to the CLI as one JSON argument (a change of them reruns the rule)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def run_of(pair: str, variant: str, seed: object = None, **more: object) -> SimpleNamespace:
    """Wildcards for a job the helpers are asked about outside a rule."""
    return SimpleNamespace(pair=pair, variant=variant, seed=seed, **more)


class ConfigView:
    """The config's pairs, splits, variants and runs (``config`` validated by the schema)."""

    def __init__(self, config: dict[str, Any], locate: Locator | None = None) -> None:
        self.config = config
        self.variants: dict[str, dict] = apply_presets(
            load_variants(config["variants_file"]), config["presets"]
        )
        check_config(config, self.variants, locate)
        self.paths = Paths(config["results"], config["logs"], config["experiment"])
        self.preorder: dict[str, Any] = config["preorder"]
        self.methods: list[str] = list(self.preorder["methods"])
        self.swap: dict[str, Any] = config["evaluation"]["swap_noise"]
        self._features: dict[tuple[str, str, str], dict[str, str]] = {}
        self._required: dict[tuple[str, str], list[str]] = {}

    # --- pairs and splits

    def src_lang(self, w: Wildcards) -> str:
        return pair_langs(w.pair)[0]

    def tgt_lang(self, w: Wildcards) -> str:
        return pair_langs(w.pair)[1]

    def testsets(self, pair: str) -> list[str]:
        return list(self.config["data"][pair]["test"])

    def fetched_corpora(self, pair: str) -> list[str]:
        """Splits with a source of their own (holdouts are cut from the training corpus)."""
        data = self.config["data"][pair]
        return [s for s in split_names(data) if not is_holdout(split_spec(data, s))]

    def corpus_of(self, w: Wildcards) -> str:
        spec = split_spec(self.config["data"][w.pair], w.split)
        return "train" if is_holdout(spec) else str(w.split)

    def source_splits(self, pair: str) -> list[str]:
        """Every split whose source side is parsed: train, dev and the test sets."""
        return ["train", "dev", *self.testsets(pair)]

    def source_splits_of(self, w: Wildcards) -> list[str]:
        return self.source_splits(w.pair)

    def align_gold(self, pair: str) -> dict[str, Any] | None:
        gold: dict[str, Any] | None = self.config["data"][pair].get("align_gold")
        return gold

    def aer_pairs(self) -> list[str]:
        return [p for p in self.config["pairs"] if self.align_gold(p)]

    # --- variants and runs

    def seeds_of(self, variant: str) -> list[int]:
        """The variant's training seeds: its seeds_by_variant entry, else seeds."""
        return variant_seeds.seeds_of(self.config, variant)

    def runs(self) -> list[dict[str, Any]]:
        """Every (pair, variant, seed) to train."""
        return [
            dict(pair=p, variant=v, seed=s)
            for p in self.config["pairs"]
            for v in self.config["variants"]
            for s in self.seeds_of(v)
        ]

    def baseline_variant(self) -> str:
        """The variant the others are tested against (evaluation.baseline, else the first)."""
        return str(self.config["evaluation"]["baseline"] or self.config["variants"][0])

    def variant_entry(self, w: Wildcards) -> dict[str, Any]:
        return self.variants[w.variant]

    def model_options(self, w: Wildcards) -> dict[str, Any]:
        """The variant's model options on the pair (registry, config model, data.<pair>.model)."""
        return variant_model(self.config, self.variants, w.variant, w.pair)

    def required_features(self, pair: str, variant: str) -> list[str]:
        """The extra inputs the variant's model reads, with the preset's sizes as training
        builds them (input_groups share out its heads); resolved once per (pair, variant)."""
        key = (pair, variant)
        if key not in self._required:
            from wordorder.models.presets import resolve_options

            options = self.model_options(run_of(pair, variant))
            self._required[key] = sorted(resolve_options(options).required_features())
        return self._required[key]

    def variant_features(self, w: Wildcards, split: str) -> dict[str, str]:
        """The extra source inputs of a variant for one split: {name: file} (POS/BIEO tags of
        the syntax stage, preordered positions of the variant's preordering method)."""
        key = (w.pair, w.variant, split)
        if key not in self._features:
            files = {}
            for name in self.required_features(w.pair, w.variant):
                if name == "order":
                    method = self.variant_entry(w)["preorder"]
                    files[name] = self.paths.PREORDERED.format(
                        pair=w.pair, method=method, split=split, kind="positions",
                        lang=self.src_lang(w),
                    )  # fmt: skip
                else:
                    files[name] = self.data_file(w, split, name, "src")
            self._features[key] = files
        return dict(self._features[key])

    def subword_only_variants(self, pair: str) -> list[str]:
        """Variants whose only input is the original source subwords: a swapped source (swap
        noise) or a gold-alignment sentence (attention AER) is all they need; tags or preorder
        positions would have to be re-derived for such sentences."""
        out = []
        for v in self.config["variants"]:
            w = run_of(pair, v)
            original = self.variant_entry(w).get("source", "original") == "original"
            if original and not self.variant_features(w, "test"):
                out.append(v)
        return out

    def transformer_variants(self) -> list[str]:
        return [
            v
            for v in self.config["variants"]
            if self.variants[v]["model"].get("family", "transformer") == "transformer"
        ]

    # --- the files every stage shares

    def data_file(self, w: Wildcards, split: str, kind: str, side: str) -> str:
        """A split of the pair's data: kind is tok or bpe (or a syntax feature), side is src
        or tgt."""
        lang = self.src_lang(w) if side == "src" else self.tgt_lang(w)
        return self.paths.SPLIT_FILE.format(pair=w.pair, split=split, kind=kind, lang=lang)

    def variant_source(self, w: Wildcards, split: str) -> str:
        """The subword source a variant reads: the pair's, or its preordered version."""
        entry = self.variant_entry(w)
        if entry.get("source", "original") == "preordered":
            return self.paths.PREORDERED.format(
                pair=w.pair, method=entry["preorder"], split=split, kind="bpe",
                lang=self.src_lang(w),
            )  # fmt: skip
        return self.data_file(w, split, "bpe", "src")

    def spm_model(self, pair: str, lang: str) -> str:
        """The subword model of one side: the pair's joint model, or the side's own
        (subword.joint: false)."""
        if self.config["subword"]["joint"]:
            return self.paths.SPM_MODEL.format(pair=pair)
        return self.paths.SPM_SIDE_MODEL.format(pair=pair, lang=lang)

    def spm_inputs(self, w: Wildcards) -> dict[str, str]:
        """The subword models a model of the pair reads: {"spm": source (or joint), "spm_tgt":
        target}."""
        return {
            "spm": self.spm_model(w.pair, self.src_lang(w)),
            "spm_tgt": self.spm_model(w.pair, self.tgt_lang(w)),
        }

    def test_reference(self, w: Wildcards) -> str:
        return self.paths.TEXT.format(pair=w.pair, split=w.testset, lang=self.tgt_lang(w))

    def extra_refs(self, w: Wildcards) -> list[str]:
        """The prepared further references of a test set (NIST sets have four in all)."""
        n = len(split_extra_refs(self.config["data"][w.pair], w.testset))
        return [
            self.paths.EXTRA_REF.format(pair=w.pair, testset=w.testset, n=i, lang=self.tgt_lang(w))
            for i in range(1, n + 1)
        ]

    def references(self, w: Wildcards) -> list[str]:
        """A test set's references: the first, then the further ones."""
        return [self.test_reference(w), *self.extra_refs(w)]

    # --- swap noise (Chen et al. 2019, Figs 3-5)

    def swap_percents(self) -> list[int]:
        """The swap-noise levels, in the config's order; with the analysis off, level 0: the
        rules still need an output, which nothing then asks for."""
        return list(self.swap["percents"]) or [0]

    def swap_levels(self, template: str) -> list[str]:
        """``template`` at every swap-noise level: one job writes them all (one model load for
        all of a model's noisy test sets), its other wildcards left to Snakemake."""
        return [fill(template, percent=p) for p in self.swap_percents()]
