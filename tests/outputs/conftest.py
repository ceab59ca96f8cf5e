"""Fixtures of the saved-output protocol tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

MIXED_OUTPUTS = Path(__file__).parent.parent / "fixtures" / "outputs" / "mixed_outputs.json"


def load_mixed_outputs() -> list[Any]:
    """The protocol fixture, parsed with the stdlib (orjson refuses its lone surrogate)."""
    with MIXED_OUTPUTS.open(encoding="utf-8") as handle:
        outputs: list[Any] = json.load(handle)
    return outputs


@pytest.fixture
def mixed_outputs() -> list[Any]:
    """A fresh copy of ``tests/fixtures/outputs/mixed_outputs.json``."""
    return load_mixed_outputs()
