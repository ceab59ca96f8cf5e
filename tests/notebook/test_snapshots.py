"""Snapshots: taken before every mutation, kept on disk under the cache, bounded to 50."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.snapshots import (
    CACHE_DIR_ENV,
    MAX_SNAPSHOTS,
    SnapshotStore,
    cache_dir,
    undo,
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


def _modes(root: Path) -> tuple[set[int], set[int]]:
    """The permission bits of every folder and every file under ``root``."""
    folders = {stat.S_IMODE(p.stat().st_mode) for p in [root, *root.rglob("*")] if p.is_dir()}
    files = {stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*") if p.is_file()}
    return folders, files


def test_snapshots_of_a_private_notebook_are_readable_by_its_owner_only(
    tmp_path: Path, cache: Path
) -> None:
    path = _copy(tmp_path)
    path.chmod(0o600)
    previous = os.umask(0o022)
    try:
        document = Document.load(path)
        document.add_cell("secret = 1", name="secret")
        document.update_cell("secret", expected_rev=document.cell("secret").rev, source="s = 2")
    finally:
        os.umask(previous)
    folders, files = _modes(cache / "snapshots")
    assert folders == {0o700}
    assert files == {0o600}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_an_existing_open_stack_folder_is_made_private(tmp_path: Path, cache: Path) -> None:
    path = _copy(tmp_path)
    store = SnapshotStore(path)
    store.folder.mkdir(parents=True, mode=0o755)
    store.folder.chmod(0o755)
    store.folder.parent.chmod(0o755)
    Document.load(path).add_cell("x = 1")
    assert _modes(cache / "snapshots")[0] == {0o700}


_KILL_AT = (
    "import os, signal, sys\n"
    "from jupyter_jcli.notebook import _commit, document, snapshots\n"
    "def kill(*args, **kwargs):\n"
    "    os.kill(os.getpid(), signal.SIGKILL)\n"
    "if sys.argv[2] == 'write':\n"
    "    _commit.write_all = kill\n"
    "else:\n"
    "    snapshots.SnapshotStore.commit = kill\n"
    "doc = document.Document.load(sys.argv[1])\n"
    "doc.update_cell('sorted', expected_rev=doc.cell('sorted').rev, source='killed = 1')\n"
)


def _killed_update(path: Path, at: str) -> None:
    """An update of cell ``sorted`` in a process SIGKILLed at a hook point of its write."""
    command = [sys.executable, "-c", _KILL_AT, str(path), at]
    done = subprocess.run(command, check=False, timeout=120)
    assert done.returncode == -signal.SIGKILL


def test_a_mutation_killed_before_its_write_leaves_undo_working_and_no_pending_folder(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    original = path.read_bytes()
    document = Document.load(path)
    document.add_cell("x = 1", name="first")
    written = path.read_bytes()
    _killed_update(path, "write")
    assert path.read_bytes() == written  # the killed update never happened

    result = undo(path)  # undoes the add, the last mutation that happened
    assert result.operation == "add_cell"
    assert path.read_bytes() == original
    assert [p.name for p in SnapshotStore(path).folder.iterdir() if p.is_dir()] == []


def test_a_mutation_killed_after_its_write_is_still_undoable(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    original = path.read_bytes()
    _killed_update(path, "commit")
    assert b"killed = 1" in path.read_bytes()
    assert SnapshotStore(path).snapshots() == []  # not current until someone holds the lock

    result = undo(path)
    assert result.operation == "update_cell"
    assert path.read_bytes() == original


def test_the_next_write_removes_incomplete_snapshot_folders(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    document.add_cell("x = 1", name="first")
    store = SnapshotStore(path)
    (store.folder / "000007").mkdir()  # an older version killed before its manifest
    (store.folder / "000007" / "0.bin").write_bytes(b"partial")
    (store.folder / ".pending-dead").mkdir()  # a pending snapshot without a manifest
    document.update_cell("first", expected_rev=document.cell("first").rev, source="x = 2")

    folders = sorted(p.name for p in store.folder.iterdir() if p.is_dir())
    assert folders == ["000001", "000002"]
    assert [snapshot.operation for snapshot in store.snapshots()] == ["add_cell", "update_cell"]
