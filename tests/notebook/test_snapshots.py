"""Snapshots: taken before every mutation, kept on disk under the cache, bounded to 50."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.snapshots import (
    CACHE_DIR_ENV,
    MAX_SNAPSHOTS,
    SnapshotStore,
    cache_dir,
)

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


def _copy(tmp_path: Path, name: str = SORTING) -> Path:
    target = tmp_path / "work" / name
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(NOTEBOOKS / name, target)
    return target


def test_the_cache_dir_comes_from_the_environment(cache: Path) -> None:
    assert cache_dir() == cache


def test_the_default_cache_dir_is_the_platform_user_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import platformdirs

    monkeypatch.delenv(CACHE_DIR_ENV)
    assert cache_dir() == Path(platformdirs.user_cache_dir("jupyter_mcp"))


def test_a_mutation_snapshots_the_previous_bytes_keyed_by_absolute_path(
    tmp_path: Path, cache: Path
) -> None:
    path = _copy(tmp_path)
    original = path.read_bytes()
    document = Document.load(path)
    document.add_cell("x = 1")
    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()
    folder = cache / "snapshots" / key
    assert folder.is_dir()
    [snapshot] = SnapshotStore(path).snapshots()
    assert snapshot.folder.parent == folder
    assert snapshot.operation == "add_cell"
    [entry] = snapshot.files
    assert entry.path == path.resolve()
    assert entry.blob.read_bytes() == original
    assert entry.before_sha256 == hashlib.sha256(original).hexdigest()
    assert entry.after_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    manifest = json.loads((snapshot.folder / "manifest.json").read_text())
    assert manifest["operation"] == "add_cell"


def test_a_mutation_that_changes_no_bytes_takes_no_snapshot(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    document.add_cell("x = 1", name="first")
    cell = document.cell("first")
    document.update_cell("first", expected_rev=cell.rev, source="x = 1")
    assert len(SnapshotStore(path).snapshots()) == 1


def test_only_the_last_fifty_snapshots_are_kept(tmp_path: Path) -> None:
    path = _copy(tmp_path, "jupyter.ipynb")
    document = Document.load(path)
    document.add_cell("counter = 0", name="counter")
    for value in range(1, MAX_SNAPSHOTS + 5):
        cell = document.cell("counter")
        document.update_cell("counter", expected_rev=cell.rev, source=f"counter = {value}")
    snapshots = SnapshotStore(path).snapshots()
    assert len(snapshots) == MAX_SNAPSHOTS
    seqs = [snapshot.seq for snapshot in snapshots]
    assert seqs == list(range(seqs[0], seqs[0] + MAX_SNAPSHOTS))
    assert seqs[-1] == MAX_SNAPSHOTS + 5
    newest = snapshots[-1].files[0].blob.read_bytes()
    assert b"counter = 53" in newest


def test_reading_an_empty_stack_creates_nothing(tmp_path: Path, cache: Path) -> None:
    store = SnapshotStore(_copy(tmp_path))
    assert store.snapshots() == []
    assert not cache.exists()


def test_a_symlinked_path_shares_the_stack_of_its_target(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    link = tmp_path / "link.ipynb"
    os.symlink(path, link)
    Document.load(link).add_cell("x = 1")
    assert link.is_symlink()
    assert len(SnapshotStore(path).snapshots()) == 1
