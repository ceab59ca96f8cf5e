"""Shared fixtures of the workbench tests: an isolated snapshot cache and a work folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Snapshots go under tmp_path, never into the real user cache."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """An empty folder for the notebooks of one test."""
    folder = tmp_path / "work"
    folder.mkdir()
    return folder
