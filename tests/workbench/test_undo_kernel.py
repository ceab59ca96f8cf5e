"""Undo after a run: the outputs the kernels saved stay, and the statuses stay true.

``update_cell`` -> ``run_stale`` -> ``undo_last`` used to restore the whole file, wiping every
output of the run while the overview still called those cells fresh. The kernels are the
in-process fake (:func:`kernel_fakes.python_backend`). Every wait is bounded.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from wb_helpers import fake_workbench, make_notebook

from jupyter_jcli.notebook.document import Document
from jupyter_jcli.workbench import Workbench, undo_last, update_cell

pytestmark = pytest.mark.anyio

WAIT = 90.0


@pytest.fixture
async def two(cache: Path) -> AsyncIterator[tuple[Workbench, Workbench]]:
    """Two workbenches on one snapshot cache: two servers, each with its own kernel."""
    async with fake_workbench(cache) as first, fake_workbench(cache) as second:
        yield first, second


def _saved(path: Path) -> list[tuple[str, list[Any], int | None]]:
    """Each code cell's source, stream texts and execution count as saved in the file."""
    cells = json.loads(path.read_bytes())["cells"]
    return [
        (
            "".join(cell["source"]),
            ["".join(o.get("text", "")) for o in cell["outputs"]],
            cell["execution_count"],
        )
        for cell in cells
        if cell["cell_type"] == "code"
    ]


def _rev(path: Path, name: str) -> str:
    return Document.load(path).cell(name).rev


async def test_undo_after_run_stale_keeps_the_outputs_and_calls_the_reverted_cell_stale(
    two: tuple[Workbench, Workbench], work: Path, cache: Path
) -> None:
    wb, _other = two
    path = make_notebook(work, ["a = 1\nprint('a', a)", "b = a + 1\nprint('b', b)", "print('c')"])
    a, b, c = (view.name for view in Document.load(path).cells)
    with anyio.fail_after(WAIT):
        await wb.run_stale(path)
    update_cell(path, a, expected_rev=_rev(path, a), source="a = 10\nprint('a', a)")
    with anyio.fail_after(WAIT):
        rerun = await wb.run_stale(path)
    assert [cell.name for cell in rerun.cells] == [a, b]
    ran = _saved(path)

    undone = undo_last(path, cache_dir=cache)
    saved = _saved(path)
    assert [source for source, _o, _n in saved] == [
        "a = 1\nprint('a', a)",
        *(s for s, _o, _n in ran[1:]),
    ]
    assert [(outputs, count) for _s, outputs, count in saved] == [
        (outputs, count) for _s, outputs, count in ran
    ]
    assert undone.to_dict()["changed"] == [a]
    assert set(undone.to_dict()["stale"]) == {a, b}
    with anyio.fail_after(WAIT):
        statuses = dict((await wb.notebook_overview(path)).statuses)
    # a's restored source is not what last ran on the kernel (a = 10), so neither a nor its
    # dependent b is fresh; c ran and nothing it depends on changed.
    assert statuses == {a: "stale", b: "stale", c: "fresh"}
    with anyio.fail_after(WAIT):
        again = await wb.run_stale(path)
    assert [cell.name for cell in again.cells] == [a, b]
    assert _saved(path)[1][1] == ["b 2\n"]


async def test_one_undo_keeps_the_outputs_both_servers_saved(
    two: tuple[Workbench, Workbench], work: Path, cache: Path
) -> None:
    first, second = two
    path = make_notebook(work, ["x = 1\nprint('x', x)", "print('y')", "print('z')"])
    x, y, z = (view.name for view in Document.load(path).cells)
    update_cell(path, z, expected_rev=_rev(path, z), source="print('z2')")
    with anyio.fail_after(WAIT):
        await first.execute_cells(path, [x, z])
    with anyio.fail_after(WAIT):
        await second.execute_cells(path, [y])
    ran = _saved(path)
    assert [outputs for _s, outputs, _n in ran] == [["x 1\n"], ["y\n"], ["z2\n"]]

    undo_last(path, cache_dir=cache)
    saved = _saved(path)
    assert saved[2][0] == "print('z')"
    assert [(outputs, count) for _s, outputs, count in saved] == [
        (outputs, count) for _s, outputs, count in ran
    ]
    with anyio.fail_after(WAIT):
        assert dict((await first.notebook_overview(path)).statuses) == {
            x: "fresh",
            y: "never_run",
            z: "stale",
        }
    with anyio.fail_after(WAIT):
        assert dict((await second.notebook_overview(path)).statuses) == {
            x: "never_run",
            y: "fresh",
            z: "never_run",
        }
