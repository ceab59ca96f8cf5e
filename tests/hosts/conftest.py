"""Fixtures for host setup tests: a temporary project and a temporary home, never the real one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
NOTEBOOK = "text_outputs_and_images.ipynb"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME with every host's config location pointed inside it."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / ".config"))
    monkeypatch.setenv("CODEX_HOME", str(folder / ".codex"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(folder / ".gitconfig"))
    monkeypatch.setenv("XDG_STATE_HOME", str(folder / ".local" / "state"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("DSH_HOME", raising=False)
    return folder


@pytest.fixture
def project(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary project folder holding one real notebook; the current folder during a test."""
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copyfile(NOTEBOOKS / NOTEBOOK, folder / NOTEBOOK)
    monkeypatch.chdir(folder)
    return folder.resolve()
