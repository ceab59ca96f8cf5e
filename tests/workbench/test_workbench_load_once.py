"""Load once per operation: each Workbench call reads and parses its notebook at most once,
analyses it at most once, and a warm workbench neither reads nor analyses an unchanged
notebook again (spies on ``read_target`` and ``build_graph``; the in-process fake kernel)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from wb_helpers import fake_workbench, make_notebook

from jupyter_jcli.notebook import _loaded
from jupyter_jcli.workbench import Workbench, update_cell
from jupyter_jcli.workbench import _load as workbench_load

pytestmark = pytest.mark.anyio

CALL_TIMEOUT = 60
SOURCES = ["a = 1", "b = a + 1", "print(b)"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How many times a notebook was read and parsed, and a graph built."""
    seen = {"parses": 0, "graphs": 0}
    read_target, build_graph = _loaded.read_target, workbench_load.build_graph

    def parse(*args: Any, **kwargs: Any) -> Any:
        seen["parses"] += 1
        return read_target(*args, **kwargs)

    def graph(*args: Any, **kwargs: Any) -> Any:
        seen["graphs"] += 1
        return build_graph(*args, **kwargs)

    monkeypatch.setattr(_loaded, "read_target", parse)
    monkeypatch.setattr(workbench_load, "build_graph", graph)
    return seen


@pytest.fixture
async def wb(cache: Path) -> AsyncIterator[Workbench]:
    async with fake_workbench(cache) as workbench:
        yield workbench


def _unique(work: Path, name: str) -> Path:
    # a source no other test analyses: graphs are kept by content across workbenches
    return make_notebook(work, [*SOURCES, f"marker = {name!r}"], name=name)


async def test_run_stale_reads_and_analyses_the_notebook_once(
    wb: Workbench, work: Path, counts: dict[str, int]
) -> None:
    path = _unique(work, "run-stale-once")
    with anyio.fail_after(CALL_TIMEOUT):
        outcome = await wb.run_stale(path)
    assert [cell.status for cell in outcome.cells] == ["ok"] * 4
    assert outcome.written and not outcome.still_stale
    assert counts == {"parses": 1, "graphs": 1}


async def test_a_dry_run_and_the_reads_on_a_warm_workbench_parse_nothing_again(
    wb: Workbench, work: Path, counts: dict[str, int]
) -> None:
    path = _unique(work, "reads-once")
    with anyio.fail_after(CALL_TIMEOUT):
        overview = await wb.notebook_overview(path)
        assert counts == {"parses": 1, "graphs": 1}
        plan = await wb.run_stale(path, dry_run=True)
        read = await wb.read_cells(path, names=[overview.cells[1].name])
        await wb.notebook_overview(path)
    assert list(plan.plan) == [cell.name for cell in overview.cells]
    assert read.cells[0].source == SOURCES[1]
    assert counts == {"parses": 1, "graphs": 1}


async def test_an_edit_through_the_warm_workbench_is_seen_by_the_next_read(
    wb: Workbench, work: Path, counts: dict[str, int]
) -> None:
    path = _unique(work, "edit-warm")
    with anyio.fail_after(CALL_TIMEOUT):
        overview = await wb.notebook_overview(path)
        target = overview.cells[1]
        with wb.warm():
            edited = await anyio.to_thread.run_sync(
                lambda: update_cell(path, target.name, expected_rev=target.rev, source="b = 2")
            )
        read = await wb.read_cells(path, names=[target.name])
        plan = await wb.run_stale(path, dry_run=True)
    assert edited.cell is not None and read.cells[0].rev == edited.cell.rev
    assert read.cells[0].source == "b = 2"
    assert target.name in plan.plan
    assert counts["parses"] == 1
