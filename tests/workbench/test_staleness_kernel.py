"""The staleness suite with a kernel: run all, edit, re-run upstream, restart, run_stale.

Statuses come from what actually ran on the live kernel (the run log and its epoch) and the
DAG; every expectation is checked against the kernel-less mutation results and against the
values the kernel holds afterwards. One Workbench is shared; each test has its own notebook
(so its own kernel). Every wait is bounded.

The small made-up notebooks run in-process on the fake kernel (fixture ``wb``); the real
notebook runs on ipykernel (fixture ``real_wb``, marker ``kernel``).
"""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from wb_helpers import NOTEBOOKS, fake_workbench, make_notebook

from jupyter_jcli.notebook.document import Document
from jupyter_jcli.workbench import RunStaleOutcome, Workbench, update_cell

pytestmark = pytest.mark.anyio

WAIT = 90.0
SORTING = "02.08-Sorting.ipynb"
"""PDSH (MIT): list and NumPy sorting, then a matplotlib cell whose style name recent
matplotlib no longer has (``seaborn-whitegrid``): a real notebook that fails midway."""
FIXED_STYLE_CELL = "%matplotlib inline\nimport matplotlib.pyplot as plt\nimport numpy as np"


@pytest.fixture(scope="module")
async def wb(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Workbench]:
    async with fake_workbench(tmp_path_factory.mktemp("cache")) as workbench:
        yield workbench


@pytest.fixture(scope="module")
async def real_wb(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Workbench]:
    async with Workbench(cache_dir=tmp_path_factory.mktemp("cache")) as workbench:
        yield workbench


def code_names(path: Path) -> list[str]:
    return [v.name for v in Document.load(path).cells if v.cell_type == "code"]


def cell_by_source(path: Path, start: str) -> tuple[str, str]:
    """(name, rev) of the first cell whose source starts with ``start``."""
    view = next(v for v in Document.load(path).cells if v.source.startswith(start))
    return view.name, view.rev


async def run_stale(wb: Workbench, path: Path, *, dry_run: bool = False) -> RunStaleOutcome:
    with anyio.fail_after(WAIT):
        return await wb.run_stale(path, dry_run=dry_run)


async def statuses(wb: Workbench, path: Path) -> dict[str, str]:
    return dict((await wb.notebook_overview(path)).statuses)


def not_fresh(status: dict[str, str]) -> list[str]:
    return [name for name, value in status.items() if value != "fresh"]


@pytest.mark.kernel
async def test_a_real_notebook_runs_until_its_failing_cell_and_resumes_after_the_fix(
    real_wb: Workbench, tmp_path: Path
) -> None:
    path = tmp_path / SORTING
    shutil.copyfile(NOTEBOOKS / SORTING, path)
    names = code_names(path)
    dry = await run_stale(real_wb, path, dry_run=True)
    assert dry.plan == tuple(names) and dry.cells == () and real_wb.pool.get(path) is None
    first = await run_stale(real_wb, path)
    style, style_rev = cell_by_source(path, "%matplotlib inline")
    assert first.stopped_at == style
    position = names.index(style)
    ran = [c.name for c in first.cells if c.status != "skipped"]
    assert ran == names[: position + 1]
    status = await statuses(real_wb, path)
    assert [status[n] for n in names[:position]] == ["fresh"] * position
    assert status[style] == "error"
    assert {status[n] for n in names[position + 1 :]} == {"never_run"}
    assert first.still_stale == tuple(names[position:])

    fixed = update_cell(
        path,
        style,
        expected_rev=style_rev,
        source=FIXED_STYLE_CELL,
    )
    assert fixed.stale[0] == style
    plan = (await run_stale(real_wb, path, dry_run=True)).plan
    assert plan == tuple(names[position:])  # the cells above stay fresh
    second = await run_stale(real_wb, path)
    assert second.ok, second.to_dict()["cells"]
    assert [c.name for c in second.cells] == list(plan)
    assert second.still_stale == () and set((await statuses(real_wb, path)).values()) == {"fresh"}


@pytest.mark.kernel
async def test_an_edit_stales_the_cell_and_its_dependents_and_run_stale_runs_exactly_them(
    real_wb: Workbench, tmp_path: Path
) -> None:
    path = tmp_path / SORTING
    shutil.copyfile(NOTEBOOKS / SORTING, path)
    style, style_rev = cell_by_source(path, "%matplotlib inline")
    update_cell(path, style, expected_rev=style_rev, source=FIXED_STYLE_CELL)
    assert (await run_stale(real_wb, path)).ok
    rng, rng_rev = cell_by_source(path, "rng = np.random.default_rng")
    edit = update_cell(
        path,
        rng,
        expected_rev=rng_rev,
        source="rng = np.random.default_rng(seed=7)\nX = rng.integers(0, 10, (4, 6))\nprint(X)",
    )
    status = await statuses(real_wb, path)
    assert not_fresh(status) == list(edit.stale)
    assert status[rng] == "stale"
    plan = await run_stale(real_wb, path, dry_run=True)
    assert plan.plan == edit.stale
    rerun = await run_stale(real_wb, path)
    assert [c.name for c in rerun.cells] == list(edit.stale)
    assert rerun.ok and rerun.still_stale == ()
    assert set((await statuses(real_wb, path)).values()) == {"fresh"}


