"""The undo stack at its edges, in-process: a paired script's stack is its notebook's, and
a snapshot whose saved bytes or cell record were lost is read as such, never guessed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV, SnapshotStore, notebook_key_path

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


def _edited(tmp_path: Path) -> Path:
    path = tmp_path / "work" / "jupyter.ipynb"
    path.parent.mkdir()
    shutil.copyfile(NOTEBOOKS / "jupyter.ipynb", path)
    Document.load(path).add_cell("x = 1")
    return path


def test_a_paired_script_keys_the_undo_stack_of_its_notebook(tmp_path: Path) -> None:
    notebook = tmp_path / "nb.ipynb"
    document = {"cells": [], "metadata": {"jupytext": {"formats": "ipynb,py:percent"}},
                "nbformat": 4, "nbformat_minor": 5}  # fmt: skip
    notebook.write_text(json.dumps(document), encoding="utf-8")
    (tmp_path / "nb.py").write_text("# %%\nx = 1\n", encoding="utf-8")
    assert notebook_key_path(tmp_path / "nb.py") == notebook.resolve()
    assert notebook_key_path(tmp_path / "nb.ipynb") == notebook.resolve()


def test_a_script_without_a_pair_has_no_undo_stack(tmp_path: Path) -> None:
    (tmp_path / "alone.py").write_text("# %%\nx = 1\n", encoding="utf-8")
    with pytest.raises(NotebookError) as caught:
        notebook_key_path(tmp_path / "alone.py")
    assert caught.value.code == ErrorCode.NOTEBOOK_PAIR_NOT_FOUND


def test_a_snapshot_whose_saved_bytes_are_gone_cannot_be_read_back(tmp_path: Path) -> None:
    path = _edited(tmp_path)
    [snapshot] = SnapshotStore(path).snapshots()
    [entry] = snapshot.files
    entry.blob.unlink()
    with pytest.raises(NotebookError) as caught:
        snapshot.content_before(entry)
    assert caught.value.code == ErrorCode.NOTEBOOK_READ_FAILED
    assert caught.value.details == {"path": str(entry.path), "snapshot": str(snapshot.folder)}


@pytest.mark.parametrize("damage", ["missing", "not-json", "other-format"])
def test_a_snapshot_whose_cell_record_is_lost_or_foreign_has_no_record(
    tmp_path: Path, damage: str
) -> None:
    path = _edited(tmp_path)
    [snapshot] = SnapshotStore(path).snapshots()
    assert snapshot.record() is not None
    record = snapshot.folder / "cells.json"
    if damage == "missing":
        record.unlink()
    elif damage == "not-json":
        record.write_text("{not json", encoding="utf-8")
    else:
        record.write_text(json.dumps({"format": 99}), encoding="utf-8")
    assert snapshot.record() is None


def test_a_write_waits_for_the_write_lock_at_most_its_timeout_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    path = _edited(tmp_path)
    before = path.read_bytes()
    store = SnapshotStore(path)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, sys, time\n"
         "f = open(sys.argv[1], 'r+b')\n"
         "fcntl.flock(f, fcntl.LOCK_EX)\n"
         "print('held', flush=True)\n"
         "time.sleep(60)\n",
         str(store.folder / "lock")],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        monkeypatch.setattr("jupyter_jcli.notebook.snapshots.LOCK_TIMEOUT", 0.2)
        with pytest.raises(NotebookError) as caught:
            Document.load(path).add_cell("y = 2")
        assert caught.value.code == ErrorCode.WRITE_CONFLICT
        assert caught.value.details["reason"] == "lock_timeout"
        assert path.read_bytes() == before
    finally:
        holder.kill()
        holder.wait(timeout=10)
    Document.load(path).add_cell("y = 2")  # the lock is free again: the write goes through


def test_a_keyed_stack_drops_a_record_a_killed_writer_left_pending(cache: Path) -> None:
    """A server notebook's stack (no file on this machine): a pending record cannot be
    checked against a file, so the next lock holder deletes it rather than make undo revert
    a change that may never have reached the server."""
    key = "contents:http://127.0.0.1:8888/:work/demo.ipynb"
    stack = SnapshotStore.keyed(key, "demo.ipynb")
    record = {"format": 1, "cells": []}
    with stack.lock(1.0):
        stack.commit(stack.prepare("add_cell", (), record))
        stack.prepare("update_cell", (), record)  # the writer is killed here
    with stack.lock(1.0):
        pass
    assert [snapshot.operation for snapshot in stack.snapshots()] == ["add_cell"]
    assert stack.folder.parent == cache / "snapshots"
    assert (stack.folder / "target.txt").read_text(encoding="utf-8") == key + "\n"
    assert SnapshotStore.keyed(key, "other name").folder == stack.folder
