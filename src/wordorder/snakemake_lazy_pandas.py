"""pandas imported when used by the SLURM executor plugin's efficiency report.

Snakemake imports every installed executor plugin at each start (for their command-line
options), and the SLURM plugin's ``efficiency_report`` module imports pandas at its top: ~0.2 s
of every ``snakemake`` command on these machines (``python -X importtime``; ``snakemake
--version`` takes ~1 s), for a report that only a SLURM run asking for it makes, at its end.

So while that module runs, ``pandas`` in ``sys.modules`` is a stand-in, which the module binds
as its ``pd``; afterwards the stand-in leaves ``sys.modules`` (any other ``import pandas`` gets
pandas itself) and, at the first attribute asked of it (``pd.DataFrame`` in the report), imports
pandas and answers from it. (The standard library's ``importlib.util.LazyLoader`` does not serve
here: on Python 3.11 the next ``import pandas`` statement reads the lazy module's ``__spec__``,
which loads it.)
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from types import ModuleType
from typing import Any


class _Deferred(ModuleType):
    """Stands for pandas: imports it at the first attribute asked for, then answers from it."""

    def __getattr__(self, name: str) -> Any:  # only for names the stand-in lacks
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


def before() -> None:
    """Put the stand-in in place, unless pandas is imported already (or not installed)."""
    if "pandas" not in sys.modules and importlib.util.find_spec("pandas") is not None:
        sys.modules["pandas"] = _Deferred("pandas")


def wrap(module: ModuleType) -> None:
    """The report module has bound the stand-in: take it out of ``sys.modules``."""
    if isinstance(sys.modules.get("pandas"), _Deferred):
        del sys.modules["pandas"]
