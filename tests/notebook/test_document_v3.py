"""An nbformat 3 notebook stays nbformat 3 when edited (issue 9, item 15).

Real v3 files: the fixture (written by Jupyter in v3) and a corpus notebook written as v3 by
nbformat itself (``nbformat.writes(nb, version=3)``) with a ``metadata.name``.
"""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.document import CellOutputs, Document

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
V3 = "text_outputs_and_images.v3.ipynb"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(folder))
    return folder


def _fixture(tmp_path: Path) -> Path:
    path = tmp_path / V3
    shutil.copyfile(NOTEBOOKS / V3, path)
    return path


def _sorting_as_v3(tmp_path: Path) -> Path:
    """The corpus notebook 02.08-Sorting written by nbformat as v3, named ``Sorting``."""
    notebook = nbformat.read(str(NOTEBOOKS / "02.08-Sorting.ipynb"), as_version=4)
    notebook.metadata["name"] = "Sorting"
    path = tmp_path / "sorting.v3.ipynb"
    path.write_text(nbformat.writes(notebook, version=3), encoding="utf-8")
    return path


def _v3_cells(path: Path) -> list[dict[str, object]]:
    document = json.loads(path.read_text(encoding="utf-8"))
    return [cell for worksheet in document["worksheets"] for cell in worksheet["cells"]]


def _valid_v3(path: Path) -> nbformat.NotebookNode:
    notebook = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    assert notebook.nbformat == 3
    nbformat.validate(notebook)
    return notebook


def test_an_edited_nbformat_3_notebook_stays_nbformat_3_and_keeps_its_name(
    tmp_path: Path,
) -> None:
    path = _sorting_as_v3(tmp_path)
    document = Document.load(path)
    document.add_cell("x = 1\ny = 2", position="end")
    notebook = _valid_v3(path)
    assert notebook.metadata.name == "Sorting"
    last = _v3_cells(path)[-1]
    assert (last["cell_type"], last["input"], last["language"]) == (
        "code",
        ["x = 1\n", "y = 2"],
        "python",
    )
    reloaded = Document.load(path)
    assert [view.name for view in reloaded.cells] == [view.name for view in document.cells]
    assert reloaded.cells[-1].source == "x = 1\ny = 2"


def test_untouched_cells_of_an_nbformat_3_notebook_keep_their_stored_form(
    tmp_path: Path,
) -> None:
    path = _fixture(tmp_path)
    stored = _v3_cells(path)
    document = Document.load(path)
    target = document.cells[2]
    document.update_cell(target.name, expected_rev=target.rev, source="print(1)")
    _valid_v3(path)
    cells = _v3_cells(path)
    for index, (old, new) in enumerate(zip(stored, cells, strict=True)):
        after = dict(new)
        after["metadata"] = {k: v for k, v in new["metadata"].items() if k != "jupyter_mcp"}
        before = dict(old)
        if index == 2:
            assert after.pop("input") == ["print(1)"]
            before.pop("input")
        assert after == before  # outputs, prompt_number, language, collapsed as stored


def test_a_second_edit_of_an_nbformat_3_notebook_changes_only_that_cells_lines(
    tmp_path: Path,
) -> None:
    path = _fixture(tmp_path)
    document = Document.load(path)
    document.add_cell("x = 1", position="end")  # stores every cell's name once
    before = path.read_text(encoding="utf-8")
    target = document.cells[3]
    document.update_cell(target.name, expected_rev=target.rev, source="edited = True")
    diff = difflib.unified_diff(
        before.splitlines(), path.read_text(encoding="utf-8").splitlines(), n=0, lineterm=""
    )
    changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert [line for line in changed if line.startswith("+")] == ['+      "edited = True"']
    assert len(changed) == 1 + len(target.source.splitlines())


def test_a_heading_cell_stays_a_heading_while_its_source_is_one_heading_line(
    tmp_path: Path,
) -> None:
    path = _sorting_as_v3(tmp_path)
    headings = [i for i, cell in enumerate(_v3_cells(path)) if cell["cell_type"] == "heading"]
    assert headings  # nbformat wrote the corpus notebook's one-line "# ..." cell as a heading
    document = Document.load(path)
    view = document.cells[headings[0]]
    document.update_cell(view.name, expected_rev=view.rev, source="## Renamed title")
    assert _v3_cells(path)[headings[0]]["cell_type"] == "heading"
    assert (_v3_cells(path)[headings[0]]["level"], _v3_cells(path)[headings[0]]["source"]) == (
        2,
        "Renamed title",
    )
    document.update_cell(view.name, expected_rev=document.cells[headings[0]].rev, source="Text")
    cell = _v3_cells(path)[headings[0]]
    assert (cell["cell_type"], "level" in cell) == ("markdown", False)
    _valid_v3(path)


