"""Outputs streamed into a live cell (``CollabStore.live_outputs``): the iopub rules on a
shared document in memory, then through a real collaborative room with a person watching and
deleting the cell."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from collab_helpers import Person, wait_until
from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._collab_outputs import LiveRoomCell
from jupyter_jcli.notebook.store import CollabStore
from server_helpers import RunningServer, running_server, write_notebook


class _Room:
    """A shared notebook document in memory, with what a sink needs of a room."""

    def __init__(self, cells: list[dict[str, Any]]) -> None:
        from jupyter_ydoc import YNotebook

        self.lock = threading.RLock()
        self.notebook = YNotebook()
        self.doc = self.notebook.ydoc
        self.notebook.set({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})
        self.flushed = 0

    def flush(self) -> None:
        self.flushed += 1

    def cell(self, index: int) -> dict[str, Any]:
        return self.notebook.get()["cells"][index]


def _code(cell_id: str, source: str = "print(1)") -> dict[str, Any]:
    return {
        "cell_type": "code",
        "id": cell_id,
        "metadata": {},
        "source": source,
        "outputs": [{"output_type": "stream", "name": "stdout", "text": "old\n"}],
        "execution_count": 3,
    }


def _sink(room: _Room, cell_id: str = "c2") -> LiveRoomCell:
    return LiveRoomCell(room, cell_id, where="demo")  # type: ignore[arg-type]


def test_entering_marks_the_cell_running_and_clears_its_outputs() -> None:
    room = _Room([_code("c1"), _code("c2")])
    with _sink(room):
        ycell = room.notebook.ycells[1]
        assert ycell["execution_state"] == "running"
        assert room.cell(1)["outputs"] == [] and room.cell(1)["execution_count"] is None
        assert room.cell(0)["outputs"] != []
    assert room.notebook.ycells[1]["execution_state"] == "idle"


def test_stream_chunks_of_one_name_merge_into_one_output() -> None:
    room = _Room([_code("c2")])
    with _sink(room) as sink:
        sink.message("stream", {"name": "stdout", "text": "a\n"})
        sink.message("stream", {"name": "stdout", "text": "b\n"})
        sink.message("stream", {"name": "stderr", "text": "oops\n"})
        sink.message("stream", {"name": "stdout", "text": "c\n"})
    assert room.cell(0)["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": "a\nb\n"},
        {"output_type": "stream", "name": "stderr", "text": "oops\n"},
        {"output_type": "stream", "name": "stdout", "text": "c\n"},
    ]


def test_displays_results_and_errors_are_appended_and_a_display_is_updated_by_its_id() -> None:
    room = _Room([_code("c2")])
    with _sink(room) as sink:
        sink.message("execute_input", {"code": "x", "execution_count": 7})
        shown = {"data": {"text/plain": "0%"}, "metadata": {}, "transient": {"display_id": "p"}}
        sink.message("display_data", shown)
        sink.message("execute_result", {"data": {"text/plain": "1"}, "metadata": {},
                                        "execution_count": 7})  # fmt: skip
        update = {"data": {"text/plain": "100%"}, "metadata": {}, "transient": {"display_id": "p"}}
        sink.message("update_display_data", update)
        sink.message("error", {"ename": "E", "evalue": "v", "traceback": ["t"]})
    cell = room.cell(0)
    assert cell["execution_count"] == 7
    assert [output["output_type"] for output in cell["outputs"]] == [
        "display_data",
        "execute_result",
        "error",
    ]
    assert cell["outputs"][0] == {
        "output_type": "display_data",
        "data": {"text/plain": "100%"},
        "metadata": {},
    }


def test_clear_output_now_or_just_before_the_next_output() -> None:
    room = _Room([_code("c2")])
    with _sink(room) as sink:
        sink.message("stream", {"name": "stdout", "text": "1\n"})
        sink.message("clear_output", {"wait": True})
        assert len(room.cell(0)["outputs"]) == 1  # still shown until the next output
        sink.message("stream", {"name": "stdout", "text": "2\n"})
        assert room.cell(0)["outputs"][0]["text"] == "2\n"
        sink.message("clear_output", {"wait": False})
        assert room.cell(0)["outputs"] == []


def test_finish_leaves_the_final_outputs_once() -> None:
    room = _Room([_code("c2")])
    final = [{"output_type": "stream", "name": "stdout", "text": "a\nb\n"}]
    with _sink(room) as sink:
        sink.message("stream", {"name": "stdout", "text": "a\n"})
        sink.message("stream", {"name": "stdout", "text": "b\n"})
        sink.finish(final, 4)
    assert (room.cell(0)["outputs"], room.cell(0)["execution_count"]) == (final, 4)
    assert room.flushed == 1


def test_a_deleted_cell_gets_nothing_and_no_other_cell_does() -> None:
    room = _Room([_code("c1"), _code("c2"), _code("c3")])
    with _sink(room) as sink:
        sink.message("stream", {"name": "stdout", "text": "a\n"})
        del room.notebook.ycells[1]
        sink.message("stream", {"name": "stdout", "text": "b\n"})
        sink.finish([{"output_type": "stream", "name": "stdout", "text": "a\nb\n"}], 1)
        assert sink.lost
    assert [cell["id"] for cell in room.notebook.get()["cells"]] == ["c1", "c3"]
    assert all(cell["outputs"][0]["text"] == "old\n" for cell in room.notebook.get()["cells"])


def test_a_cell_that_moved_is_still_found_by_its_id() -> None:
    room = _Room([_code("c1"), _code("c2")])
    with _sink(room) as sink:
        del room.notebook.ycells[0]
        room.notebook.ycells.append(room.notebook.create_ycell(_code("c1")))
        sink.message("stream", {"name": "stdout", "text": "here\n"})
    assert room.cell(0)["id"] == "c2" and room.cell(0)["outputs"][0]["text"] == "here\n"


def test_no_code_cell_of_that_id_is_cell_not_found() -> None:
    room = _Room([_code("c1")])
    with pytest.raises(NotebookError) as caught, _sink(room, "nope"):
        pass
    assert caught.value.code == ErrorCode.CELL_NOT_FOUND


# ---------------------------------------------------------------------- through a real room


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("collab-root")
    with running_server(root, tmp_path_factory.mktemp("collab-work")) as running:
        yield running


@pytest.mark.server
def test_the_person_sees_each_chunk_as_it_streams_and_the_final_outputs_once(
    server: RunningServer, tmp_path: Path
) -> None:
    name = write_notebook(server.root, ["x = 1", "print(x)"], name=tmp_path.name).name
    with CollabStore(server.url, server.token, timeout=20.0) as store:
        ref = store.ref(name)
        cell_id = store.read(ref).notebook["cells"][1]["id"]
        person = Person(server.url, server.token, name)
        try:

            def outputs(them: Person) -> list[Any]:
                return list(them.notebook()["cells"][1].get("outputs", []))

            with store.live_outputs(ref, cell_id) as sink:
                sink.message("stream", {"name": "stdout", "text": "one\n"})
                person.wait_for(lambda them: [o.get("text") for o in outputs(them)] == ["one\n"])
                sink.message("stream", {"name": "stdout", "text": "two\n"})
                person.wait_for(lambda them: outputs(them)[0].get("text") == "one\ntwo\n")
                final = [{"output_type": "stream", "name": "stdout", "text": "one\ntwo\n"}]
                sink.finish(final, 1)
            person.wait_for(lambda them: them.notebook()["cells"][1]["execution_count"] == 1)
            assert outputs(person) == final
        finally:
            person.close()


@pytest.mark.server
def test_outputs_of_a_cell_the_person_deleted_land_nowhere(
    server: RunningServer, tmp_path: Path
) -> None:
    name = write_notebook(server.root, ["a = 1", "b = 2", "c = 3"], name=tmp_path.name).name
    with CollabStore(server.url, server.token, timeout=20.0) as store:
        ref = store.ref(name)
        cell_id = store.read(ref).notebook["cells"][1]["id"]
        person = Person(server.url, server.token, name)
        try:
            with store.live_outputs(ref, cell_id) as sink:
                sink.message("stream", {"name": "stdout", "text": "before\n"})
                person.wait_for(lambda them: len(them.sources()) == 3)
                person.delete(1)
                wait_until(lambda: len(store.read(ref).notebook["cells"]) == 2)
                sink.message("stream", {"name": "stdout", "text": "after\n"})
                sink.finish([{"output_type": "stream", "name": "stdout", "text": "x"}], 2)
                assert sink.lost
            cells = store.read(ref).notebook["cells"]
            assert [cell["source"] for cell in cells] == ["a = 1", "c = 3"]
            assert all(cell["outputs"] == [] for cell in cells)
        finally:
            person.close()