async def test_rerunning_an_upstream_cell_stales_its_dependents(
    wb: Workbench, tmp_path: Path
) -> None:
    path = make_notebook(tmp_path, ["a = 1", "b = a + 1", "c = b * 2", "d = 5"], "upstream")
    a, b, c, d = code_names(path)
    assert (await run_stale(wb, path)).ok
    with anyio.fail_after(WAIT):
        again = await wb.execute_cells(path, [a])
    assert again.still_stale == (b, c)
    assert await statuses(wb, path) == {a: "fresh", b: "stale", c: "stale", d: "fresh"}
    assert (await run_stale(wb, path, dry_run=True)).plan == (b, c)


async def test_a_restart_makes_everything_never_run_and_run_stale_runs_all(
    wb: Workbench, tmp_path: Path
) -> None:
    path = make_notebook(tmp_path, ["a = 1", "b = a + 1", ("markdown", "# x")], "restart")
    names = code_names(path)
    assert (await run_stale(wb, path)).ok
    assert set((await statuses(wb, path)).values()) == {"fresh"}
    with anyio.fail_after(WAIT):
        await wb.restart_kernel(path)
    assert set((await statuses(wb, path)).values()) == {"never_run"}
    rerun = await run_stale(wb, path)
    assert [c.name for c in rerun.cells] == names and not rerun.kernel_started


async def test_run_stale_replays_the_writer_before_a_self_increment(
    wb: Workbench, tmp_path: Path
) -> None:
    path = make_notebook(tmp_path, ["x = 10", "x += 1", "y = x * 2", "z = 0"], "replay")
    init, increment, double, other = code_names(path)
    assert (await run_stale(wb, path)).ok
    _name, rev = cell_by_source(path, "x += 1")
    edit = update_cell(path, increment, expected_rev=rev, source="x += 2")
    assert edit.stale == (init, increment, double)
    plan = await run_stale(wb, path, dry_run=True)
    assert plan.plan == (init, increment, double)
    rerun = await run_stale(wb, path)
    assert [c.name for c in rerun.cells] == [init, increment, double]
    with anyio.fail_after(WAIT):
        x = await wb.inspect_variable(path, "x")
        y = await wb.inspect_variable(path, "y")
    assert (x.repr, y.repr) == ("12", "24")  # 10 + 2, not 11 + 2
    assert (await statuses(wb, path))[other] == "fresh"


async def test_run_stale_stops_at_the_first_error_and_lists_what_is_still_stale(
    wb: Workbench, tmp_path: Path
) -> None:
    path = make_notebook(tmp_path, ["a = 1", "b = a / 0", "c = b + 1", "d = 2"], "stop")
    a, b, c, d = code_names(path)
    outcome = await run_stale(wb, path)
    assert [cell.status for cell in outcome.cells] == ["ok", "error", "skipped", "skipped"]
    assert outcome.still_stale == (b, c, d)
    assert await statuses(wb, path) == {a: "fresh", b: "error", c: "never_run", d: "never_run"}
    assert (await run_stale(wb, path, dry_run=True)).plan == (b, c, d)


@pytest.mark.kernel
@pytest.mark.parametrize(
    "case",
    [
        # a reader whose value a later cell rebound: its writer replays, the later cell restores
        (["total = 10", "avg = total / 2", "total = 0", "print(avg, total)"],
         1, "avg = total / 4", "print(avg, total)", "2.5 0"),
        # a cell that reads a name, then rebinds it: the writer above replays
        (["x = 1", "y = x\nx = 5", "print(x, y)"], 1, "y = x + 1\nx = 5", "print(x, y)", "5 2"),
        # a call that bumps a global: the global's writer replays
        (["counter = 0", "def bump():\n    global counter\n    counter += 1", "bump()",
          "print(counter)"], 2, "bump()\nbump()", "print(counter)", "2"),
    ],
    ids=["rebound-below", "read-then-rebind", "global-bump"],
)  # fmt: skip
async def test_what_the_overview_calls_stale_is_what_an_edit_lists_and_run_stale_runs(
    real_wb: Workbench, tmp_path: Path, case: tuple[list[str], int, str, str, str]
) -> None:
    sources, edit, new_source, check, expected = case
    path = make_notebook(tmp_path, sources)
    assert (await run_stale(real_wb, path)).ok
    names = code_names(path)
    view = Document.load(path).cells[edit]
    edited = update_cell(path, view.name, expected_rev=view.rev, source=new_source)
    overview = (await real_wb.notebook_overview(path)).to_dict()["cells"]
    stale = [c["name"] for c in overview if c["status"] != "fresh"]
    assert stale == list(edited.stale)
    for cell in overview:
        if cell["status"] == "stale" and cell["name"] not in (view.name, *names[edit + 1 :]):
            assert cell.get("stale_cause"), cell  # a cell above re-runs: the overview says why
    rerun = await run_stale(real_wb, path)
    assert rerun.ok and rerun.plan == tuple(stale)
    assert set((await statuses(real_wb, path)).values()) == {"fresh"}
    with anyio.fail_after(WAIT):
        printed = await real_wb.execute_code(path, check, cwd=tmp_path)
    assert expected in str(printed.to_dict())  # the kernel holds what a run from the top leaves
