"""Changes made by others are said: when the person (here: nbformat writing the file, as
any other program would) changed a notebook since the workbench's calls last saw it, the
next result on it names the cells in one short line (``Workbench.changed_by_others``, which
``jupyter-mcp`` puts in the result as ``changed_by_others``); the workbench's own edits and
runs are never said. On the in-process fake kernel."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import nbformat
import pytest
from wb_helpers import make_notebook

from jupyter_jcli.notebook._warm import ticket
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.workbench import (
    Workbench,
    add_cell,
    move_cell,
    remove_cell,
    undo_last,
    update_cell,
)
from jupyter_jcli.workbench._sightings import Sightings

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 60
SOURCES = ["a = 1", "b = a + 1", "print(b)", "c = 3"]
Edit = Callable[[nbformat.NotebookNode], None]


def _person(path: Path, edit: Edit) -> None:
    """Another writer of the file: read it with nbformat, change it, write it back."""
    notebook = nbformat.read(path, as_version=4)
    edit(notebook)
    nbformat.write(notebook, path)


async def _names(wb: Workbench, path: Path) -> list[str]:
    with anyio.fail_after(CALL_TIMEOUT):
        overview = await wb.notebook_overview(path)
    return [cell.name for cell in overview.cells]


def _set_source(index: int, source: str) -> Edit:
    def edit(notebook: nbformat.NotebookNode) -> None:
        notebook.cells[index].source = source

    return edit


def _insert(notebook: nbformat.NotebookNode) -> None:
    notebook.cells.insert(1, nbformat.v4.new_code_cell("# fresh data\nd = 4"))


def _delete(notebook: nbformat.NotebookNode) -> None:
    del notebook.cells[3]


def _last_first(notebook: nbformat.NotebookNode) -> None:
    notebook.cells.insert(0, notebook.cells.pop())


def _rename(notebook: nbformat.NotebookNode) -> None:
    notebook.cells[1].metadata["jupyter_mcp"] = {"name": "beta"}


def _clear(notebook: nbformat.NotebookNode) -> None:
    notebook.cells[2].outputs = []
    notebook.cells[2].execution_count = None


@dataclass(frozen=True)
class Case:
    """One kind of change by another writer, and the line the next result carries
    (``{0}``..: the cells' names before the change)."""

    id: str
    edit: Edit
    said: str
    run_first: bool = False


CASES = [
    Case("edited", _set_source(1, "b = a + 2"), "since your last call: edited {1}"),
    Case("added", _insert, "since your last call: added fresh-data"),
    Case("removed", _delete, "since your last call: removed {3}"),
    Case("moved", _last_first, "since your last call: moved {3}"),
    Case("renamed", _rename, "since your last call: renamed {1} -> beta"),
    Case("outputs cleared", _clear, "since your last call: outputs cleared {2}", run_first=True),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_the_next_result_names_the_cells_another_writer_changed_once(
    wb: Workbench, work: Path, case: Case
) -> None:
    path = make_notebook(work, SOURCES)
    names = await _names(wb, path)
    if case.run_first:
        with anyio.fail_after(CALL_TIMEOUT):
            ran = await wb.run_stale(path)
        assert ran.written
    assert wb.changed_by_others(path) is None  # the first sight and our own run say nothing
    _person(path, case.edit)
    await _names(wb, path)
    assert wb.changed_by_others(path) == case.said.format(*names)
    await _names(wb, path)
    assert wb.changed_by_others(path) is None  # said once


async def test_the_workbenchs_own_edits_runs_and_undo_are_never_said(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, SOURCES)
    names = await _names(wb, path)
    said = []
    with anyio.fail_after(CALL_TIMEOUT):
        with wb.warm():  # undo first: it brings back bytes this workbench read, not wrote
            remove_cell(path, names[3], expected_rev=await _rev(wb, path, names[3]))
            said.append(wb.changed_by_others(path))
            undo_last(path)
            said.append(wb.changed_by_others(path))
        ran = await wb.execute_cells(path, names)
        assert ran.written
        said.append(wb.changed_by_others(path))
        with wb.warm():
            rev = await _rev(wb, path, names[1])
            said.append(wb.changed_by_others(path))
            edited = update_cell(path, names[1], expected_rev=rev, source="b = a * 3")
            said.append(wb.changed_by_others(path))
            added = add_cell(path, "# more\ne = 5", position="start")
            said.append(wb.changed_by_others(path))
            assert added.cell is not None and edited.cell is not None
            move_cell(path, added.cell.name, expected_rev=added.cell.rev, position="end")
            said.append(wb.changed_by_others(path))
        stale = await wb.run_stale(path)
        assert stale.written
        said.append(wb.changed_by_others(path))
        await _names(wb, path)
        said.append(wb.changed_by_others(path))
    assert said == [None] * len(said)


async def _rev(wb: Workbench, path: Path, name: str) -> str:
    return (await wb.read_cells(path, names=[name])).cells[0].rev


async def test_a_call_that_finds_another_writers_change_says_it_and_not_its_own(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, SOURCES)
    names = await _names(wb, path)
    rev = await _rev(wb, path, names[0])
    _person(path, _set_source(2, "print(b, a)"))
    with wb.warm():
        outcome = update_cell(path, names[0], expected_rev=rev, source="a = 10")
    assert outcome.cell is not None and outcome.cell.name == names[0]
    assert wb.changed_by_others(path) == f"since your last call: edited {names[2]}"


async def test_a_change_another_writer_makes_while_a_cell_runs_is_said_by_that_run(
    wb: Workbench, work: Path
) -> None:
    path = work / "nb.ipynb"
    person = (  # the cell itself plays the person, who edits the first cell meanwhile
        f"import nbformat\nnb = nbformat.read({str(path)!r}, as_version=4)\n"
        f"nb.cells[0].source = 'a = 5'\nnbformat.write(nb, {str(path)!r})\nprint('saved')"
    )
    make_notebook(work, ["a = 1", person])
    names = await _names(wb, path)
    with anyio.fail_after(CALL_TIMEOUT):
        ran = await wb.execute_cells(path, [names[1]])
    assert ran.written == (names[1],)
    assert wb.changed_by_others(path) == f"since your last call: edited {names[0]}"


async def test_a_line_names_ten_cells_and_counts_the_others(wb: Workbench, work: Path) -> None:
    path = make_notebook(work, [f"x{number} = {number}" for number in range(15)])
    names = await _names(wb, path)

    def edit_all(notebook: nbformat.NotebookNode) -> None:
        for number, cell in enumerate(notebook.cells[:12]):
            cell.source = f"x{number} = {number} + 1"
        del notebook.cells[12:]

    _person(path, edit_all)
    await _names(wb, path)
    said = wb.changed_by_others(path)
    assert said == (
        f"since your last call: edited {', '.join(names[:10])} +2 more; removed 3 cells"
    )


async def test_a_notebook_replaced_whole_is_said_so(wb: Workbench, work: Path) -> None:
    path = make_notebook(work, SOURCES)
    await _names(wb, path)
    replacement = nbformat.v4.new_notebook()
    replacement.cells = [nbformat.v4.new_code_cell(f"# other {n}\nq = {n}") for n in range(2)]
    nbformat.write(replacement, path)
    await _names(wb, path)
    assert wb.changed_by_others(path) == (
        "since your last call: the notebook was replaced (2 cells, none of the 4 you saw)"
    )


async def test_an_edit_of_the_paired_py_is_an_edit_of_its_cells(wb: Workbench, work: Path) -> None:
    import jupytext

    ipynb = make_notebook(work, SOURCES)
    notebook = jupytext.read(ipynb)
    notebook.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    jupytext.write(notebook, ipynb)
    py = work / "nb.py"
    jupytext.write(notebook, py, fmt="py:percent")
    names = await _names(wb, py)
    py.write_text(py.read_text(encoding="utf-8").replace("c = 3", "c = 30"), encoding="utf-8")
    await _names(wb, py)
    assert wb.changed_by_others(py) == f"since your last call: edited {names[3]}"
    await _names(wb, ipynb)
    assert wb.changed_by_others(ipynb) is None


def test_a_version_read_before_a_newer_write_of_ours_and_told_after_it_is_not_news(
    work: Path,
) -> None:
    # two calls of one session on one notebook: one reads, the other writes and is told first
    path = make_notebook(work, SOURCES)
    seen = Sightings()  # told by hand: these documents are made under no warm cache
    seen(Document.load(path), written=False, ticket=ticket())
    second = Document.load(path).cells[1].name
    late, drawn = Document.load(path), ticket()  # the read began ...
    document = Document.load(path)
    first = document.cells[0]
    document.update_cell(first.name, expected_rev=first.rev, source="a = 100")
    seen(document, written=True, ticket=ticket())
    seen(late, written=False, ticket=drawn)  # ... and is told after the write
    seen(Document.load(path), written=False, ticket=ticket())
    assert seen.take(path) is None
    _person(path, _set_source(1, "b = 0"))
    seen(Document.load(path), written=False, ticket=ticket())
    assert seen.take(path) == f"since your last call: edited {second}"
