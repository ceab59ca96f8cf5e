"""The collaborative store on a real Jupyter Server with jupyter-collaboration, the person
played by jupyter-nbmodel-client (``collab_helpers.Person``): issue 24's table reversed to what
must happen, and the faults of its item 5 at store level."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collab_helpers import Person, wait_until
from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.snapshots import CACHE_DIR_ENV
from jupyter_jcli.notebook.store import (
    CollabStore,
    NotebookRef,
    SetSource,
    StoreChange,
    rev_of,
)
from jupyter_jcli.notebook.testing import open_document
from server_helpers import NO_COLLABORATION, RunningServer, running_server, write_notebook

pytestmark = pytest.mark.server

SOURCES = ["# load\nx = 1", "# double\ny = x * 2", "# show\nprint(y)"]


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("collab-root")
    with running_server(root, tmp_path_factory.mktemp("collab-work")) as running:
        yield running


@pytest.fixture
def name(server: RunningServer, tmp_path: Path) -> str:
    """A fresh notebook on disk that nobody has open yet."""
    return write_notebook(server.root, SOURCES, name=tmp_path.name).name


@pytest.fixture
def store(server: RunningServer) -> Iterator[CollabStore]:
    with CollabStore(server.url, server.token, timeout=20.0) as opened:
        yield opened


@pytest.fixture
def person(server: RunningServer, name: str, store: CollabStore) -> Iterator[Person]:
    store.read(store.ref(name))  # the room is open: the person joins it
    joined = Person(server.url, server.token, name)
    yield joined
    joined.close()


def _disk(server: RunningServer, name: str) -> list[str] | None:
    """The sources saved in the file (``None`` while the server is writing it)."""
    try:
        notebook = json.loads((server.root / name).read_text(encoding="utf-8"))
    except ValueError:
        return None
    return ["".join(cell["source"]) for cell in notebook["cells"]]


def _live(store: CollabStore, ref: NotebookRef) -> list[str]:
    return ["".join(cell["source"]) for cell in store.read(ref).notebook["cells"]]


# ---------------------------------------------------------------------- the table, reversed


def test_a_persons_typing_just_before_our_edit_of_another_cell_is_kept_live_and_on_disk(
    server: RunningServer, name: str, store: CollabStore, person: Person
) -> None:
    ref = store.ref(name)
    document = open_document(ref, store)  # read before the person types
    rev = document.cell("show").rev
    person.type(0, "\nz = 0")
    document.update_cell("show", expected_rev=rev, source="# show\nprint(y, z)")
    wanted = ["# load\nx = 1\nz = 0", SOURCES[1], "# show\nprint(y, z)"]
    person.wait_for(lambda them: them.sources() == wanted)
    wait_until(lambda: _live(store, ref) == wanted)
    wait_until(lambda: _disk(server, name) == wanted)  # the server's save


def test_typing_during_our_edits_is_never_lost(
    server: RunningServer, name: str, store: CollabStore, person: Person
) -> None:
    ref = store.ref(name)
    document = open_document(ref, store)
    typist = threading.Thread(target=person.type, args=(0, "#" * 200))
    typist.start()
    for number in range(5):
        document.update_cell("show", expected_rev=document.cell("show").rev,
                             source=f"# show\nprint({number})")  # fmt: skip
    typist.join(30.0)
    wanted = ["# load\nx = 1" + "#" * 200, SOURCES[1], "# show\nprint(4)"]
    person.wait_for(lambda them: them.sources() == wanted)
    wait_until(lambda: _live(store, ref) == wanted)
    wait_until(lambda: _disk(server, name) == wanted)


def test_we_read_the_persons_unsaved_change(name: str, store: CollabStore, person: Person) -> None:
    ref = store.ref(name)
    person.set_source(1, "# double\ny = x * 20")
    wait_until(lambda: _live(store, ref)[1] == "# double\ny = x * 20")
    assert open_document(ref, store).cell("double").source == "# double\ny = x * 20"


def test_our_stale_edit_of_the_cell_the_person_changed_is_refused_with_the_live_source(
    name: str, store: CollabStore, person: Person
) -> None:
    ref = store.ref(name)
    document = open_document(ref, store)
    rev = document.cell("double").rev
    person.set_source(1, "# double\ny = x * 20")
    wait_until(lambda: _live(store, ref)[1] == "# double\ny = x * 20")
    with pytest.raises(NotebookError) as caught:
        document.update_cell("double", expected_rev=rev, source="# double\ny = 0")
    assert caught.value.code == ErrorCode.REV_MISMATCH
    assert caught.value.details["source"] == "# double\ny = x * 20"
    assert person.sources()[1] == "# double\ny = x * 20"
    assert _live(store, ref)[1] == "# double\ny = x * 20"


def test_a_stale_store_commit_on_the_changed_cell_changes_nothing(
    name: str, store: CollabStore, person: Person
) -> None:
    ref = store.ref(name)
    read = store.read(ref)
    person.set_source(1, "theirs")
    wait_until(lambda: _live(store, ref)[1] == "theirs")
    current = store.read(ref)
    old_rev = rev_of(read.notebook["cells"][1])
    with pytest.raises(NotebookError) as caught:  # at the live version, with the old rev
        store.commit(ref, StoreChange(current.version, [SetSource(1, old_rev, "ours")]))
    assert caught.value.code == ErrorCode.WRITE_CONFLICT
    assert caught.value.details["reason"] == "cell_changed"
    assert store.read(ref) == current


def test_our_edit_and_new_cell_reach_the_persons_client(
    name: str, store: CollabStore, person: Person
) -> None:
    document = open_document(store.ref(name), store)
    document.add_cell("# agent\nw = 3", after="double", expected_rev=document.cell("double").rev)
    wanted = [SOURCES[0], SOURCES[1], "# agent\nw = 3", SOURCES[2]]
    person.wait_for(lambda them: them.sources() == wanted)
    cells = person.notebook()["cells"]
    assert cells[2]["metadata"]["jupyter_mcp"]["name"] == "agent"


def test_undo_on_the_live_document_keeps_the_persons_later_edits(
    name: str, store: CollabStore, person: Person
) -> None:
    ref = store.ref(name)
    document = open_document(ref, store)
    document.update_cell("show", expected_rev=document.cell("show").rev, source="print(-y)")
    person.wait_for(lambda them: them.sources()[2] == "print(-y)")
    person.set_source(0, "# load\nx = 5")
    wait_until(lambda: _live(store, ref)[0] == "# load\nx = 5")
    assert document.undo().operation == "update_cell"
    wanted = ["# load\nx = 5", SOURCES[1], SOURCES[2]]
    person.wait_for(lambda them: them.sources() == wanted)


def test_undo_over_the_persons_edit_of_the_same_cell_is_a_conflict(
    name: str, store: CollabStore, person: Person
) -> None:
    ref = store.ref(name)
    document = open_document(ref, store)
    document.update_cell("show", expected_rev=document.cell("show").rev, source="print(-y)")
    person.wait_for(lambda them: them.sources()[2] == "print(-y)")
    person.set_source(2, "print('theirs')")
    wait_until(lambda: _live(store, ref)[2] == "print('theirs')")
    with pytest.raises(NotebookError) as caught:
        document.undo()
    assert caught.value.code == ErrorCode.UNDO_CONFLICT
    assert person.sources()[2] == "print('theirs')"


def test_a_notebook_nobody_has_open_is_opened_and_saved_by_the_server(
    server: RunningServer, name: str, store: CollabStore
) -> None:
    ref = store.ref(name)
    document = open_document(ref, store)
    document.update_cell("load", expected_rev=document.cell("load").rev, source="x = 2")
    wait_until(lambda: (_disk(server, name) or [""])[0] == "x = 2")


def test_create_makes_a_notebook_through_the_server_and_never_replaces_one(
    server: RunningServer, store: CollabStore, tmp_path: Path
) -> None:
    ref = store.ref(f"sub-{tmp_path.name}.ipynb")
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
    notebook["cells"] = [{"cell_type": "markdown", "id": "m1", "metadata": {}, "source": "# hi"}]
    assert store.create(ref, notebook).notebook["cells"][0]["source"] == "# hi"
    assert (server.root / ref.path).is_file()
    with pytest.raises(NotebookError) as caught:
        store.create(ref, notebook)
    assert caught.value.code == ErrorCode.FILE_EXISTS


def test_a_missing_notebook_is_file_not_found(store: CollabStore) -> None:
    with pytest.raises(NotebookError) as caught:
        store.read(store.ref("nowhere.ipynb"))
    assert caught.value.code == ErrorCode.FILE_NOT_FOUND


def test_the_kernel_runs_on_the_server_in_the_notebooks_folder(store: CollabStore) -> None:
    place = store.kernel_place(store.ref("work/demo.ipynb"))
    assert (place.where, place.url, place.cwd) == ("server", store.base_url, "work")


def test_a_server_without_collaboration_is_refused_with_its_code(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root, SOURCES)
    with (
        running_server(root, tmp_path / "work", extra_args=NO_COLLABORATION) as plain,
        CollabStore(plain.url, plain.token, timeout=20.0) as store,
        pytest.raises(NotebookError) as caught,
    ):
        store.read(store.ref("nb.ipynb"))
    assert caught.value.code == ErrorCode.COLLAB_UNAVAILABLE


def test_a_wrong_token_is_refused_with_its_code(server: RunningServer, name: str) -> None:
    with (
        CollabStore(server.url, "not-the-token", timeout=20.0) as store,
        pytest.raises(NotebookError) as caught,
    ):
        store.read(store.ref(name))
    assert caught.value.code == ErrorCode.SERVER_AUTH_FAILED
    assert caught.value.details["server_url"].rstrip("/") == server.url.rstrip("/")


def test_two_agents_and_a_person_on_one_notebook_keep_every_edit(
    server: RunningServer, name: str, store: CollabStore, person: Person
) -> None:
    ref = store.ref(name)
    with CollabStore(server.url, server.token, timeout=20.0) as other:
        first, second = open_document(ref, store), open_document(ref, other)
        revs = (first.cell("load").rev, second.cell("show").rev, second.cell("load").rev)
        person.set_source(1, "# double\ny = x * 3")
        first.update_cell("load", expected_rev=revs[0], source="# load\nx = 7")
        second.update_cell("show", expected_rev=revs[1], source="# show\nprint(y + 1)")
        with pytest.raises(NotebookError) as caught:  # the same cell with the same old rev
            second.update_cell("load", expected_rev=revs[2], source="# load\nx = 8")
        assert caught.value.code == ErrorCode.REV_MISMATCH
        wanted = ["# load\nx = 7", "# double\ny = x * 3", "# show\nprint(y + 1)"]
        person.wait_for(lambda them: them.sources() == wanted)
        wait_until(lambda: _live(other, ref) == wanted)
        wait_until(lambda: _disk(server, name) == wanted)


# ---------------------------------------------------------------------- faults


def test_a_dropped_room_websocket_is_reopened_and_our_edit_lands_once(
    name: str, store: CollabStore, person: Person
) -> None:
    ref = store.ref(name)
    document = open_document(ref, store)
    store.room(ref).drop()
    document.update_cell("show", expected_rev=document.cell("show").rev, source="print(1)")
    store.room(ref).drop()
    document.update_cell("load", expected_rev=document.cell("load").rev, source="x = 9")
    wanted = ["x = 9", SOURCES[1], "print(1)"]
    person.wait_for(lambda them: them.sources() == wanted)
    assert _live(store, ref) == wanted


def test_a_drop_between_our_transaction_and_its_acknowledgement_resyncs_it_once(
    name: str, store: CollabStore, person: Person, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = store.ref(name)
    room = store.room(ref)
    flush = room.flush

    def dropped_then_flush() -> None:  # the connection goes down mid-edit
        room.drop()
        flush()

    monkeypatch.setattr(room, "flush", dropped_then_flush)
    document = open_document(ref, store)
    document.update_cell("show", expected_rev=document.cell("show").rev, source="print(3)")
    wanted = [SOURCES[0], SOURCES[1], "print(3)"]
    person.wait_for(lambda them: them.sources() == wanted)
    monkeypatch.undo()
    assert _live(store, ref) == wanted


def test_a_restarted_server_is_joined_afresh_and_an_old_version_is_refused(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    name = write_notebook(root, SOURCES).name
    with (
        running_server(root, tmp_path / "work") as restarting,
        CollabStore(restarting.url, restarting.token, timeout=30.0) as store,
    ):
        ref = store.ref(name)
        document = open_document(ref, store)
        before = store.read(ref)
        restarting.restart()
        assert _live(store, ref) == SOURCES  # one copy of each cell, from the saved file
        cell = before.notebook["cells"][0]
        with pytest.raises(NotebookError) as caught:
            store.commit(ref, StoreChange(before.version, [SetSource(0, rev_of(cell), "x = 0")]))
        assert caught.value.code == ErrorCode.WRITE_CONFLICT
        document.update_cell("show", expected_rev=document.cell("show").rev, source="print(2)")
        wait_until(lambda: (_disk(restarting, name) or [""] * 3)[2] == "print(2)")
        person = Person(restarting.url, restarting.token, name)
        try:
            assert person.sources() == [SOURCES[0], SOURCES[1], "print(2)"]
        finally:
            person.close()


def _cell_id(store: CollabStore, ref: NotebookRef, index: int) -> str:
    cell_id: Any = store.read(ref).notebook["cells"][index]["id"]
    return str(cell_id)


# ---------------------------------------------------------------------- the file moves away


def test_an_open_notebook_deleted_in_jupyterlab_is_file_not_found_and_nothing_is_kept(
    server: RunningServer, name: str, store: CollabStore
) -> None:
    # The room outlives its file (jupyter-collaboration keeps it while anyone is joined, its
    # saves failing): an edit into it reported ok and went nowhere (a trial's finding).
    ref = store.ref(name)
    document = open_document(ref, store)  # the room is joined and kept
    rev = document.cell("show").rev
    with server.client() as rest:
        assert rest.delete(f"api/contents/{name}").status_code == 204
    for attempt in (
        lambda: store.read(ref),
        lambda: open_document(ref, store).update_cell("show", expected_rev=rev, source="1"),
    ):
        with pytest.raises(NotebookError) as refused:
            attempt()
        assert refused.value.code == ErrorCode.FILE_NOT_FOUND
    assert not (server.root / name).exists()


def test_an_open_notebook_renamed_in_jupyterlab_is_still_ours_and_saved_at_its_new_path(
    server: RunningServer, name: str, store: CollabStore
) -> None:
    # The room follows its file: what we write goes on into the notebook the person now
    # sees under its new name (a run started before the rename finishes there).
    ref = store.ref(name)
    rev = open_document(ref, store).cell("show").rev
    moved = f"moved-{name}"
    with server.client() as rest:
        assert rest.patch(f"api/contents/{name}", json={"path": moved}).status_code == 200
    open_document(ref, store).update_cell("show", expected_rev=rev, source="print(0)")
    wanted = [*SOURCES[:2], "print(0)"]
    wait_until(lambda: _disk(server, moved) == wanted)
    assert _live(store, store.ref(moved)) == wanted
    assert not (server.root / name).exists()
    with CollabStore(server.url, server.token, timeout=20.0) as fresh:  # nobody kept it
        with pytest.raises(NotebookError) as refused:
            fresh.read(fresh.ref(name))
        assert refused.value.code == ErrorCode.FILE_NOT_FOUND


def test_a_new_notebook_at_a_deleted_ones_path_is_its_own_room(
    server: RunningServer, name: str, store: CollabStore
) -> None:
    ref = store.ref(name)
    open_document(ref, store)  # the old file's room is joined and kept
    with server.client() as rest:
        assert rest.delete(f"api/contents/{name}").status_code == 204
    write_notebook(server.root, ["fresh = 1"], name=name.removesuffix(".ipynb"))
    wait_until(lambda: _live_or_none(store, ref) == ["fresh = 1"])


def _live_or_none(store: CollabStore, ref: NotebookRef) -> list[str] | None:
    try:
        return _live(store, ref)
    except NotebookError:
        return None
