"""A room's document without a server: the converted cells it keeps follow every remote
transaction, and a document of another jupyter-ydoc schema is refused."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._collab_protocol import check_schema
from jupyter_jcli.notebook._collab_room import LoopThread, Room


@pytest.fixture
def room() -> Iterator[Room]:
    loop = LoopThread()
    made = Room(loop, "http://127.0.0.1:1/", None, "demo.ipynb", 5.0)
    yield made
    loop.stop()


def _cells(count: int) -> list[dict[str, Any]]:
    made = []
    for index in range(count):
        cell = {"cell_type": "code", "id": f"c{index}", "metadata": {}, "source": f"x = {index}"}
        made.append({**cell, "outputs": [], "execution_count": None})
    return made


def _person(room: Room, cells: list[dict[str, Any]]) -> Any:
    """Another client's notebook, synced into the room's document."""
    from jupyter_ydoc import YNotebook

    theirs = YNotebook()
    theirs.set({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells})
    _sync(room, theirs)
    return theirs


def _sync(room: Room, theirs: Any) -> None:
    with room.lock:
        room.doc.apply_update(theirs.ydoc.get_update(room.doc.get_state()))


def test_the_converted_cells_follow_remote_transactions(room: Room) -> None:
    theirs = _person(room, _cells(6))
    with room.lock:
        assert room.cells() == theirs.get()["cells"]
    with theirs.ydoc.transaction():
        theirs.ycells[4]["source"].insert(0, "# typed\n")
        del theirs.ycells[1]
        theirs.ycells.insert(2, theirs.create_ycell(_cells(9)[8]))
        theirs.ycells[0]["metadata"]["tags"] = ["a"]
    _sync(room, theirs)
    with room.lock:
        assert room.cells() == theirs.get()["cells"]
    with theirs.ydoc.transaction():  # as many cells as before: only the changes tell
        theirs.ycells[3]["outputs"].append({"output_type": "stream", "name": "stdout",
                                            "text": "hi\n"})  # fmt: skip
    _sync(room, theirs)
    with room.lock:
        assert room.cells() == theirs.get()["cells"]


def test_a_document_of_another_schema_is_refused(room: Room) -> None:
    from pycrdt import Map

    theirs = _person(room, _cells(2))
    with theirs.ydoc.transaction():  # a stream output as jupyter-ydoc 2 kept it: plain text
        theirs.ycells[0]["outputs"].append(
            Map({"output_type": "stream", "name": "stdout", "text": "old schema\n"})
        )
    _sync(room, theirs)
    with pytest.raises(NotebookError) as caught:
        check_schema(room)
    assert caught.value.code == ErrorCode.COLLAB_VERSION_MISMATCH


def test_a_document_of_our_schema_is_accepted(room: Room) -> None:
    _person(room, _cells(3))
    check_schema(room)
