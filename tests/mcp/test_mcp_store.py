"""``jupyter-mcp`` over a store that is not the local disk (issue 24, item 4), in process
through the MCP SDK's client: the server runs under an active ``notebook.stores`` choice of
an in-memory store (``notebook.testing.MemoryStore``; what ``--store`` gives it), so every
tool reads, edits, undoes, runs and reads saved outputs through the store, and a notebook
of the store is not confined by the local roots (no file exists under them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from memory_client import WAIT_SECONDS, in_process_env, open_in_process
from workbench_client import error_code, ok

from jupyter_jcli.kernels import KernelPool
from jupyter_jcli.mcp import workbench as workbench_server
from jupyter_jcli.mcp._roots import roots_from_paths
from jupyter_jcli.notebook.store import NotebookRef
from jupyter_jcli.notebook.stores import StoreChoice, using_store
from jupyter_jcli.notebook.testing import MemoryStore
from jupyter_jcli.workbench import Workbench
from kernel_fakes import python_backend

pytestmark = pytest.mark.anyio

PATH = "work/demo.ipynb"
REF = NotebookRef("memory", PATH)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _notebook(*sources: str) -> dict[str, Any]:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "outputs": [], "execution_count": None}
        for i, source in enumerate(sources)
    ]  # fmt: skip
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}


async def test_the_workbench_tools_work_through_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    in_process_env(monkeypatch, tmp_path / "cache")
    root = tmp_path / "root"
    root.mkdir()
    store = MemoryStore({PATH: _notebook("x = 20", "print(x + 1)")})
    choice = StoreChoice.of(store)
    with using_store(choice), anyio.fail_after(WAIT_SECONDS):
        pool = KernelPool(backend_factory=python_backend)
        async with Workbench(cache_dir=tmp_path / "cache", pool=pool, store=choice) as wb:
            server = workbench_server.build_server(roots_from_paths([root]), wb)
            async with wb.background, open_in_process(server) as session:
                overview = await ok(session, "notebook_overview", path=PATH)
                first = overview["cells"][0]
                await ok(session, "update_cell", path=PATH, name=first["name"],
                         expected_rev=first["rev"], source="x = 1")  # fmt: skip
                stale = await error_code(session, "update_cell", path=PATH, name=first["name"],
                                         expected_rev=first["rev"], source="x = 2")  # fmt: skip
                assert stale == "REV_MISMATCH"
                await ok(session, "undo_last", path=PATH)
                assert store.read(REF).notebook["cells"][0]["source"] == "x = 20"
                ran = await ok(session, "run_stale", path=PATH)
                assert [cell["status"] for cell in ran["cells"]] == ["ok", "ok"]
                listed = await ok(session, "read_notebook_output", file_path=PATH, cell_index=1)
                assert listed["source"]["cell_index"] == 1
    outputs = store.read(REF).notebook["cells"][1]["outputs"]
    assert "".join(outputs[0]["text"]) == "21\n"
    assert not (root / "work").exists()
