"""Undo: reverts the newest mutation on the notebook as it is now, keeping what was written
since (outputs, execution counts, outside edits), survives a restart, refuses (naming the
change) when it would overwrite something made since."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.document import CellOutputs, Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV, SnapshotStore, undo

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
SORTING = "02.08-Sorting.ipynb"
STREAM = [{"output_type": "stream", "name": "stdout", "text": ["ran since\n"]}]


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


def _cells(path: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(path.read_bytes())["cells"]
    return cells


def _inputs(path: Path) -> list[tuple[str, str]]:
    """Each cell's type and source: what undo must give back."""
    return [(cell["cell_type"], "".join(cell["source"])) for cell in _cells(path)]


def _run(document: Document, *names: str, count: int = 7) -> None:
    """Save outputs for the named cells as a run would (the rev that ran is the current one)."""
    results = {name: CellOutputs(document.cell(name).rev, STREAM, count) for name in names}
    assert document.write_outputs(results) == tuple(
        view.name for view in document.cells if view.name in names
    )


def _save_outside(path: Path, cells: list[dict[str, Any]]) -> None:
    """Write the cells as another program (Jupyter) would: no snapshot, Jupyter's JSON."""
    notebook = json.loads(path.read_bytes())
    notebook["cells"] = cells
    text = json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    path.write_text(text, encoding="utf-8")


def _outputs(path: Path, index: int) -> tuple[list[dict[str, Any]], int | None]:
    cell = _cells(path)[index]
    return cell["outputs"], cell["execution_count"]


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
    assert not result.merged
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


