"""A Workbench over a store that is not the local disk (issue 24, item 4): every read, edit,
undo and output write of its operations goes through the store (the in-memory
``notebook.testing.MemoryStore``), kernels are the in-process fake
(``kernel_fakes.python_backend``), and a store offering ``live_outputs`` is fed each
output of a running cell (``notebook.live``). Every wait is bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.kernels import KernelPool
from jupyter_jcli.notebook.live import LiveOutputs
from jupyter_jcli.notebook.store import NotebookRef
from jupyter_jcli.notebook.stores import StoreChoice
from jupyter_jcli.notebook.testing import MemoryStore
from jupyter_jcli.workbench import (
    Workbench,
    add_cell,
    create_notebook,
    undo_last,
    update_cell,
)
from kernel_fakes import python_backend

pytestmark = pytest.mark.anyio

WAIT = 60.0
PATH = "work/demo.ipynb"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _cell(source: str, index: int) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "id": f"c{index}",
        "metadata": {},
        "source": source,
        "outputs": [],
        "execution_count": None,
    }


def _notebook(*sources: str) -> dict[str, Any]:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "cells": [_cell(source, i) for i, source in enumerate(sources)],
    }


class LiveMemoryStore(MemoryStore):
    """A MemoryStore that records what a run streams into its live cells."""

    def __init__(self, notebooks: dict[str, dict[str, Any]]) -> None:
        super().__init__(notebooks)
        self.events: list[tuple[str, str, object]] = []

    def live_outputs(
        self,
        ref: NotebookRef,
        cell_id: str | None,
        *,
        index: int | None = None,
        rev: str | None = None,
    ) -> _Sink:
        return _Sink(self.events, cell_id or f"#{index}")


class _Sink:
    """A ``notebook.live.LiveCell`` that records what it is given."""

    delivered = False  # the memory store's commit writes the outputs

    def __init__(self, events: list[tuple[str, str, object]], cell_id: str) -> None:
        self.events, self.cell_id = events, cell_id

    def __enter__(self) -> _Sink:
        self.events.append((self.cell_id, "running", None))
        return self

    def __exit__(self, *exc: object) -> None:
        self.events.append((self.cell_id, "idle", None))

    def message(self, msg_type: str, content: dict[str, Any]) -> None:
        self.events.append((self.cell_id, msg_type, dict(content)))

    def finish(self, outputs: list[dict[str, Any]], execution_count: int | None) -> None:
        self.events.append((self.cell_id, "finish", (outputs, execution_count)))


def _workbench(store: MemoryStore, tmp_path: Path) -> Workbench:
    pool = KernelPool(backend_factory=python_backend)
    return Workbench(cache_dir=tmp_path / "cache", pool=pool, store=store)


@pytest.fixture
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A current folder with no notebook in it: nothing may be read from or written to disk."""
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    assert not (tmp_path / "work").exists()


async def test_a_workbench_reads_edits_and_undoes_through_its_store(elsewhere: Path) -> None:
    store = MemoryStore({PATH: _notebook("x = 1", "y = x + 1")})
    ref = NotebookRef("memory", PATH)
    async with _workbench(store, elsewhere) as wb:
        with anyio.fail_after(WAIT):
            overview = await wb.notebook_overview(PATH)
        first, second = overview.cells
        assert [cell.status for cell in overview.cells] == ["never_run", "never_run"]
        with wb.warm():
            edited = update_cell(PATH, first.name, expected_rev=first.rev, source="x = 2")
            assert edited.stale == (second.name,) or second.name in edited.stale
            with pytest.raises(JcliError) as caught:
                update_cell(PATH, first.name, expected_rev=first.rev, source="x = 3")
            assert caught.value.code == ErrorCode.REV_MISMATCH
            add_cell(PATH, "z = 0")
        assert [c["source"] for c in store.read(ref).notebook["cells"]] == [
            "x = 2",
            "y = x + 1",
            "z = 0",
        ]
        with wb.warm():
            undone = undo_last(PATH)
        assert undone.operation == "add_cell"
        assert len(store.read(ref).notebook["cells"]) == 2
        assert len(store.undo_entries(ref)) == 1


async def test_an_edit_by_someone_else_in_the_store_refuses_a_stale_rev(elsewhere: Path) -> None:
    store = MemoryStore({PATH: _notebook("x = 1")})
    ref = NotebookRef("memory", PATH)
    async with _workbench(store, elsewhere) as wb:
        with anyio.fail_after(WAIT):
            (cell,) = (await wb.notebook_overview(PATH)).cells
        store.replace(ref, _notebook("x = 100"))  # the person's edit
        with wb.warm(), pytest.raises(JcliError) as caught:
            update_cell(PATH, cell.name, expected_rev=cell.rev, source="x = 2")
        assert caught.value.code == ErrorCode.REV_MISMATCH
        assert store.read(ref).notebook["cells"][0]["source"] == "x = 100"


