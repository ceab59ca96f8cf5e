"""Undo: restores the newest snapshot, survives a restart, refuses over outside edits."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV, SnapshotStore, undo

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


def test_undo_restores_each_previous_state_in_turn(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    states = [path.read_bytes()]
    document = Document.load(path)
    document.add_cell("x = 1", name="added")
    states.append(path.read_bytes())
    cell = document.cell("added")
    document.update_cell("added", expected_rev=cell.rev, source="x = 2")
    states.append(path.read_bytes())
    document.remove_cell("l", expected_rev=document.cell("l").rev)

    result = undo(path)
    assert result.operation == "remove_cell"
    assert result.restored == (path.resolve(),)
    assert result.remaining == 2
    assert path.read_bytes() == states[2]
    assert undo(path).operation == "update_cell"
    assert path.read_bytes() == states[1]
    assert undo(path).remaining == 0
    assert path.read_bytes() == states[0]
    with pytest.raises(NotebookError) as info:
        undo(path)
    assert info.value.code == ErrorCode.UNDO_EMPTY


def test_undo_with_nothing_recorded_is_undo_empty_and_creates_nothing(
    tmp_path: Path, cache: Path
) -> None:
    with pytest.raises(NotebookError) as info:
        undo(_copy(tmp_path))
    assert info.value.code == ErrorCode.UNDO_EMPTY
    assert not cache.exists()


def test_undo_survives_a_restart_of_the_process(tmp_path: Path, cache: Path) -> None:
    path = _copy(tmp_path)
    original = path.read_bytes()
    code = (
        "import sys\n"
        "from jupyter_jcli.notebook.document import Document\n"
        "Document.load(sys.argv[1]).add_cell('from another process')\n"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=120)
    assert path.read_bytes() != original
    assert undo(path).operation == "add_cell"
    assert path.read_bytes() == original


def test_undo_refuses_when_the_file_changed_outside_since_the_mutation(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    original = path.read_bytes()
    Document.load(path).add_cell("x = 1")
    outside = path.read_bytes().replace(b"Sorting Arrays", b"Sorting Things")
    path.write_bytes(outside)
    with pytest.raises(NotebookError) as info:
        undo(path)
    assert info.value.code == ErrorCode.UNDO_CONFLICT
    assert info.value.details["path"] == str(path.resolve())
    assert path.read_bytes() == outside
    assert len(SnapshotStore(path).snapshots()) == 1

    forced = undo(path, force=True)
    assert forced.forced
    assert path.read_bytes() == original
    assert SnapshotStore(path).snapshots() == []


def test_a_document_notices_an_undo_as_an_outside_edit(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    first = document.add_cell("x = 1", name="first")
    assert first.cell is not None
    undo(path)
    with pytest.raises(NotebookError) as info:
        document.update_cell("first", expected_rev=first.cell.rev, source="x = 2")
    assert info.value.code == ErrorCode.CELL_NOT_FOUND
    assert "first" not in [view.name for view in document.cells]
