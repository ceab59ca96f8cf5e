"""Fixtures of the MCP tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_client import in_process_env


@pytest.fixture
def in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The server environment for an in-process ``jupyter-mcp`` (see
    :func:`memory_client.in_process_env`); returns its snapshot cache folder."""
    cache = tmp_path / "cache"
    in_process_env(monkeypatch, cache)
    return cache
