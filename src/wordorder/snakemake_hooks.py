"""Wordorder's changes to Snakemake, applied when Snakemake imports the module they change.

* :mod:`wordorder.snakemake_config_guard`: every ``--configfile`` YAML is read by wordorder's
  strict reader first (one error line instead of a traceback or a hang);
* :mod:`wordorder.snakemake_wakeups`: the job scheduler keeps one pending wake-up instead of
  piling up a timer per pass of its loop (a busy loop on a long run);
* :mod:`wordorder.snakemake_lazy_pandas`: the SLURM executor plugin's pandas is imported when
  used, not at every Snakemake start (~0.2 s of each command);
* :mod:`wordorder.snakemake_gc`: the ``snakemake`` process scans its whole heap for garbage
  cycles far less often (~1 s of the five papers' dry run);
* :mod:`wordorder.snakemake_signatures`: each function's parameters read once, not at every
  call of an input, params or resource function;
* :mod:`wordorder.snakemake_shellcmd`: a listed job's shell command formatted once, not three
  times;
* :mod:`wordorder.snakemake_output_index`: the rules that make a file found once per file, not
  once per job that reads it;
* :mod:`wordorder.snakemake_parse_cache`: each Snakefile translated once per process, not once
  per module that includes it.

How they are active: ``make install`` writes ``wordorder-snakemake.pth`` into the venv's
site-packages (``python -m wordorder.snakemake_hooks``), whose one line calls :func:`install` when
Python starts. :func:`install` only adds an import hook, which acts when Snakemake imports one of
those modules: other programs pay nothing but this import.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the rest is imported when used: this module loads at every Python start
    import importlib.machinery
    from pathlib import Path
    from types import ModuleType

PTH = "wordorder-snakemake.pth"
#: the .pth file of installs before the scheduler fix (it called the config guard alone)
OLD_PTH = "wordorder-config-guard.pth"


#: Snakemake's module → wordorder's module whose ``wrap(module)`` changes it (imported only then),
#: and whose ``before()``, where it has one, runs before Snakemake's module does
PATCHES = {
    "snakemake.common.configfile": "wordorder.snakemake_config_guard",
    "snakemake.scheduling.job_scheduler": "wordorder.snakemake_wakeups",
    "snakemake_executor_plugin_slurm.efficiency_report": "wordorder.snakemake_lazy_pandas",
    "snakemake.cli": "wordorder.snakemake_gc",
    "snakemake.common": "wordorder.snakemake_signatures",
    "snakemake.jobs": "wordorder.snakemake_shellcmd",
    "snakemake.output_index": "wordorder.snakemake_output_index",
    "snakemake.workflow": "wordorder.snakemake_parse_cache",
}


def _patch(name: str, module: ModuleType) -> None:
    import importlib

    importlib.import_module(PATCHES[name]).wrap(module)


def _before(name: str) -> None:
    import importlib

    first = getattr(importlib.import_module(PATCHES[name]), "before", None)
    if first is not None:
        first()


class _Hook:
    """A finder of ``sys.meta_path`` (a plain class: ``importlib.abc`` would cost every Python
    start ~30 ms) that finds nothing itself: wraps the loader of each module it patches, once."""

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def find_spec(
        self, name: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name not in self.names:
            return None
        self.names.discard(name)
        if not self.names:
            sys.meta_path.remove(self)
        spec = _find_without(self, name)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            _before(name)
            execute(module)
            _patch(name, module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _find_without(hook: _Hook, name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec the other finders give (this hook stepped aside while they look)."""
    import importlib.util

    index = sys.meta_path.index(hook) if hook in sys.meta_path else None
    if index is not None:
        sys.meta_path.remove(hook)
    try:
        return importlib.util.find_spec(name)
    finally:
        if index is not None:
            sys.meta_path.insert(index, hook)


def install() -> None:
    """Patch each module when it is imported (or now, if it already is)."""
    if any(isinstance(f, _Hook) for f in sys.meta_path):
        return
    waiting = set()
    for name in PATCHES:
        module = sys.modules.get(name)
        if module is not None:
            _patch(name, module)
        else:
            waiting.add(name)
    if waiting:
        sys.meta_path.insert(0, _Hook(waiting))


def write_pth() -> Path:
    """Write the ``.pth`` file that installs the hooks into this interpreter's site-packages (and
    remove an older install's)."""
    import sysconfig
    from pathlib import Path

    folder = Path(sysconfig.get_paths()["purelib"])
    (folder / OLD_PTH).unlink(missing_ok=True)
    path = folder / PTH
    path.write_text("import wordorder.snakemake_hooks as h; h.install()\n", encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"{write_pth()}: Snakemake's modules changed when imported (see {__file__}):")
    for snakemake_module, change in PATCHES.items():
        print(f"  {snakemake_module}: {change}")