def test_undo_of_an_edit_keeps_the_outputs_and_counts_of_a_run_made_since(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    original = _inputs(path)
    document = Document.load(path)
    view = document.cell("l-sort")
    document.update_cell("l-sort", expected_rev=view.rev, source="L.sort()\nprint(L, 'new')")
    _run(document, "l", "l-sort", "sorted")

    result = undo(path)
    assert _inputs(path) == original
    for index in (2, 4, 6):  # l, l-sort (its source went back) and sorted keep the run
        assert _outputs(path, index) == (STREAM, 7)
    assert result.merged
    assert result.changed == ("l-sort",)


def test_undo_keeps_an_outside_edit_of_another_cell(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    Document.load(path).add_cell("x = 1", name="added")
    outside = path.read_bytes().replace(b"# Sorting Arrays", b"# Sorting Things")
    path.write_bytes(outside)

    result = undo(path)
    assert result.merged and result.changed == ("added",)
    assert "added" not in [view.name for view in Document.load(path).cells]
    assert _cells(path)[0]["source"] == ["# Sorting Things"]
    assert len(_cells(path)) == len(_cells(NOTEBOOKS / SORTING))


def test_undo_refuses_to_overwrite_an_edit_of_the_same_cell_made_since_unless_forced(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    document.update_cell("sorted", expected_rev=document.cell("sorted").rev, source="sorted('ab')")
    edited = path.read_bytes().replace(b"sorted('ab')", b"sorted('outside')")
    path.write_bytes(edited)

    with pytest.raises(NotebookError) as info:
        undo(path)
    assert info.value.code == ErrorCode.UNDO_CONFLICT
    assert info.value.details["operation"] == "update_cell"
    assert info.value.details["conflicts"] == [
        {"cell": "sorted", "reason": "edited_since", "fields": ["source"]}
    ]
    assert path.read_bytes() == edited
    assert len(SnapshotStore(path).snapshots()) == 1

    forced = undo(path, force=True)
    assert forced.forced and forced.conflicts[0]["cell"] == "sorted"
    assert _inputs(path) == _inputs(NOTEBOOKS / SORTING)
    assert SnapshotStore(path).snapshots() == []


def _add(document: Document) -> None:
    document.add_cell("y = 2", name="added", after="l", expected_rev=document.cell("l").rev)


def _remove(document: Document) -> None:
    document.remove_cell("l-sort", expected_rev=document.cell("l-sort").rev)


def _move(document: Document) -> None:
    document.move_cell("import-numpy", expected_rev=document.cell("import-numpy").rev)


def _rename(document: Document) -> None:
    document.update_cell("sorted", expected_rev=document.cell("sorted").rev, new_name="srt")


def _retype(document: Document) -> None:
    document.update_cell("l-sort", expected_rev=document.cell("l-sort").rev, cell_type="raw")


@pytest.mark.parametrize("mutate", [_add, _remove, _move, _rename, _retype])
def test_undo_of_each_kind_of_mutation_gives_back_the_cells_and_keeps_a_later_run(
    tmp_path: Path, mutate: Any
) -> None:
    path = _copy(tmp_path)
    original_cells = _cells(path)
    document = Document.load(path)
    mutate(document)
    _run(document, "x-sort")

    result = undo(path)
    cells = _cells(path)
    assert [(c["cell_type"], c["source"]) for c in cells] == [
        (c["cell_type"], c["source"]) for c in original_cells
    ]
    x_sort = next(i for i, c in enumerate(cells) if "".join(c["source"]) == "x.sort()\nprint(x)")
    assert _outputs(path, x_sort) == (STREAM, 7)
    for before, after in zip(original_cells, cells, strict=True):
        if after is not cells[x_sort]:  # every other cell is exactly as it was, outputs too
            assert after == before
    assert result.merged


def test_undo_of_a_removal_puts_the_cell_back_after_its_predecessor_and_keeps_a_new_cell(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    document.remove_cell("l-sort", expected_rev=document.cell("l-sort").rev)
    new = {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": []}
    _save_outside(path, [{**new, "source": "first = 0"}, *_cells(path)])

    undo(path)
    names = [view.name for view in Document.load(path).cells]
    assert names[0] == "first"
    assert names.index("l-sort") == names.index("by-contrast-the-sort-method-of-lists") + 1
    assert _inputs(path)[1:] == _inputs(NOTEBOOKS / SORTING)


def test_repeated_undos_revert_each_mutation_and_keep_every_run_in_between(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    _add(document)
    _run(document, "added", "l")
    document.update_cell("sorted", expected_rev=document.cell("sorted").rev, source="1")
    _run(document, "sorted", "x-sort", count=8)
    _move(document)

    assert [undo(path).operation for _ in range(3)] == ["move_cell", "update_cell", "add_cell"]
    assert _inputs(path) == _inputs(NOTEBOOKS / SORTING)
    assert _outputs(path, 2) == (STREAM, 7)  # l: the first run
    assert _outputs(path, 6) == (STREAM, 8)  # sorted: source back, the run after its edit kept
    with pytest.raises(NotebookError) as info:
        undo(path)
    assert info.value.code == ErrorCode.UNDO_EMPTY


def test_undo_keeps_outputs_written_by_another_document_on_the_same_notebook(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    first, second = Document.load(path), Document.load(path)
    first.update_cell("l-sort", expected_rev=first.cell("l-sort").rev, source="L.sort()")
    _run(first, "l-sort", count=1)
    _run(second, "l", "import-numpy", count=2)  # reloads: sees the edit, keeps first's run

    undo(path)
    assert _inputs(path) == _inputs(NOTEBOOKS / SORTING)
    assert _outputs(path, 4) == (STREAM, 1)
    assert _outputs(path, 2) == (STREAM, 2)
    assert _outputs(path, 9) == (STREAM, 2)


def test_undo_refuses_to_put_back_a_cell_whose_name_was_taken_since(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    _rename(document)  # names are stored from now on
    document.remove_cell("l-sort", expected_rev=document.cell("l-sort").rev)
    document.add_cell("z = 0", name="l-sort")  # a new cell under the removed one's name
    SnapshotStore(path).discard(SnapshotStore(path).snapshots()[-1])  # as if added outside

    with pytest.raises(NotebookError) as info:
        undo(path)
    assert info.value.code == ErrorCode.UNDO_CONFLICT
    assert info.value.details["conflicts"][0]["reason"] == "name_taken"


def test_undo_refuses_to_move_back_a_cell_moved_again_since(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    _move(document)
    rev = document.cell("import-numpy").rev
    document.move_cell("import-numpy", expected_rev=rev, position="start")
    SnapshotStore(path).discard(SnapshotStore(path).snapshots()[-1])

    with pytest.raises(NotebookError) as info:
        undo(path)
    assert info.value.code == ErrorCode.UNDO_CONFLICT
    assert info.value.details["conflicts"] == [
        {"cell": "import-numpy", "reason": "moved_since", "fields": []}
    ]


def test_undo_of_a_change_already_reverted_by_hand_writes_nothing_and_pops(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    _rename(document)  # names are stored from now on
    document.update_cell("l", expected_rev=document.cell("l").rev, source="L = [1]")
    _save_outside(path, _cells(NOTEBOOKS / SORTING)[:2] + _cells(path)[2:])  # not l
    cells = _cells(path)
    cells[2]["source"] = _cells(NOTEBOOKS / SORTING)[2]["source"]
    _save_outside(path, cells)  # l's old source, by hand
    before = path.read_bytes()

    result = undo(path)
    assert result.restored == () and result.remaining == 1
    assert path.read_bytes() == before


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


def test_a_cell_put_back_whose_id_was_taken_since_gets_a_fresh_one(tmp_path: Path) -> None:
    cells = [
        {"cell_type": "code", "execution_count": None, "id": f"id-{n}", "metadata": {},
         "outputs": [], "source": f"v{n} = {n}"}
        for n in range(3)
    ]  # fmt: skip
    path = tmp_path / "ids.ipynb"
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(notebook, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    document = Document.load(path)
    document.remove_cell("v1", expected_rev=document.cell("v1").rev)
    _save_outside(path, [*_cells(path), {**cells[1], "source": "w = 1", "metadata": {}}])

    undo(path)
    ids = [cell["id"] for cell in _cells(path)]
    assert len(set(ids)) == 4 and ids[0] == "id-0" and ids[3] == "id-1"
    assert [cell["source"] for cell in _cells(path)] == ["v0 = 0", "v1 = 1", "v2 = 2", "w = 1"]


def test_undo_of_clear_outputs_puts_the_outputs_back_keeping_an_edit_made_since(
    tmp_path: Path,
) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    with_outputs = [
        view.name
        for view, cell in zip(document.cells, _cells(path), strict=True)
        if cell.get("outputs")
    ][:2]
    assert len(with_outputs) == 2
    before = {
        index: (cell["outputs"], cell["execution_count"])
        for index, cell in enumerate(_cells(path))
        if cell.get("outputs")
    }
    result = document.clear_outputs(with_outputs)
    assert list(result.changed) == with_outputs
    cleared = [document.cell(name).index for name in with_outputs]
    for index in cleared:
        assert _cells(path)[index]["outputs"] == []
        assert _cells(path)[index]["execution_count"] is None
    other = next(view for view in document.cells if view.name not in with_outputs)
    document.update_cell(other.name, expected_rev=other.rev, source="edited since")
    document.undo()  # the edit since: undone first
    undone = Document.load(path).undo()  # merged when bytes differ; byte-exact otherwise
    assert undone.operation == "clear_outputs"
    for index in cleared:
        cell = _cells(path)[index]
        assert (cell["outputs"], cell["execution_count"]) == before[index]


def test_undo_of_clear_outputs_through_the_cell_record_restores_them(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    name = next(
        view.name
        for view, cell in zip(document.cells, _cells(path), strict=True)
        if cell.get("outputs")
    )
    index = document.cell(name).index
    saved = (_cells(path)[index]["outputs"], _cells(path)[index]["execution_count"])
    document.clear_outputs([name])
    outside = json.loads(path.read_bytes())  # another program edits a markdown cell since
    markdown = next(i for i, cell in enumerate(outside["cells"]) if cell["cell_type"] == "markdown")
    outside["cells"][markdown]["source"] = "changed outside"
    path.write_text(json.dumps(outside, indent=1), encoding="utf-8")
    undone = Document.load(path).undo()
    assert undone.merged  # the inverse of the record, not the saved bytes
    cell = _cells(path)[index]
    assert (cell["outputs"], cell["execution_count"]) == saved
    assert "".join(_cells(path)[markdown]["source"]) == "changed outside"


def test_clear_outputs_refuses_a_markdown_cell_and_writes_nothing(tmp_path: Path) -> None:
    path = _copy(tmp_path)
    document = Document.load(path)
    code = next(view.name for view in document.cells if view.cell_type == "code")
    markdown = next(view.name for view in document.cells if view.cell_type == "markdown")
    before = path.read_bytes()
    with pytest.raises(Exception) as refused:
        document.clear_outputs([code, markdown])
    assert getattr(refused.value, "code", None) == ErrorCode.USAGE_ERROR
    assert path.read_bytes() == before