async def test_run_stale_writes_the_outputs_through_the_store(elsewhere: Path) -> None:
    store = MemoryStore({PATH: _notebook("x = 20", "print(x + 1)")})
    ref = NotebookRef("memory", PATH)
    async with _workbench(store, elsewhere) as wb:
        with anyio.fail_after(WAIT):
            outcome = await wb.run_stale(PATH)
            assert outcome.ok
            overview = await wb.notebook_overview(PATH)
        assert [cell.status for cell in overview.cells] == ["fresh", "fresh"]
        cells = store.read(ref).notebook["cells"]
        assert "".join(cells[1]["outputs"][0]["text"]) == "21\n"
        assert cells[1]["execution_count"] is not None
        with wb.warm():
            update_cell(
                PATH, overview.cells[0].name, expected_rev=overview.cells[0].rev, source="x = 1"
            )
        with anyio.fail_after(WAIT):
            statuses = [cell.status for cell in (await wb.notebook_overview(PATH)).cells]
            rerun = await wb.run_stale(PATH)
        assert statuses == ["stale", "stale"]
        assert [cell.name for cell in rerun.cells] == [cell.name for cell in overview.cells]
        assert "".join(store.read(ref).notebook["cells"][1]["outputs"][0]["text"]) == "2\n"


async def test_a_store_with_live_outputs_is_fed_each_output_while_the_cell_runs(
    elsewhere: Path,
) -> None:
    store = LiveMemoryStore({PATH: _notebook("print('a')\nprint('b')\n7")})
    assert isinstance(store, LiveOutputs)
    async with _workbench(store, elsewhere) as wb:
        with anyio.fail_after(WAIT):
            assert (await wb.run_stale(PATH)).ok
    kinds = [kind for cell_id, kind, _ in store.events if cell_id == "c0"]
    streamed = "".join(
        str(value["text"])  # type: ignore[index]
        for _, kind, value in store.events
        if kind == "stream"
    )
    assert streamed == "a\nb\n"
    assert kinds[0] == "running" and "execute_result" in kinds
    assert kinds[-2:] == ["finish", "idle"]
    outputs = store.read(NotebookRef("memory", PATH)).notebook["cells"][0]["outputs"]
    assert [output["output_type"] for output in outputs] == ["stream", "execute_result"]
    final, count = store.events[-2][2]  # type: ignore[misc]
    assert [output["output_type"] for output in final] == ["stream", "execute_result"]
    assert count is not None


async def test_create_notebook_creates_it_in_the_store(elsewhere: Path) -> None:
    store = MemoryStore({PATH: _notebook("x = 1")})
    async with _workbench(store, elsewhere) as wb:
        with wb.warm():
            created = create_notebook("work/new.ipynb", cells=[{"source": "y = 2"}])
            with pytest.raises(JcliError) as caught:
                create_notebook(PATH)
        assert caught.value.code == ErrorCode.FILE_EXISTS
        assert [cell.name for cell in created.cells] == [
            cell.name for cell in (await wb.notebook_overview("work/new.ipynb")).cells
        ]
    cells = store.read(NotebookRef("memory", "work/new.ipynb")).notebook["cells"]
    assert [cell["source"] for cell in cells] == ["y = 2"]


class ServerLikeStore(MemoryStore):
    """A MemoryStore whose refs are those of a server store (kind ``contents``): paths are
    mapped relative to the choice's server root, as for the contents API's store."""

    kind = "contents"


async def test_a_server_store_notebook_is_reloaded_by_its_ref_after_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, here = tmp_path / "root", tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)  # the current folder is not the server's root
    store = ServerLikeStore()
    store.create(NotebookRef("contents", "sub/nb.ipynb"), _notebook("print(3)"))
    choice = StoreChoice.of(store, path_root=root)
    pool = KernelPool(backend_factory=python_backend)
    async with Workbench(cache_dir=tmp_path / "cache", pool=pool, store=choice) as wb:
        with anyio.fail_after(WAIT):
            ran = await wb.run_stale(root / "sub" / "nb.ipynb")
        assert ran.ok
        assert wb._kernel_path((await wb._load(root / "sub" / "nb.ipynb")).document) == (
            root / "sub" / "nb.ipynb"
        )
    cells = store.read(NotebookRef("contents", "sub/nb.ipynb")).notebook["cells"]
    assert "".join(cells[0]["outputs"][0]["text"]) == "3\n"
    assert not root.exists()


def test_a_server_stores_kernels_run_on_its_server(tmp_path: Path) -> None:
    choice = StoreChoice("collab", server_url="http://127.0.0.1:9", token="t", environ={})
    workbench = Workbench(cache_dir=tmp_path / "cache", store=choice)
    assert workbench.server is not None
    assert (workbench.server.url, workbench.server.token) == ("http://127.0.0.1:9/", "t")
    local = Workbench(cache_dir=tmp_path / "cache", store=StoreChoice("local", environ={}))
    assert local.server is None
