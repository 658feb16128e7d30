"""One line, not a traceback or a hang, for a bad ``snakemake --configfile`` file.

Snakemake reads ``--configfile`` files before it parses the Snakefile, so the workflow's own
strict reader (:func:`wordorder.yamlfile.read_yaml_doc`) came too late: a Latin-1 byte ended in
Snakemake's 49-line loader traceback, and a YAML alias bomb of nested mappings hung its merge of
the configs past a minute. This module wraps Snakemake's ``load_configfile`` so that every YAML
config it loads is read by the strict reader first; a file it refuses is one ``error:`` line and
exit status 2, as ``wordorder check-config`` gives.

How it is active: ``make install`` writes ``wordorder-config-guard.pth`` into the venv's
site-packages (``python -m wordorder.snakemake_config_guard``), whose one line calls
:func:`install` when Python starts. :func:`install` only adds an import hook, which acts when
Snakemake imports ``snakemake.common.configfile``: other programs pay nothing but this import.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

MODULE = "snakemake.common.configfile"
PTH = "wordorder-config-guard.pth"


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


class _Hook(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of Snakemake's config module, once."""

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            _wrap(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _wrap(module: ModuleType) -> None:
    names = vars(module)
    if not hasattr(names["load_configfile"], "__wrapped__"):
        names["load_configfile"] = guarded(names["load_configfile"])


def install() -> None:
    """Wrap Snakemake's config loader when it is imported (or now, if it already is)."""
    module = sys.modules.get(MODULE)
    if module is not None:
        _wrap(module)
    elif not any(isinstance(f, _Hook) for f in sys.meta_path):
        sys.meta_path.insert(0, _Hook())


def write_pth() -> Path:
    """Write the ``.pth`` file that installs the guard into this interpreter's site-packages."""
    import sysconfig

    path = Path(sysconfig.get_paths()["purelib"]) / PTH
    line = "import wordorder.snakemake_config_guard as g; g.install()\n"
    path.write_text(line, encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"{write_pth()}: Snakemake's --configfile files are read by wordorder's strict reader")
