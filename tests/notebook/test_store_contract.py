"""The notebook store contract: every store (the local file, the in-memory store of
``notebook.testing``, the contents API of a real Jupyter Server, the collaborative room of a
real Jupyter Server with jupyter-collaboration, whose other writer is a person's
jupyter-nbmodel-client) reads, commits cell operations at a version, refuses a stale version
or a changed cell without changing anything, locks with a timeout and keeps undo records; and
the document operations behave the same over each of them."""

from __future__ import annotations

import copy
import json
import secrets
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError, UsageError
from jupyter_jcli.notebook._local_store import LocalStore
from jupyter_jcli.notebook.document import CellOutputs, Document
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV
from jupyter_jcli.notebook.store import (
    ContentsStore,
    DeleteCell,
    InsertCell,
    MoveCell,
    NotebookRef,
    NotebookStore,
    SetMetadata,
    SetOutputs,
    SetSource,
    StoreChange,
    apply_ops,
    open_notebook,
    ops_between,
    rev_of,
)
from jupyter_jcli.notebook.testing import MemoryStore, open_document
from remote_servers import contents_server  # noqa: F401  (a fixture)

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
STREAM = [{"output_type": "stream", "name": "stdout", "text": "ran\n"}]


def _joined(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Outputs with multiline text joined: nbformat holds ``["ran\\n"]`` and ``"ran\\n"``
    alike, and a Jupyter Server answers with the joined form."""
    return [
        {**output, "text": "".join(output["text"])} if "text" in output else output
        for output in outputs
    ]


def _notebook() -> dict[str, Any]:
    def cell(cell_id: str, cell_type: str, source: str) -> dict[str, Any]:
        made: dict[str, Any] = {"cell_type": cell_type, "id": cell_id, "metadata": {}}
        made["source"] = source
        if cell_type == "code":
            made["outputs"] = []
            made["execution_count"] = None
        return made

    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "cells": [
            cell("a1", "markdown", "# Load"),
            cell("b2", "code", "# load data\nx = 1"),
            cell("c3", "code", "# double it\ny = x * 2"),
            cell("d4", "code", "# show\nprint(y)"),
        ],
    }


@dataclass
class Harness:
    """One store with one notebook in it, and how another program changes it."""

    store: NotebookStore
    ref: NotebookRef
    outside: Callable[[dict[str, Any]], None]
    kernel_where: str = "local"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_DIR_ENV, str(folder))
    return folder


@pytest.fixture(scope="module")
def collab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from server_helpers import running_server

    root = tmp_path_factory.mktemp("collab-root")
    with running_server(root, tmp_path_factory.mktemp("collab-work")) as server:
        yield server


@pytest.fixture(
    params=[
        "local",
        "memory",
        pytest.param("contents", marks=pytest.mark.server),
        pytest.param("collab", marks=pytest.mark.server),
    ]
)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "collab":
        yield from _collab_harness(request.getfixturevalue("collab_server"), tmp_path)
    elif request.param == "local":
        store = LocalStore()
        path = tmp_path / "work" / "demo.ipynb"
        path.parent.mkdir()
        ref = store.ref(path)
        store.create(ref, _notebook())

        def save(notebook: dict[str, Any]) -> None:  # as Jupyter would
            path.write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")

        yield Harness(store, ref, save)
    elif request.param == "contents":  # a notebook only in a real server's root
        server = request.getfixturevalue("contents_server")
        (server.root / "work").mkdir(exist_ok=True)
        with ContentsStore(server.url, server.token) as contents, server.client() as client:
            ref = contents.ref(f"work/demo-{secrets.token_hex(4)}.ipynb")
            contents.create(ref, _notebook())

            def put(notebook: dict[str, Any]) -> None:  # another client's save
                model = {"type": "notebook", "format": "json", "content": notebook}
                assert client.put(f"api/contents/{ref.path}", json=model).status_code == 200

            yield Harness(contents, ref, put, "server")
    else:
        memory = MemoryStore()
        ref = NotebookRef("memory", "work/demo.ipynb")
        memory.create(ref, _notebook())

        def replace(notebook: dict[str, Any]) -> None:  # another program's save
            memory.replace(ref, notebook)

        yield Harness(memory, ref, replace)


def _collab_harness(server: Any, tmp_path: Path) -> Iterator[Harness]:
    from collab_helpers import Person, wait_until
    from jupyter_jcli.notebook.store import CollabStore

    name = f"{tmp_path.name}.ipynb"  # a fresh notebook per test on the shared server
    with CollabStore(server.url, server.token, timeout=20.0) as store:
        ref = store.ref(name)
        store.create(ref, _notebook())
        person = Person(server.url, server.token, name)

        def typed(notebook: dict[str, Any]) -> None:  # the person edits in the room
            mine = store.read(ref).notebook["cells"]
            seen = ["".join(cell["source"]) for cell in mine]
            person.wait_for(lambda them: them.sources() == seen)  # they edit what they see
            ids = [cell["id"] for cell in notebook["cells"]]
            if ids != [cell["id"] for cell in mine]:  # a move: as JupyterLab, delete + insert
                moved = next(i for i, cell in enumerate(mine) if cell["id"] != ids[i])
                origin = next(i for i, cell in enumerate(mine) if cell["id"] == ids[moved])
                person.move(origin, moved)
            for index, (old, new) in enumerate(zip(mine, notebook["cells"], strict=True)):
                if old["id"] == new["id"] and old["source"] != new["source"]:
                    person.set_source(index, "".join(new["source"]))
            wanted = ["".join(cell["source"]) for cell in notebook["cells"]]
            wait_until(lambda: _sources(Harness(store, ref, typed)) == wanted)

        try:
            yield Harness(store, ref, typed, "server")
        finally:
            person.close()


def _sources(harness: Harness) -> list[str]:
    return ["".join(cell["source"]) for cell in harness.store.read(harness.ref).notebook["cells"]]


def _edit_outside(harness: Harness, index: int, source: str) -> None:
    notebook = copy.deepcopy(harness.store.read(harness.ref).notebook)
    notebook["cells"][index]["source"] = source
    harness.outside(notebook)


# ---------------------------------------------------------------------- the store itself


def test_read_gives_the_cells_and_a_version_that_only_a_change_moves(harness: Harness) -> None:
    first = harness.store.read(harness.ref)
    assert [cell["id"] for cell in first.notebook["cells"]] == ["a1", "b2", "c3", "d4"]
    assert harness.store.read(harness.ref).version == first.version
    _edit_outside(harness, 1, "x = 2")
    assert harness.store.read(harness.ref).version != first.version


def test_a_commit_at_the_version_read_applies_every_operation(harness: Harness) -> None:
    read = harness.store.read(harness.ref)
    cells = read.notebook["cells"]
    new = {"cell_type": "code", "id": "e5", "metadata": {}, "source": "z = 3", "outputs": []}
    new["execution_count"] = None
    ops = [
        SetSource(1, rev_of(cells[1]), "x = 10"),
        SetMetadata(2, rev_of(cells[2]), {"tags": ["keep"]}),
        SetOutputs(3, rev_of(cells[3]), STREAM, 4),
        InsertCell(4, new),
        MoveCell(4, rev_of(new), 0),
        DeleteCell(1, rev_of(cells[0])),
    ]
    written = harness.store.commit(harness.ref, StoreChange(read.version, ops))
    after = harness.store.read(harness.ref)
    assert written.version == after.version != read.version
    got = after.notebook["cells"]
    assert [cell["id"] for cell in got] == ["e5", "b2", "c3", "d4"]
    assert "".join(got[1]["source"]) == "x = 10"
    assert got[2]["metadata"] == {"tags": ["keep"]}
    assert (_joined(got[3]["outputs"]), got[3]["execution_count"]) == (_joined(STREAM), 4)


def test_a_commit_at_a_stale_version_is_a_conflict_and_changes_nothing(harness: Harness) -> None:
    read = harness.store.read(harness.ref)
    if harness.ref.store == "collab":  # the room merges another cell's edit: moving cells
        notebook = copy.deepcopy(read.notebook)  # is what makes its version stale
        notebook["cells"].insert(0, notebook["cells"].pop(3))
        harness.outside(notebook)
    else:
        _edit_outside(harness, 3, "print('theirs')")
    before = harness.store.read(harness.ref)
    cell = read.notebook["cells"][1]
    with pytest.raises(NotebookError) as caught:
        harness.store.commit(
            harness.ref, StoreChange(read.version, [SetSource(1, rev_of(cell), "x = 9")])
        )
    assert caught.value.code == ErrorCode.WRITE_CONFLICT
    assert caught.value.details["reason"] == "version_changed"
    assert harness.store.read(harness.ref) == before


def test_a_room_merges_another_cells_edit_into_a_commit_at_the_version_read(
    harness: Harness,
) -> None:
    if harness.ref.store != "collab":
        pytest.skip("only a collaborative room merges concurrent edits of other cells")
    read = harness.store.read(harness.ref)
    _edit_outside(harness, 3, "print('theirs')")
    cell = read.notebook["cells"][1]
    harness.store.commit(
        harness.ref, StoreChange(read.version, [SetSource(1, rev_of(cell), "x = 9")])
    )
    assert _sources(harness)[1:] == ["x = 9", "# double it\ny = x * 2", "print('theirs')"]


def test_an_operation_on_a_cell_whose_rev_differs_is_a_conflict(harness: Harness) -> None:
    read = harness.store.read(harness.ref)
    cell = read.notebook["cells"][2]
    with pytest.raises(NotebookError) as caught:
        harness.store.commit(
            harness.ref,
            StoreChange(
                read.version,
                [
                    SetSource(1, rev_of(read.notebook["cells"][1]), "x = 9"),
                    SetSource(2, "0" * 12, ""),
                ],
            ),
        )
    assert caught.value.code == ErrorCode.WRITE_CONFLICT
    assert caught.value.details["reason"] == "cell_changed"
    assert caught.value.details["actual_rev"] == rev_of(cell)
    assert harness.store.read(harness.ref) == read  # the first operation was not applied


def test_create_never_replaces_a_notebook(harness: Harness) -> None:
    with pytest.raises(NotebookError) as caught:
        harness.store.create(harness.ref, _notebook())
    assert caught.value.code == ErrorCode.FILE_EXISTS


def test_the_lock_times_out_while_another_writer_holds_it(harness: Harness) -> None:
    with (
        harness.store.lock(harness.ref, 5.0),
        pytest.raises(NotebookError) as caught,
        harness.store.lock(harness.ref, 0.05),
    ):
        pass
    assert caught.value.code == ErrorCode.WRITE_CONFLICT
    assert caught.value.details["reason"] == "lock_timeout"
    with harness.store.lock(harness.ref, 0.05):  # released: the next writer gets it
        pass


def test_a_kernel_runs_where_the_store_says(harness: Harness) -> None:
    assert harness.store.kernel_place(harness.ref).where == harness.kernel_where


# ---------------------------------------------------------------------- documents over it


def test_document_edits_go_through_the_store(harness: Harness) -> None:
    document = open_document(harness.ref, harness.store)
    assert [view.name for view in document.cells] == ["load", "load-data", "double-it", "show"]
    added = document.add_cell("# triple\nt = x * 3", after="load-data",
                              expected_rev=document.cell("load-data").rev)  # fmt: skip
    assert added.cell is not None and added.cell.name == "triple"
    document.update_cell("show", expected_rev=document.cell("show").rev, source="print(y, t)")
    document.move_cell("show", expected_rev=document.cell("show").rev, position="start")
    document.remove_cell("load", expected_rev=document.cell("load").rev)
    expected = [
        "print(y, t)",
        "# load data\nx = 1",
        "# triple\nt = x * 3",
        "# double it\ny = x * 2",
    ]
    assert _sources(harness) == expected
    again = open_document(harness.ref, harness.store)
    assert [view.name for view in again.cells] == ["show", "load-data", "triple", "double-it"]
    assert [(view.name, view.rev) for view in again.cells] == [
        (view.name, view.rev) for view in document.cells
    ]


def test_outputs_and_caches_are_written_without_an_undo_record(harness: Harness) -> None:
    document = open_document(harness.ref, harness.store)
    rev = document.cell("double-it").rev
    assert document.write_outputs({"double-it": CellOutputs(rev, STREAM, 3)}) == ("double-it",)
    assert document.set_cell_metadata("deps", {"show": (document.cell("show").rev, ["y"])}) == (
        "show",
    )
    cells = harness.store.read(harness.ref).notebook["cells"]
    assert (_joined(cells[2]["outputs"]), cells[2]["execution_count"]) == (_joined(STREAM), 3)
    assert cells[3]["metadata"]["jupyter_mcp"]["deps"] == ["y"]
    assert harness.store.undo_entries(harness.ref) == []


def test_an_edit_with_a_rev_another_writer_changed_is_refused(harness: Harness) -> None:
    document = open_document(harness.ref, harness.store)
    rev = document.cell("double-it").rev
    _edit_outside(harness, 2, "# double it\ny = x * 20")
    before = harness.store.read(harness.ref)
    with pytest.raises(NotebookError) as caught:
        document.update_cell("double-it", expected_rev=rev, source="y = 0")
    assert caught.value.code == ErrorCode.REV_MISMATCH
    assert harness.store.read(harness.ref) == before
    assert harness.store.undo_entries(harness.ref) == []


def test_an_edit_of_another_cell_keeps_the_outside_edit(harness: Harness) -> None:
    document = open_document(harness.ref, harness.store)
    rev = document.cell("show").rev
    _edit_outside(harness, 2, "# double it\ny = x * 20")
    result = document.update_cell("show", expected_rev=rev, source="print(y + 1)")
    assert result.reloaded
    assert _sources(harness)[2:] == ["# double it\ny = x * 20", "print(y + 1)"]


def test_undo_reverts_the_newest_edit_and_keeps_what_was_written_since(harness: Harness) -> None:
    document = open_document(harness.ref, harness.store)
    original = _sources(harness)
    document.update_cell("show", expected_rev=document.cell("show").rev, source="print(-y)")
    document.add_cell("# extra\nq = 0")
    rev = document.cell("double-it").rev
    document.write_outputs({"double-it": CellOutputs(rev, STREAM, 5)})
    assert document.undo().operation == "add_cell"
    undone = document.undo()
    assert (undone.operation, undone.remaining, undone.merged) == ("update_cell", 0, True)
    assert _sources(harness) == original
    assert _joined(harness.store.read(harness.ref).notebook["cells"][2]["outputs"]) == _joined(
        STREAM
    )
    with pytest.raises(NotebookError) as caught:
        document.undo()
    assert caught.value.code == ErrorCode.UNDO_EMPTY


def test_undo_over_an_edit_made_since_is_a_conflict_and_changes_nothing(
    harness: Harness,
) -> None:
    document = open_document(harness.ref, harness.store)
    document.update_cell("show", expected_rev=document.cell("show").rev, source="print(-y)")
    _edit_outside(harness, 3, "print('theirs')")
    before = harness.store.read(harness.ref)
    with pytest.raises(NotebookError) as caught:
        document.undo()
    assert caught.value.code == ErrorCode.UNDO_CONFLICT
    assert caught.value.details["conflicts"][0]["reason"] == "edited_since"
    assert harness.store.read(harness.ref) == before
    assert len(harness.store.undo_entries(harness.ref)) == 1


# ---------------------------------------------------------------------- the local store


def test_the_local_store_writes_what_the_file_document_writes(tmp_path: Path) -> None:
    name = "02.08-Sorting.ipynb"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    ours, theirs = tmp_path / "a" / name, tmp_path / "b" / name
    shutil.copyfile(NOTEBOOKS / name, ours)
    shutil.copyfile(NOTEBOOKS / name, theirs)
    stored = open_document(LocalStore().ref(ours), LocalStore())
    plain = Document.load(theirs)
    for document in (stored, plain):
        target = document.cells[3]
        document.update_cell(target.name, expected_rev=target.rev, source="x = 1\n")
        document.remove_cell(document.cells[5].name, expected_rev=document.cells[5].rev)
    assert ours.read_bytes() == theirs.read_bytes()


def test_a_local_document_names_its_store_ref(tmp_path: Path) -> None:
    path = tmp_path / "demo.ipynb"
    LocalStore().create(NotebookRef.local(path), _notebook())
    ref = Document.load(path).ref
    assert (ref.store, ref.local_path) == ("local", path)


# ---------------------------------------------------------------------- the operations


def test_operations_between_two_cell_lists_rebuild_the_second() -> None:
    before = _notebook()["cells"]
    retyped = {**before[2], "cell_type": "markdown"}
    del retyped["outputs"], retyped["execution_count"]
    fresh = {"cell_type": "raw", "id": "z9", "metadata": {}, "source": "raw"}
    after = [before[3], {**before[1], "source": "x = 5"}, fresh, retyped]
    ops = ops_between(before, after, [3, 1, None, 2])
    assert apply_ops(before, ops, where="demo")[0] == after
    assert any(isinstance(op, DeleteCell) and op.index == 2 for op in ops)  # a type change


def test_open_notebook_takes_a_path_or_a_ref_of_its_store(harness: Harness) -> None:
    document = open_notebook(harness.ref, store=harness.store)
    assert document.ref == harness.ref
    assert [view.name for view in document.cells] == ["load", "load-data", "double-it", "show"]
    if harness.ref.local_path is not None:  # a local ref alone is Document.load's
        assert type(open_notebook(harness.ref)) is Document
        assert type(open_notebook(harness.ref.local_path)) is Document
    else:
        with pytest.raises(UsageError) as caught:
            open_notebook(harness.ref)
        assert caught.value.code == ErrorCode.USAGE_ERROR


def test_the_local_store_keeps_the_undo_records_of_the_file_document(tmp_path: Path) -> None:
    path = tmp_path / "demo.ipynb"
    store = LocalStore()
    store.create(store.ref(path), _notebook())
    plain = Document.load(path)
    plain.update_cell("show", expected_rev=plain.cell("show").rev, source="print(-y)")
    assert [entry.operation for entry in store.undo_entries(store.ref(path))] == ["update_cell"]
    undone = open_document(store.ref(path), store).undo()
    assert (undone.operation, undone.remaining) == ("update_cell", 0)
    assert Document.load(path).cell("show").source == "# show\nprint(y)"
