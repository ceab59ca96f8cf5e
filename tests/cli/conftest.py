"""Shared fixture of the command-line tests: every test's own snapshot cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Snapshots (undo) go under ``tmp_path``, never into the user's cache; commands started
    as processes inherit it. A module needing more defines its own ``cache``."""
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder
