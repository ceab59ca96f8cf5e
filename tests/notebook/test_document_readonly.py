"""A notebook without an owner write bit is never overwritten, even by root (no os.access)."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.document import CellOutputs, Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV, SnapshotStore, undo
from jupyter_jcli.workbench import update_cell

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "work" / "ro.ipynb"
    target.parent.mkdir(exist_ok=True)
    shutil.copyfile(NOTEBOOKS / SORTING, target)
    return target


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    import jupytext

    ipynb = _copy(tmp_path)
    notebook = jupytext.read(ipynb)
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    jupytext.write(notebook, ipynb)
    py = ipynb.with_suffix(".py")
    jupytext.write(notebook, py, fmt="py:percent")
    return ipynb, py


@pytest.mark.parametrize("mode", [0o444, 0o400, 0o077, 0o000])
def test_an_update_of_a_read_only_notebook_is_refused_before_snapshotting(
    tmp_path: Path, mode: int
) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    document = Document.load(path)
    cell = document.cell("l")
    os.chmod(path, mode)
    try:
        with pytest.raises(NotebookError) as info:
            document.update_cell("l", expected_rev=cell.rev, source="L = [2, 1]")
        assert info.value.code == ErrorCode.NOTEBOOK_WRITE_FAILED
        assert info.value.details["mode"] == f"{mode:#o}"
        assert info.value.details["path"] == str(path)
        assert stat.S_IMODE(os.stat(path).st_mode) == mode
    finally:
        os.chmod(path, 0o644)
    assert path.read_bytes() == before
    assert SnapshotStore(path).snapshots() == []


def test_the_workbench_update_refuses_a_read_only_notebook(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    rev = Document.load(path).cell("l").rev
    os.chmod(path, 0o444)
    with pytest.raises(NotebookError) as info:
        update_cell(path, "l", expected_rev=rev, source="L = [2, 1]")
    assert info.value.code == ErrorCode.NOTEBOOK_WRITE_FAILED
    assert path.read_bytes() == before


def test_a_write_bit_for_the_owner_is_enough(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    os.chmod(path, 0o600)
    document = Document.load(path)
    document.add_cell("x = 1", position="end")
    assert Document.load(path).cells[-1].source == "x = 1"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_outputs_are_not_written_into_a_read_only_notebook(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    before = path.read_bytes()
    document = Document.load(path)
    cell = document.cell("l")
    os.chmod(path, 0o444)
    outputs = [{"output_type": "stream", "name": "stdout", "text": "hi\n"}]
    with pytest.raises(NotebookError) as info:
        document.write_outputs({"l": CellOutputs(cell.rev, outputs, 1)})
    assert info.value.code == ErrorCode.NOTEBOOK_WRITE_FAILED
    assert path.read_bytes() == before


def test_undo_refuses_a_read_only_notebook_and_keeps_its_snapshot(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    document.update_cell("l", expected_rev=document.cell("l").rev, source="L = [2, 1]")
    edited = path.read_bytes()
    os.chmod(path, 0o444)
    for force in (False, True):
        with pytest.raises(NotebookError) as info:
            undo(path, force=force)
        assert info.value.code == ErrorCode.NOTEBOOK_WRITE_FAILED
        assert info.value.details["mode"] == "0o444"
    assert path.read_bytes() == edited
    assert len(SnapshotStore(path).snapshots()) == 1
    os.chmod(path, 0o644)
    undo(path)
    assert path.read_bytes() == (NOTEBOOKS / SORTING).read_bytes()


def test_a_read_only_half_of_a_pair_refuses_the_mutation_on_both(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    before = (ipynb.read_bytes(), py.read_bytes())
    document = Document.load(py)
    cell = document.cell("l")
    os.chmod(py, 0o444)
    with pytest.raises(NotebookError) as info:
        document.update_cell("l", expected_rev=cell.rev, source="L = [2, 1]")
    assert info.value.code == ErrorCode.NOTEBOOK_WRITE_FAILED
    assert info.value.details["path"] == str(py)
    assert (ipynb.read_bytes(), py.read_bytes()) == before
    assert SnapshotStore(ipynb).snapshots() == []
