"""Snakemake reads each function's parameters once, not at every call.

Before it calls an input function, a params function or a resource function, Snakemake asks
which of its optional arguments (``input``, ``threads``, ``attempt``, ...) the function takes:
``snakemake.common.get_function_params``, i.e. ``inspect.signature``, twice per call. The five
papers' dry run (3,050 jobs) made 44,010 such calls, ~6 % of its time under cProfile
(2026-11-29; docs/measured.md). A function's parameters do not change, so here those of each
plain function, and of each function under a method, are read once and kept (weakly: a function
that goes is forgotten). A function that names its parameters itself (Snakemake's
``overwrite_function_params``) keeps them; other callables keep Snakemake's way.

Applied by :mod:`wordorder.snakemake_hooks` when Snakemake imports ``snakemake.common``, before
its other modules import the function by name.
"""

from __future__ import annotations

import inspect
import types
import weakref
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

#: Snakemake's attribute for parameters a function names itself (snakemake.common)
OVERWRITE = "_overwrite_params"
_FUNCTIONS: weakref.WeakKeyDictionary[Callable[..., Any], Mapping[str, inspect.Parameter]] = (
    weakref.WeakKeyDictionary()
)
#: a method's parameters (its first, ``self``, bound) by the function under it
_METHODS: weakref.WeakKeyDictionary[Callable[..., Any], Mapping[str, inspect.Parameter]] = (
    weakref.WeakKeyDictionary()
)


def function_params(func: Callable[..., Any]) -> Any:
    """The parameters of ``func`` as ``inspect.signature(func).parameters`` gives them."""
    if hasattr(func, OVERWRITE):
        return getattr(func, OVERWRITE)
    if type(func) is types.FunctionType:
        table, key = _FUNCTIONS, func
    elif type(func) is types.MethodType and type(func.__func__) is types.FunctionType:
        table, key = _METHODS, func.__func__
    else:
        return inspect.signature(func).parameters
    params = table.get(key)
    if params is None:
        params = table[key] = inspect.signature(func).parameters
    return params


def wrap(module: ModuleType) -> None:
    """Replace ``get_function_params`` of ``snakemake.common``; Snakemake's stays as
    ``upstream_get_function_params``."""
    names = vars(module)
    if names["get_function_params"] is not function_params:
        names["upstream_get_function_params"] = names["get_function_params"]
        names["get_function_params"] = function_params
