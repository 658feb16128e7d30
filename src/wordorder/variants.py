"""The variant registry as a config uses it: reading it (``configs/variants.yaml``), the size
presets a config puts over it, a variant's model options on a language pair (registry entry,
``pair_model``, the config's ``model``, ``data.<pair>.model``), and the checks of those options
that :func:`wordorder.config.check_config` runs before any job (which re-exports the functions
the workflow and the tests import from there). Free of heavy imports (no torch), as the DAG's
start needs.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wordorder.errors import WordorderError
from wordorder.schema import validate_schema
from wordorder.yamlfile import read_yaml


def load_variants(path: str | Path) -> dict[str, dict]:
    """Read and validate the variant registry; returns ``{name: entry}`` (a copy of its own:
    the file is read once a process while it stays unchanged, as every module of a workflow
    loads it)."""
    file = Path(path)
    if not file.is_file():
        return _read_variants(path)  # its error names the file
    stat = file.stat()
    key = (str(file.resolve()), stat.st_mtime_ns, stat.st_size)
    if key not in _LOADED:
        _LOADED[key] = _read_variants(path)
    return copy.deepcopy(_LOADED[key])


_LOADED: dict[tuple, dict[str, dict]] = {}


def _read_variants(path: str | Path) -> dict[str, dict]:
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


def check_model_options(config: Mapping[str, Any], variants: Mapping[str, dict]) -> None:
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


def _check_variant_options(config: Mapping[str, Any], variants: Mapping[str, dict]) -> None:
    """Every variant's model options on every pair, as its training will build them (the
    registry entry with its size preset, the config's ``model``, ``data.<pair>.model``), so that
    ``heads: 128`` on a 64-wide preset fails now, not when the job starts."""
    from wordorder.models.presets import resolve_options

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


def reads_trees(model: Mapping[str, Any]) -> bool:
    """Whether a registry entry's model reads the source dependency tree."""
    from wordorder.models.options import RNNOptions

    # Before validation, whatever the entry's family: only RNN options read the tree, and
    # another family's entry that sets them fails validation later.
    known = {f.name for f in dataclasses.fields(RNNOptions)}
    return RNNOptions(**{k: v for k, v in model.items() if k in known}).syntax_tree()
