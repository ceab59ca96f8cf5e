"""Shared test configuration: fixture paths."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    """The folder of shipped test fixtures (real notebooks and hand-made output lists)."""
    return FIXTURES
