"""Deterministic random holdouts (dev/test sets drawn from a corpus).

The draw must come out the same on every machine and every Python/numpy version, or a
rerun elsewhere would silently test on training sentences. So it does not use a library
random generator (whose streams may change between versions) but orders the line numbers
by a fixed 64-bit hash of (seed, line number), SplitMix64 computed with numpy integer
arithmetic; that is fast for millions of lines and defined down to the bit.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from wordorder.errors import WordorderError

_MASK = (1 << 64) - 1


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser (wrapping uint64 arithmetic), a well-mixed bijection."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def shuffled(n: int, seed: int) -> np.ndarray:
    """A permutation of ``range(n)`` fixed by ``seed``."""
    key = _splitmix64(np.array([seed & _MASK], dtype=np.uint64))[0]
    with np.errstate(over="ignore"):
        hashes = _splitmix64(np.arange(n, dtype=np.uint64) ^ key)
    return np.argsort(hashes, kind="stable")


def holdout_split(n: int, sizes: Mapping[str, int], seed: int) -> dict[str, list[int]]:
    """Draw disjoint holdouts of the given sizes from ``range(n)``; the rest is ``"train"``.

    Holdouts are taken in the order of their sorted names from one seeded permutation, so the
    result does not depend on the order of ``sizes``. Every list is sorted ascending.

    >>> holdout_split(10, {"dev": 2, "test": 3}, seed=1)
    {'dev': [6, 8], 'test': [0, 7, 9], 'train': [1, 2, 3, 4, 5]}

    Raises:
        WordorderError: a bad size, a holdout called "train", or more lines asked than exist.
    """
    for name, size in sizes.items():
        if name == "train":
            raise WordorderError("a holdout cannot be called 'train' (that is the rest)")
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
            raise WordorderError(
                f"holdout size of '{name}' must be a non-negative integer, not {size!r}"
            )
    total = sum(int(s) for s in sizes.values())
    if total > n:
        asked = " + ".join(f"{name} {size}" for name, size in sizes.items())
        raise WordorderError(
            f"the holdouts need {total} lines ({asked}) but only {n} lines are available",
            hint=(
                "make the holdouts smaller, or relax the cleaning limits "
                "so that more lines are kept"
            ),
        )
    order = shuffled(n, seed)
    parts: dict[str, list[int]] = {}
    start = 0
    for name in sorted(sizes):
        size = int(sizes[name])
        parts[name] = np.sort(order[start : start + size]).tolist()
        start += size
    parts["train"] = np.sort(order[start:]).tolist()
    return parts
