"""Shared fixtures of the workbench tests: an isolated snapshot cache, a work folder, the
asyncio backend of the async tests, and a workbench on the fake kernel (``wb``; a module that
needs another workbench defines its own ``wb``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from wb_helpers import fake_workbench

from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV
from jupyter_jcli.workbench import Workbench


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """The async tests run on asyncio (the backend the servers and the CLI use)."""
    return "asyncio"


@pytest.fixture
async def wb(tmp_path: Path) -> AsyncIterator[Workbench]:
    """A workbench on the fake kernel, its snapshots under ``tmp_path``."""
    async with fake_workbench(tmp_path / "snapshots") as workbench:
        yield workbench


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
