"""Experiment configuration: the checks a schema cannot express.

The Snakefile validates ``config`` against ``workflow/schemas/config.schema.yaml``
(:func:`wordorder.schema.validate_schema`) and then calls :func:`check_config`; tests and tools
can do both with :func:`load_config`. Everything here is free of heavy imports (no torch),
so listing the DAG stays fast.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.configfiles import at as _at
from wordorder.configfiles import check_repeats
from wordorder.corpus.pairdata import SPLITS, is_holdout, split_names, split_spec
from wordorder.errors import WordorderError
from wordorder.schema import REPO, SCHEMA_DIR, plain_copy, validate_schema  # noqa: F401 (re-exported)
from wordorder.seeds import check_seeds_by_variant
from wordorder.yamlfile import Locator, read_yaml, read_yaml_doc  # noqa: F401 (re-exported)


def load_variants(path: str | Path) -> dict[str, dict]:
    """Read and validate the variant registry; returns ``{name: entry}``."""
    registry = read_yaml(path)
    validate_schema(registry, "variants.schema.yaml", path=path)
    for name, entry in registry["variants"].items():
        if entry.get("keep_preset") and "preset" not in entry["model"]:
            raise WordorderError(
                f"variant '{name}' has keep_preset: true but names no model.preset to keep",
                path=path,
                hint="add the size the paper names (e.g. preset: big), or drop keep_preset",
            )
    return registry["variants"]


def apply_presets(
    variants: Mapping[str, dict], presets: Mapping[str, str] | None
) -> dict[str, dict]:
    """The registry with each family's ``preset`` replaced by ``presets[family]`` (config key
    ``presets``), so one registry serves the CPU demos and the papers' full-scale runs. Entries
    with ``keep_preset: true`` keep their own: a size the paper names for that system (e.g.
    Chen 2019's Transformer (big) rows in a config whose other rows are base)."""
    out = {}
    for name, entry in variants.items():
        family = entry["model"].get("family", "transformer")
        if presets and family in presets and not entry.get("keep_preset"):
            entry = {**entry, "model": {**entry["model"], "preset": presets[family]}}
        out[name] = entry
    return out


def entry_model(entry: Mapping[str, Any], pair: str) -> dict[str, Any]:
    """A registry entry's model options on one language pair: its ``model``, with the keys of
    ``pair_model[pair]`` replacing those of ``model`` (a paper that sizes a system per pair, e.g.
    Zhang et al. 2018's relation layers for En-De; other pairs keep ``model``)."""
    return {**entry["model"], **entry.get("pair_model", {}).get(pair, {})}


def variant_model(
    config: Mapping[str, Any], variants: Mapping[str, dict], variant: str, pair: str
) -> dict:
    """The model options of ``variant`` on ``pair``: the registry entry's (presets applied
    already, see :func:`apply_presets`, and its ``pair_model`` for the pair), then the config's
    ``model``, then ``data.<pair>.model`` (later keys win)."""
    pair_model = config.get("data", {}).get(pair, {}).get("model") or {}
    return {**entry_model(variants[variant], pair), **(config.get("model") or {}), **pair_model}


def check_config(
    config: Mapping[str, Any], variants: Mapping[str, dict], locate: Locator | None = None
) -> None:
    """Cross-checks: every pair is defined, every variant is registered, and the source
    side of every pair can be annotated as its variants need (a parser with trees, or POS
    tags). ``locate`` (from :func:`wordorder.configfiles.check_config_files`) lets errors
    name the config file and line."""
    check_repeats(config, locate)
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
    _check_model_overrides(config, variants)
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
            if "trees" not in needs and _reads_trees(variant_model(config, variants, name, pair)):
                needs.append("trees")
            if needs:
                from wordorder.syntax.backends import require_annotations

                parsers = config.get("syntax", {}).get("parsers", {})
                require_annotations(
                    pair.split("-")[0], needs, parsers, f"variant '{name}' on {pair}"
                )


def _check_model_overrides(config: Mapping[str, Any], variants: Mapping[str, dict]) -> None:
    """The config's model options name real options, and separate vocabularies come with
    untied source and target embeddings (checked here, before any job runs)."""
    from wordorder.models.options import option_defaults

    known = set(option_defaults()) - {"family"}
    places = [("model", config.get("model") or {})]
    places += [
        (f"data.{p}.model", config.get("data", {}).get(p, {}).get("model") or {})
        for p in config["pairs"]
    ]
    for where, options in places:
        for key in options:
            if key not in known:
                raise WordorderError(
                    f"{where}: unknown model option '{key}'",
                    hint=f"valid model options: {', '.join(sorted(known))}",
                )
    _check_variant_options(config, variants)
    if config.get("subword", {}).get("joint", True):
        return
    for pair in config["pairs"]:
        for name in config["variants"]:
            if name in variants and variant_model(config, variants, name, pair).get(
                "tie_embeddings", True
            ):
                raise WordorderError(
                    f"subword.joint is false (a vocabulary per side), but variant '{name}' ties "
                    f"its source and target embeddings on {pair}",
                    hint="add tie_embeddings: false to the config's model (or data."
                    f"{pair}.model), or set subword.joint: true",
                )


def _check_roots(config: Mapping[str, Any], locate: Locator | None) -> None:
    """``results`` and ``logs`` (with the experiment's folder) are folders or can become ones:
    a file on the way stopped Snakemake's first look at the outputs with a traceback."""
    for key in ("results", "logs"):
        if key not in config:
            continue
        folder = Path(config[key]) / str(config.get("experiment", ""))
        for path in (folder, *folder.parents):
            if path.exists() and not path.is_dir():
                raise WordorderError(
                    f"{key}: {config[key]} must be a folder, but {path} is a file",
                    **_at(locate, (key,), config[key]),
                    hint=f"point {key}: at a folder (it is created if missing)",
                )


def _check_variant_options(config: Mapping[str, Any], variants: Mapping[str, dict]) -> None:
    """Every variant's model options on every pair, as its training will build them (the
    registry entry with its size preset, the config's ``model``, ``data.<pair>.model``), so that
    ``heads: 128`` on a 64-wide preset fails now, not when the job starts."""
    from wordorder.models.registry import resolve_options

    for pair in config["pairs"]:
        for name in config["variants"]:
            if name not in variants:
                continue  # reported with the registry's names later
            options = variant_model(config, variants, name, pair)
            try:
                resolve_options(options)
            except WordorderError as e:
                own = {**(config.get("model") or {}), **_pair_model(config, pair)}
                raise WordorderError(
                    f"variant '{name}' on {pair}: {e.message}",
                    hint=f"its model options: preset {options.get('preset', '(none)')} of the "
                    f"registry entry, then the config's model and data.{pair}.model ({own}); "
                    + (e.hint or "change the option or the preset"),
                ) from None


def _pair_model(config: Mapping[str, Any], pair: str) -> dict:
    return config.get("data", {}).get(pair, {}).get("model") or {}


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
            continue
        try:
            make_source(spec)
        except WordorderError as e:
            raise WordorderError(f"{where}: {e.message}", hint=e.hint) from None


def _reads_trees(model: Mapping[str, Any]) -> bool:
    """Whether a registry entry's model reads the source dependency tree."""
    from wordorder.models.options import RNNOptions

    # Before validation, whatever the entry's family: only RNN options read the tree, and
    # another family's entry that sets them fails validation later.
    known = {f.name for f in dataclasses.fields(RNNOptions)}
    return RNNOptions(**{k: v for k, v in model.items() if k in known}).syntax_tree()


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