def test_outputs_written_to_an_nbformat_3_notebook_are_stored_as_v3_outputs(
    tmp_path: Path,
) -> None:
    path = _fixture(tmp_path)
    document = Document.load(path)
    code = next(view for view in document.cells if view.cell_type == "code")
    outputs = [
        {"output_type": "stream", "name": "stdout", "text": ["hi\n"]},
        {
            "output_type": "execute_result",
            "execution_count": 4,
            "metadata": {},
            "data": {"text/plain": ["42"], "application/json": {"n": 2**70 + 1}},
        },
    ]
    assert document.write_outputs({code.name: CellOutputs(code.rev, outputs, 4)}) == (code.name,)
    _valid_v3(path)
    cell = _v3_cells(path)[code.index]
    assert cell["prompt_number"] == 4
    assert [output["output_type"] for output in cell["outputs"]] == ["stream", "pyout"]
    assert cell["outputs"][0]["stream"] == "stdout"
    reread = Document.load(path).notebook_dict()["cells"][code.index]
    assert reread["outputs"][1]["data"]["text/plain"] in ("42", ["42"])  # v3 text is joined
    assert reread["execution_count"] == 4


def test_an_edit_through_a_py_file_paired_with_an_nbformat_3_notebook_keeps_it_v3(
    tmp_path: Path,
) -> None:
    import jupytext

    path = _fixture(tmp_path)
    stored = _v3_cells(path)
    upgraded = jupytext.reads(nbformat.writes(nbformat.read(str(path), as_version=4)), "ipynb")
    text = jupytext.writes(upgraded, fmt="py:percent")
    py = path.with_suffix(".py")
    py.write_text(text, encoding="utf-8")
    document = Document.load(py)
    assert document.notebook_path == path
    document.add_cell("x = 1", position="end")  # written by jupyter-jcli: the sides agree
    # a cell added in the text file since: the next write takes it into the notebook
    edited = py.read_text(encoding="utf-8")
    py.write_text(edited.replace("# %%", "# %%\nfrom_text = 1\n\n# %%", 1), encoding="utf-8")
    Document.load(py).add_cell("z = 2", position="end")
    _valid_v3(path)
    cells = _v3_cells(path)
    assert cells[0]["input"] == ["from_text = 1"]
    assert [cell["input"] for cell in cells[-2:]] == [["x = 1"], ["z = 2"]]
    for old, new in zip(stored, cells[1:-2], strict=True):
        kept = {k: v for k, v in new["metadata"].items() if k != "jupyter_mcp"}
        assert {**new, "metadata": kept} == old


def test_a_cell_nbformat_cannot_convert_back_refuses_the_write_with_nothing_written(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbformat.v4 import convert

    path = _fixture(tmp_path)
    raw = path.read_bytes()

    def broken(cell: object) -> object:
        raise KeyError("source")

    monkeypatch.setattr(convert, "downgrade_cell", broken)
    with pytest.raises(NotebookError) as info:
        Document.load(path).add_cell("x = 1", position="end")
    assert info.value.code == ErrorCode.NOTEBOOK_WRITE_FAILED
    assert path.read_bytes() == raw
    assert sorted(p.name for p in tmp_path.iterdir() if p != cache) == [V3]  # no temporary
    assert not any(cache.glob("snapshots/*/0*"))


def _v3_inputs(path: Path) -> list[tuple[object, object]]:
    return [(c["cell_type"], c.get("input", c.get("source"))) for c in _v3_cells(path)]


def test_undo_merged_with_a_later_write_keeps_an_nbformat_3_notebook_v3(tmp_path: Path) -> None:
    path = _sorting_as_v3(tmp_path)
    stored = _v3_inputs(path)
    document = Document.load(path)
    first = document.cells[1]
    document.update_cell(first.name, source="x = 'edited'", expected_rev=first.rev)
    moved = document.cells[2]
    document.move_cell(moved.name, expected_rev=moved.rev, position="end")
    top = document.cells[0]
    document.set_cell_metadata("summary", {top.name: (top.rev, {"n": 1})})
    document.undo()  # the move, merged with the cache write since
    document.undo()  # the edit
    assert _valid_v3(path).metadata.name == "Sorting"
    assert _v3_inputs(path) == stored
