"""Shared fixtures: the repository root and the real data in ../shared/data."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real corpora beside the checkout (../shared/data); tests that need them skip without."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"real data not found at {SHARED_DATA} (the shared/ folder beside the checkout)"
        )
    return SHARED_DATA
