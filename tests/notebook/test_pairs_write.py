"""Mutations through a py:percent file paired with an .ipynb: both written, outputs kept."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.document import CellOutputs, Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV, SnapshotStore, undo

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


def _pair(tmp_path: Path, fmt: str = "py:percent") -> tuple[Path, Path]:
    """A real notebook paired with a text file, both written by jupytext as Jupyter would."""
    import jupytext

    folder = tmp_path / "work"
    folder.mkdir()
    ipynb = folder / "sorting.ipynb"
    shutil.copyfile(NOTEBOOKS / SORTING, ipynb)
    notebook = jupytext.read(ipynb)
    notebook.metadata["jupytext"] = {"formats": f"ipynb,{fmt}"}
    jupytext.write(notebook, ipynb)
    py = folder / "sorting.py"
    jupytext.write(notebook, py, fmt=fmt)
    return ipynb, py


def _outputs(path: Path) -> list[object]:
    return [cell.get("outputs") for cell in json.loads(path.read_text())["cells"]]


def test_an_add_through_the_py_file_writes_both_and_keeps_outputs(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    outputs_before = [o for o in _outputs(ipynb) if o]
    document = Document.load(py)
    assert document.notebook_path == ipynb
    assert document.paired_py == py
    anchor = document.cell("import-numpy")
    result = document.add_cell("y = np.ones(3)", after="import-numpy", expected_rev=anchor.rev)
    assert set(result.written) == {ipynb, py}
    assert "y = np.ones(3)" in py.read_text()
    assert '# %% jupyter_mcp={"name": "y"}' in py.read_text()
    assert [o for o in _outputs(ipynb) if o] == outputs_before
    through_ipynb = Document.load(ipynb)
    assert [(v.name, v.rev) for v in through_ipynb.cells] == [
        (v.name, v.rev) for v in document.cells
    ]
    assert through_ipynb.cell("y").index == anchor.index + 1


def test_an_update_through_the_py_file_keeps_the_cell_outputs_in_the_ipynb(
    tmp_path: Path,
) -> None:
    ipynb, py = _pair(tmp_path)
    document = Document.load(py)
    cell = document.cell("l")
    kept = _outputs(ipynb)[cell.index]
    assert kept
    document.update_cell("l", expected_rev=cell.rev, source="L = [2, 1]\nsorted(L)")
    assert _outputs(ipynb)[cell.index] == kept
    assert "L = [2, 1]\nsorted(L)" in py.read_text()
    reloaded = Document.load(py)
    assert reloaded.cell("l").source == "L = [2, 1]\nsorted(L)"
    assert reloaded.structure_rev == document.structure_rev


def test_undo_through_the_py_file_restores_both_files(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    before = (ipynb.read_bytes(), py.read_bytes())
    document = Document.load(py)
    document.remove_cell("sorted", expected_rev=document.cell("sorted").rev)
    [snapshot] = SnapshotStore(ipynb).snapshots()
    assert [entry.path for entry in snapshot.files] == [ipynb, py]
    result = undo(py)
    assert result.restored == (ipynb, py)
    assert (ipynb.read_bytes(), py.read_bytes()) == before


def test_undo_after_a_run_reverts_both_files_and_keeps_the_outputs_in_the_ipynb(
    tmp_path: Path,
) -> None:
    ipynb, py = _pair(tmp_path)
    py_before = py.read_text()
    document = Document.load(py)
    document.remove_cell("sorted", expected_rev=document.cell("sorted").rev)
    document.update_cell("l", expected_rev=document.cell("l").rev, source="L = [2, 1]")
    stream = [{"output_type": "stream", "name": "stdout", "text": ["ran\n"]}]
    view = document.cell("x-sort")
    assert document.write_outputs({view.name: CellOutputs(view.rev, stream, 3)}) == ("x-sort",)

    undo(py)
    result = undo(py)
    assert result.restored == (ipynb, py)
    reloaded = Document.load(py)
    assert [(v.cell_type, v.source) for v in reloaded.cells] == [
        (v.cell_type, v.source) for v in Document.load(NOTEBOOKS / SORTING).cells
    ]
    assert "L = [2, 1]" not in py.read_text() and "sorted('python')" in py.read_text()
    assert py.read_text() == py_before
    saved = json.loads(ipynb.read_text())["cells"][reloaded.cell("x-sort").index]
    assert (saved["outputs"], saved["execution_count"]) == (stream, 3)


def _written_by_jcli(py: Path) -> Document:
    """One jupyter-jcli edit of the pair (both sides then agree, and it records so)."""
    document = Document.load(py)
    cell = document.cell("l")
    document.update_cell("l", expected_rev=cell.rev, source="L = [3, 1, 4]")
    return document


def test_an_outside_edit_of_the_py_file_is_kept(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    document = _written_by_jcli(py)
    target = document.cell("x-sort")
    py.write_text(py.read_text().replace("sorted('python')", "sorted('jupyter')"))
    result = document.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert result.reloaded
    text = py.read_text()
    assert "sorted('jupyter')" in text and "x.sort()\n" in text
    assert "sorted('jupyter')" in "".join(
        "".join(cell["source"]) for cell in json.loads(ipynb.read_text())["cells"]
    )


def test_an_outside_edit_of_the_target_in_the_py_file_is_refused(tmp_path: Path) -> None:
    ipynb, py = _pair(tmp_path)
    document = _written_by_jcli(py)
    target = document.cell("x-sort")
    py.write_text(py.read_text().replace("x.sort()\nprint(x)", "x.sort()\nprint(x[::-1])"))
    edited = (ipynb.read_bytes(), py.read_bytes())
    with pytest.raises(NotebookError) as info:
        document.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert info.value.code == ErrorCode.REV_MISMATCH
    assert info.value.details["source"] == "x.sort()\nprint(x[::-1])"
    assert (ipynb.read_bytes(), py.read_bytes()) == edited


def test_a_light_pair_reads_and_an_edit_keeps_the_script_light(tmp_path: Path) -> None:
    """Issue 27 item 8: reads of a py:light pair work, and an edit (through either file)
    writes the script in its own format, without ``# +`` blocks for our cell names."""
    ipynb, py = _pair(tmp_path, fmt="py:light")
    blocks = py.read_text().count("# +")  # jupytext's own, for cells with other metadata
    document = Document.load(py)  # was FILE_TYPE_UNSUPPORTED
    assert document.pair_out_of_sync is None
    cell = document.cell("l")
    through_ipynb = Document.load(ipynb)
    through_ipynb.update_cell("l", expected_rev=cell.rev, source="L = [7, 5]", new_name="el")
    text = py.read_text()
    assert "L = [7, 5]" in text
    assert text.count("# +") == blocks and "jupyter_mcp" not in text
    reread = Document.load(py)
    assert reread.cell("el").source == "L = [7, 5]"  # the name kept, in the .ipynb
    target = reread.cell("x-sort")
    reread.update_cell("x-sort", expected_rev=target.rev, source="x.sort()")
    assert py.read_text().count("# +") == blocks and "x.sort()" in py.read_text()
    assert Document.load(ipynb).cell("x-sort").source == "x.sort()"


def test_a_py_file_without_a_paired_notebook_is_refused(tmp_path: Path) -> None:
    py = tmp_path / "alone.py"
    py.write_text("# %%\nx = 1\n")
    with pytest.raises(NotebookError) as info:
        Document.load(py)
    assert info.value.code == ErrorCode.NOTEBOOK_PAIR_NOT_FOUND


def test_an_output_write_leaves_a_pairs_script_as_it_was(tmp_path: Path) -> None:
    _ipynb, py = _pair(tmp_path)
    py_before = py.read_bytes()
    document = Document.load(py)
    view = document.cell("x-sort")
    stream = [{"output_type": "stream", "name": "stdout", "text": ["ran\n"]}]
    assert document.write_outputs({view.name: CellOutputs(view.rev, stream, 3)}) == ("x-sort",)
    assert py.read_bytes() == py_before
