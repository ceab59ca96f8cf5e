"""Re-running what is stale gives the state of a run from the top (issue 9, item 11), on the
in-process fake kernel (:func:`kernel_fakes.python_backend`, which runs the
cells with CPython's ``exec``: the values are real Python's).

Each case: run the notebook, edit one cell, ``run_stale``, read the variables; then restart
the kernel and run everything from the top, read them again: the two must be equal. The
notebooks are those of the analysis table ``reads_before_writes.yaml`` where the stale cell
reads a name before it writes it (in the cell, through a call of a function from another
cell, through a chain of writers). Every wait is bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from wb_helpers import fake_workbench, make_notebook

from jupyter_jcli.notebook.document import Document
from jupyter_jcli.workbench import Workbench, update_cell

pytestmark = pytest.mark.anyio

WAIT = 90.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass(frozen=True)
class Case:
    """``sources`` run from the top, then cell ``edit`` becomes ``new_source``; ``plan`` is
    the cells ``run_stale`` must run (indexes), ``names`` the variables compared."""

    id: str
    sources: tuple[str, ...]
    edit: int
    new_source: str
    plan: tuple[int, ...]
    names: tuple[str, ...]


CASES = [
    Case(
        "a_read_then_a_rebinding_in_one_cell",
        ("total = 10\nn = 2", "avg = total / n\ntotal = 0", "out = (avg, total)"),
        1,
        "avg = total / n + 1\ntotal = 0",
        (0, 1, 2),
        ("avg", "total", "out"),
    ),
    Case(
        "a_call_that_reads_a_global_the_cell_rebinds_after_it",
        ("total = 10", "def mean():\n    return total / 2", "avg = mean()\ntotal = 0", "out = avg"),
        2,
        "avg = mean() * 3\ntotal = 0",
        (0, 2, 3),
        ("avg", "total", "out"),
    ),
    Case(
        "calls_of_a_global_mutator_in_several_cells",
        (
            "steps = 0\nlog = []",
            "def tick():\n    global steps\n    steps += 1\n    log.append(steps)",
            "tick()",
            "tick()",
            "out = (steps, list(log))",
        ),
        3,
        "tick()\ntick()",
        (0, 2, 3, 4),
        ("steps", "log", "out"),
    ),
    Case(
        "a_chain_of_increments",
        ("x = 1", "x += 1", "x += 1", "out = x"),
        2,
        "x += 10",
        (0, 1, 2, 3),
        ("x", "out"),
    ),
]


async def _values(wb: Workbench, path: Path, names: tuple[str, ...]) -> dict[str, str]:
    values = {}
    for name in names:
        with anyio.fail_after(WAIT):
            values[name] = (await wb.inspect_variable(path, name)).repr
    return values


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
async def test_run_stale_after_an_edit_gives_the_values_of_a_run_from_the_top(
    case: Case, tmp_path: Path
) -> None:
    path = make_notebook(tmp_path, list(case.sources), case.id)
    cells = [v for v in Document.load(path).cells if v.cell_type == "code"]
    async with fake_workbench(tmp_path / "cache") as wb:
        with anyio.fail_after(WAIT):
            assert (await wb.run_stale(path)).ok
        edited = cells[case.edit]
        update_cell(path, edited.name, expected_rev=edited.rev, source=case.new_source)
        with anyio.fail_after(WAIT):
            rerun = await wb.run_stale(path)
        assert rerun.ok and rerun.still_stale == ()
        after_edit = await _values(wb, path, case.names)

        with anyio.fail_after(WAIT):
            await wb.restart_kernel(path)
            top = await wb.run_stale(path)
        assert top.ok and [c.name for c in top.cells] == [c.name for c in cells]
        assert after_edit == await _values(wb, path, case.names)
    assert [c.name for c in rerun.cells] == [cells[i].name for i in case.plan]
