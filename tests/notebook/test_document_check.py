"""A mutation is computed and checked whole before anything touches disk.

``check`` (``Document.MutationCheck``) sees the result and every cell as they will be; if it
raises, no file, snapshot or temporary file is written. Cache and output writes on a notebook
holding a cell of an unknown type keep that cell as stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.document import CellOutputs, CellView, Document, MutationResult
from odd_notebooks import folder_and_snapshots, with_odd_cell


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("JUPYTER_JCLI_CACHE_DIR", str(folder))
    return folder


def _refuse(result: MutationResult, cells: tuple[CellView, ...]) -> None:
    raise NotebookError(ErrorCode.INVALID_CELL_TYPE, "refused by the caller's check")


def _mutations() -> dict[str, Callable[[Document], MutationResult]]:
    def first(doc: Document) -> CellView:
        return doc.cells[0]

    return {
        "add": lambda doc: doc.add_cell("y = 2", check=_refuse),
        "update": lambda doc: doc.update_cell(
            first(doc).name, expected_rev=first(doc).rev, source="z = 3", check=_refuse
        ),
        "remove": lambda doc: doc.remove_cell(
            first(doc).name, expected_rev=first(doc).rev, check=_refuse
        ),
        "move": lambda doc: doc.move_cell(
            first(doc).name, expected_rev=first(doc).rev, position="end", check=_refuse
        ),
    }


@pytest.mark.parametrize("mutation", ["add", "update", "remove", "move"])
def test_a_mutation_its_check_refuses_writes_no_file_snapshot_or_temporary(
    tmp_path: Path, cache: Path, mutation: str
) -> None:
    path = with_odd_cell(tmp_path, None)
    document = Document.load(path)
    before = folder_and_snapshots(path, cache)
    with pytest.raises(NotebookError) as info:
        _mutations()[mutation](document)
    assert info.value.code == ErrorCode.INVALID_CELL_TYPE
    assert folder_and_snapshots(path, cache) == before
    assert [view.name for view in document.cells] == [
        view.name for view in Document.load(path).cells
    ]


def test_the_check_sees_the_result_and_every_cell_as_they_will_be(tmp_path: Path) -> None:
    path = with_odd_cell(tmp_path, None)
    document = Document.load(path)
    seen: list[tuple[MutationResult, tuple[CellView, ...]]] = []
    anchor = document.cells[1]
    result = document.add_cell(
        "y = 2",
        after=anchor.name,
        expected_rev=anchor.rev,
        check=lambda result, cells: seen.append((result, cells)) or None,
    )
    [(previewed, cells)] = seen
    assert previewed == result
    assert cells == document.cells
    assert cells[2].source == "y = 2"


@pytest.mark.parametrize("odd", ["sql", ""], ids=["sql", "no-cell-type"])
def test_cache_and_output_writes_keep_a_cell_of_unknown_type_as_stored(
    tmp_path: Path, odd: str
) -> None:
    path = with_odd_cell(tmp_path, odd)
    stored = json.loads(path.read_text(encoding="utf-8"))["cells"][3]
    document = Document.load(path)
    code = next(view for view in document.cells if view.cell_type == "code")
    outputs = [{"output_type": "stream", "name": "stdout", "text": ["hi\n"]}]
    assert document.write_outputs({code.name: CellOutputs(code.rev, outputs, 7)}) == (code.name,)
    odd_view = document.cells[3]
    assert document.set_cell_metadata("summary", {odd_view.name: (odd_view.rev, "s")}) == (
        odd_view.name,
    )
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert cells[code.index]["outputs"] == outputs
    section = cells[3]["metadata"].pop("jupyter_mcp")
    assert section.pop("summary") == "s"
    assert section.pop("name") == odd_view.name  # the output write stored every name
    assert section.pop("cell_id", stored.get("id")) == stored.get("id")
    assert section == {}
    assert cells[3] == stored


def test_an_output_write_stores_every_cells_name_bound_to_its_id(tmp_path: Path) -> None:
    path = tmp_path / "nb.ipynb"
    cells = [
        {"cell_type": "markdown", "id": "m0", "metadata": {}, "source": "# Intro"},
        {"cell_type": "code", "id": "c1", "metadata": {}, "source": "x = 1",
         "execution_count": None, "outputs": []},
    ]  # fmt: skip
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook), encoding="utf-8")
    document = Document.load(path)
    code = document.cell("x")
    assert document.write_outputs({"x": CellOutputs(code.rev, [], 1)}) == ("x",)
    assert all(view.name_stored for view in document.cells)
    saved = json.loads(path.read_text(encoding="utf-8"))["cells"]
    assert [cell["metadata"]["jupyter_mcp"] for cell in saved] == [
        {"name": "intro", "cell_id": "m0"},
        {"name": "x", "cell_id": "c1"},
    ]
    assert all(view.name_stored for view in Document.load(path).cells)
