"""The workbench loads a notebook by its store ref: a notebook of the in-memory store gives
the same document and graph as a file would, and its edits go through the store."""

from __future__ import annotations

from typing import Any

import pytest

from jupyter_jcli.errors import ErrorCode, UsageError
from jupyter_jcli.notebook.store import NotebookRef
from jupyter_jcli.notebook.testing import MemoryStore
from jupyter_jcli.workbench import _load as workbench_load


def _notebook() -> dict[str, Any]:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "outputs": [], "execution_count": None}
        for i, source in enumerate(["# data\nx = 1", "# double\ny = x * 2", "# show\nprint(y)"])
    ]  # fmt: skip
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}


def test_a_notebook_of_the_memory_store_loads_with_its_graph() -> None:
    store = MemoryStore()
    ref = NotebookRef("memory", "demo.ipynb")
    store.create(ref, _notebook())
    loaded = workbench_load.load(ref, store=store)
    assert [view.name for view in loaded.cells] == ["data", "double", "show"]
    assert loaded.graph.parents("show") == ["double"]
    loaded.document.update_cell("double", expected_rev=loaded.cells[1].rev, source="z = 0")
    assert store.read(ref).notebook["cells"][1]["source"] == "z = 0"
    again = workbench_load.load(ref, store=store)
    assert again.graph.parents("show") == []


def test_a_ref_of_another_store_is_refused() -> None:
    with pytest.raises(UsageError) as caught:
        workbench_load.load(NotebookRef("memory", "demo.ipynb"))
    assert caught.value.code == ErrorCode.USAGE_ERROR
