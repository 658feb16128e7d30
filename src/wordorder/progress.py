"""One style of progress bar for every long step (on stderr, so it lands in the rule's log)."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from tqdm import tqdm


def progress(
    it: Iterable | None = None,
    desc: str = "",
    unit: str = " lines",
    total: int | None = None,
    enabled: bool = True,
) -> tqdm:
    """A tqdm bar over ``it`` (or a manual one when ``it`` is None) that updates
    at most once a second."""
    return tqdm(
        it,
        desc=desc,
        unit=unit,
        total=total,
        file=sys.stderr,
        disable=not enabled,
        mininterval=1.0,
        dynamic_ncols=True,
    )
