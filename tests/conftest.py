"""Shared fixtures: the repository root and the real data in ../shared/data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist (`make test` runs two workers on the 2-core machines), one intra-op
    thread a worker: torch's default of one per core would put four threads on two cores."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(1)


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
