"""Experiment configuration: the checks a schema cannot express.

The Snakefile validates ``config`` against ``workflow/schemas/config.schema.yaml``
(:func:`wordorder.schema.validate_schema`) and then calls :func:`check_config`; tests and tools
can do both with :func:`load_config`. Everything here is free of heavy imports (no torch),
so listing the DAG stays fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.configfiles import at as _at
from wordorder.configfiles import check_repeats
from wordorder.corpus.pairdata import SPLITS, is_holdout, split_names, split_spec
from wordorder.errors import WordorderError
from wordorder.io import link_loop
from wordorder.schema import REPO, SCHEMA_DIR, plain_copy, validate_schema  # noqa: F401 (re-exported)
from wordorder.seeds import check_seeds_by_variant
from wordorder.settings_check import check_settings
from wordorder.variants import (  # noqa: F401 (re-exported: the workflow and tests import them here)
    apply_presets,
    check_model_options,
    entry_model,
    load_variants,
    reads_trees,
    variant_model,
)
from wordorder.yamlfile import Locator, read_yaml, read_yaml_doc  # noqa: F401 (re-exported)


def check_config(
    config: Mapping[str, Any], variants: Mapping[str, dict], locate: Locator | None = None
) -> None:
    """Cross-checks: every pair is defined, every variant is registered, and the source
    side of every pair can be annotated as its variants need (a parser with trees, or POS
    tags). ``locate`` (from :func:`wordorder.configfiles.check_config_files`) lets errors
    name the config file and line."""
    check_repeats(config, locate)
    check_settings(config)
    processes = int(config.get("train_processes", 1))
    accum = int(config.get("train", {}).get("accum_steps", 1))
    if accum % processes:
        raise WordorderError(
            f"train.accum_steps ({accum}) must be a multiple of train_processes ({processes})",
            hint="an update is accum_steps batches dealt out to the processes: set accum_steps "
            f"to {processes * max(1, accum // processes)} or a multiple of {processes}",
        )
    data = config.get("data", {})
    for i, pair in enumerate(config["pairs"]):
        if pair not in data:
            raise WordorderError(
                f"unknown pair '{pair}': it has no corpus definition under 'data'",
                **_at(locate, ("pairs", i), pair),
                hint=(
                    f"defined pairs: {', '.join(sorted(data)) or '(none)'}; add "
                    f"data.{pair} to the config"
                ),
            )
        src, tgt = pair.split("-")
        if src == tgt:
            raise WordorderError(f"pair '{pair}' has the same source and target language")
        _check_sources(pair, data[pair])
    _check_roots(config, locate)
    check_model_options(config, variants)
    methods = config.get("preorder", {}).get("methods", [])
    if "rvnn" in methods:
        from wordorder.syntax.backends import require_annotations

        parsers = config.get("syntax", {}).get("parsers", {})
        for pair in config["pairs"]:
            require_annotations(
                pair.split("-")[0], ["trees"], parsers, f"preorder method 'rvnn' on {pair}"
            )
    baseline = config.get("evaluation", {}).get("baseline")
    if baseline is not None and baseline not in config["variants"]:
        raise WordorderError(
            f"evaluation.baseline '{baseline}' is not one of the variants of this config",
            **_at(locate, ("evaluation", "baseline"), baseline),
            hint=f"pick one of: {', '.join(config['variants'])}, or null for the first",
        )
    swapped = config.get("evaluation", {}).get("swap_noise", {}).get("testsets") or []
    tested = {t for pair in config["pairs"] for t in data[pair].get("test", {})}
    for i, name in enumerate(swapped):
        if name not in tested:
            raise WordorderError(
                f"evaluation.swap_noise.testsets names '{name}', a test set of none of the pairs",
                **_at(locate, ("evaluation", "swap_noise", "testsets", i), name),
                hint=f"test sets of this run's pairs: {', '.join(sorted(tested)) or '(none)'}",
            )
    for pair in config.get("evaluation", {}).get("case_insensitive", []):
        if pair not in config["data"]:  # data, not pairs: a run of some pairs keeps the setting
            raise WordorderError(
                f"evaluation.case_insensitive names '{pair}', which has no data in this config",
                hint=f"pairs with data: {', '.join(config['data'])}",
            )
    for i, claim in enumerate(config.get("evaluation", {}).get("findings", [])):
        for key in ("system", "baseline"):
            if claim[key] not in variants:
                raise WordorderError(
                    f"evaluation.findings[{i}].{key}: unknown variant '{claim[key]}' (not in the "
                    f"registry {config.get('variants_file')})",
                    **_at(locate, ("evaluation", "findings", i, key), claim[key]),
                    hint="name a registry entry",
                )
        if claim["system"] == claim["baseline"]:
            raise WordorderError(
                f"evaluation.findings[{i}] compares {claim['system']} with itself",
                **_at(locate, ("evaluation", "findings", i, "baseline"), claim["baseline"]),
                hint="name the paper's baseline system as baseline",
            )
        tests = config["data"].get(claim["pair"], {}).get("test", {})
        if claim["testset"] not in tests:
            raise WordorderError(
                f"evaluation.findings[{i}]: '{claim['pair']}' has no test set '{claim['testset']}'",
                hint="pairs and test sets come from data.<pair>.test",
            )
    check_seeds_by_variant(config, locate)
    for i, name in enumerate(config["variants"]):
        if name not in variants:
            raise WordorderError(
                (
                    f"unknown variant '{name}' in variants: it is not in the registry "
                    f"{config.get('variants_file')}"
                ),
                **_at(locate, ("variants", i), name),
                hint=f"registered variants: {', '.join(sorted(variants))}",
            )
        method = variants[name].get("preorder")
        if variants[name].get("source") == "preordered" and not method:
            raise WordorderError(
                f"variant '{name}' reads a preordered source but names no preorder method",
                path=config.get("variants_file"),
                hint="add preorder: gold|btg|rvnn to the entry",
            )
        if method and method not in methods:
            raise WordorderError(
                (
                    f"variant '{name}' reads {method} preorders, but "
                    f"preorder.methods is {methods or '[]'}"
                ),
                hint=f"add {method} to preorder.methods in the config",
            )
        for pair in config["pairs"]:
            needs = list(variants[name].get("needs", []))
            if "trees" not in needs and reads_trees(variant_model(config, variants, name, pair)):
                needs.append("trees")
            if needs:
                from wordorder.syntax.backends import require_annotations

                parsers = config.get("syntax", {}).get("parsers", {})
                require_annotations(
                    pair.split("-")[0], needs, parsers, f"variant '{name}' on {pair}"
                )


def _check_roots(config: Mapping[str, Any], locate: Locator | None) -> None:
    """``results`` and ``logs`` (with the experiment's folder) are folders or can become ones:
    a file on the way stopped Snakemake's first look at the outputs with a traceback."""
    for key in ("results", "logs"):
        if key not in config:
            continue
        folder = Path(config[key]) / str(config.get("experiment", ""))
        if link_loop(folder):
            raise WordorderError(
                f"{key}: {config[key]} goes through a loop of symbolic links",
                **_at(locate, (key,), config[key]),
                hint=f"point {key}: at a real folder (ls -l each folder on the path)",
            )
        for path in (folder, *folder.parents):
            if path.exists() and not path.is_dir():
                raise WordorderError(
                    f"{key}: {config[key]} must be a folder, but {path} is a file",
                    **_at(locate, (key,), config[key]),
                    hint=f"point {key}: at a folder (it is created if missing)",
                )


def _check_sources(pair: str, pair_data: Mapping[str, Any]) -> None:
    """Every corpus source of the pair is well formed, so a typo fails before any job runs."""
    from wordorder.corpus.sources import make_source

    for split in split_names(pair_data):
        spec = split_spec(pair_data, split)
        where = f"data.{pair}.{split}" if split in SPLITS else f"data.{pair}.test.{split}"
        if split in SPLITS and "extra_refs" in pair_data[split]:
            raise WordorderError(
                f"{where}: extra_refs are for test sets",
                hint="the dev set is scored with one reference; move extra_refs to a test set",
            )
        if split not in SPLITS:
            from wordorder.corpus.references import extra_refs

            extra_refs(pair_data["test"][split], where)
        if is_holdout(spec):
            others = sorted(set(spec) - {"holdout"})
            if others:  # a holdout is drawn from train: the source keys would be ignored
                raise WordorderError(
                    f"{where}: holdout draws the set from the training corpus, so "
                    f"{', '.join(others)} would be ignored",
                    hint=f"either keep holdout: {spec['holdout']} alone, or drop holdout to "
                    "read the set from its own source",
                )
            continue
        try:
            source = make_source(spec)
        except WordorderError as e:
            raise WordorderError(f"{where}: {e.message}", hint=e.hint) from None
        for path in source.local_files(*pair.split("-")):
            if link_loop(path):
                raise WordorderError(
                    f"{where}: {path} goes through a loop of symbolic links",
                    hint="point the source at the file itself (ls -l each folder on the path)",
                )


def load_config(path: str | Path, overrides: Mapping[str, Any] | None = None) -> dict:
    """Load, default-fill and check a config file the way the Snakefile does."""
    doc = read_yaml_doc(path)
    config = plain_copy(doc.data) or {}  # the locator compares against the file's own values
    config.update(overrides or {})
    locate = Locator([doc])
    check_repeats(config, locate)
    validate_schema(config, "config.schema.yaml", path=path)
    check_config(
        config,
        apply_presets(load_variants(Path(config["variants_file"])), config.get("presets")),
        locate,
    )
    return config


def clean_options(config: Mapping[str, Any], pair: str) -> dict:
    """Global cleaning options overridden by the pair's own ``clean`` block."""
    return {**config.get("clean", {}), **config["data"][pair].get("clean", {})}
