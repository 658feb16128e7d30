"""The config files of a run: read strictly, no repeated list entries, and where a value came from.

Snakemake reads ``--configfile`` files with its own YAML loader (the last of two equal keys
wins, silently), so the Snakefile reads them again here (:func:`check_config_files`) before
the schema; ``wordorder check-config`` does the same through :func:`wordorder.config.load_config`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wordorder.errors import WordorderError
from wordorder.yamlfile import Locator, read_yaml_doc

# Lists whose entries name things (outputs, table rows): a repeat is a typo that would otherwise
# fail late (seeds: [1, 1] at the report, after all training) or not at all.
UNIQUE_LISTS = (
    ("pairs",),
    ("variants",),
    ("seeds",),
    ("preorder", "methods"),
    ("evaluation", "swap_noise", "percents"),
    ("evaluation", "swap_noise", "testsets"),
)


def check_config_files(paths, config: Mapping[str, Any]) -> Locator:
    """The run's config files read strictly (a repeated key is an error naming its file and line),
    and no repeated entry in the lists of :data:`UNIQUE_LISTS` of the merged ``config``.

    Returns:
        a :class:`Locator` for naming the file and line of a config value in later errors.
    """
    locate = Locator(read_yaml_doc(p) for p in paths)
    check_repeats(config, locate)
    return locate


def check_repeats(config: Mapping[str, Any], locate: Locator | None = None) -> None:
    for where in UNIQUE_LISTS:
        items: Any = config
        for key in where:
            items = items.get(key) if isinstance(items, Mapping) else None
        if not isinstance(items, list):
            continue
        for i, item in enumerate(items):
            if item in items[:i]:
                name = ".".join(where)
                path, line = (locate or Locator())((*where, i), item)
                raise WordorderError(
                    (
                        f"{name}: {item!r} is listed twice (entries "
                        f"{items.index(item) + 1} and {i + 1})"
                    ),
                    path=path,
                    line=line,
                    hint=f"list each entry of {name} once",
                )


def at(locate: Locator | None, where: tuple, value: Any) -> dict:
    """``path``/``line`` keyword arguments of an error about the config value at ``where``."""
    path, line = (locate or Locator())(where, value)
    return {"path": path, "line": line}
