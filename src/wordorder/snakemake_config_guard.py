"""One line, not a traceback or a hang, for a bad ``snakemake --configfile`` file.

Snakemake reads ``--configfile`` files before it parses the Snakefile, so the workflow's own
strict reader (:func:`wordorder.yamlfile.read_yaml_doc`) came too late: a Latin-1 byte ended in
Snakemake's 49-line loader traceback, and a YAML alias bomb of nested mappings hung its merge of
the configs past a minute. This module wraps Snakemake's ``load_configfile`` so that every YAML
config it loads is read by the strict reader first; a file it refuses is one ``error:`` line and
exit status 2, as ``wordorder check-config`` gives.

Active through :mod:`wordorder.snakemake_hooks` (the ``.pth`` file ``make install`` writes).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

MODULE = "snakemake.common.configfile"


def guarded(load: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``load`` (Snakemake's ``load_configfile``) after the strict reader has read the file."""

    @functools.wraps(load)
    def load_checked(configpath: Any) -> Any:
        if isinstance(configpath, (str, Path)) and Path(configpath).suffix in (".yaml", ".yml"):
            from wordorder.errors import WordorderError
            from wordorder.yamlfile import read_yaml_doc

            try:
                read_yaml_doc(configpath)
            except WordorderError as e:
                print(f"error: {e}", file=sys.stderr)
                raise SystemExit(2) from None
        return load(configpath)

    return load_checked


def wrap(module: ModuleType) -> None:
    """Wrap the ``load_configfile`` of Snakemake's config module (once)."""
    names = vars(module)
    if not hasattr(names["load_configfile"], "__wrapped__"):
        names["load_configfile"] = guarded(names["load_configfile"])
