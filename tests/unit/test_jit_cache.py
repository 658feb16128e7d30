"""The numba warm-up (wordorder.preorder.jit_cache, run by `make test` beside the linters): after
it every cached kernel of the package has its cache on disk, so no process of a fresh checkout
compiles one on its own. (On a fresh checkout the warm-up runs before the tests, so a kernel it
misses has no cache here unless a test that ran earlier in this worker compiled it.)"""

from __future__ import annotations

import importlib
from pathlib import Path

from wordorder.preorder.jit_cache import warm

SRC = Path(__file__).resolve().parents[2] / "src"


def cached_kernels() -> dict[str, object]:
    """Every ``numba.njit(cache=True)`` function of the package, by the module defining it, but
    those inlined into their callers (they have no compiled code of their own)."""
    kernels = {}
    for path in sorted((SRC / "wordorder").rglob("*.py")):
        if "cache=True" not in path.read_text(encoding="utf-8"):
            continue
        name = ".".join(path.relative_to(SRC).with_suffix("").parts)
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            cache = getattr(value, "_cache", None)
            options = getattr(value, "targetoptions", {})
            if cache is not None and type(cache).__name__ != "NullCache":
                if options.get("inline") != "always" and value.py_func.__module__ == name:
                    kernels[f"{name}.{attr}"] = value
    return kernels


def test_the_warm_up_compiles_every_cached_kernel(tmp_path):
    kernels = cached_kernels()
    assert len(kernels) >= 15  # pharaoh, symmetrize, word classes, BTG, constraints, RvNN
    warm(tmp_path)
    # compiled here, or loaded from the cache (a kernel called only by other kernels is then
    # never asked for: its callers' cached code holds it)
    missed = sorted(
        name
        for name, kernel in kernels.items()
        if not kernel.signatures and not Path(kernel._cache._cache_file._index_path).is_file()
    )
    assert missed == [], "kernels without a cache after the warm-up: " + ", ".join(missed)
    assert (tmp_path / "btg.perm").stat().st_size and (tmp_path / "rvnn.perm").stat().st_size
