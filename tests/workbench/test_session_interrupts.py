"""The Workbench with a kernel when something from outside the call stops or changes it:
a restart or interrupt while cells run, a timeout the cell ignores, an edit made by another
program while a cell runs, and a notebook whose kernelspec is not installed.

Each test uses its own notebook (its own kernel). Every wait is bounded (``anyio.fail_after``).

Restarts of a running cell, the kernelspec override and cells rewriting their notebook run
in-process on the fake kernel (fixture ``wb``; the test works in the notebook's folder, as a
kernel does: ``tests/kernels/test_kernel_real.py`` proves a real kernel starts there); a cell
ignoring SIGINT and a restart racing a real kernel start run on ipykernel (``real_wb``,
marker ``kernel``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from wb_helpers import make_notebook

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.workbench import ExecuteOutcome, Workbench
from jupyter_jcli.workbench import _execute as execute_module

pytestmark = pytest.mark.anyio

WAIT = 90.0
"""Upper bound (s) on any one test's kernel waits."""
TICKS = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.1)"
IGNORES_SIGINT = (
    "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
    "print('ignoring', flush=True)\ntime.sleep(600)"
)


@pytest.fixture
async def real_wb(tmp_path: Path) -> AsyncIterator[Workbench]:
    async with Workbench(cache_dir=tmp_path / "snapshots") as workbench:
        yield workbench


def names_of(path: Path) -> list[str]:
    from jupyter_jcli.notebook.document import Document

    return [view.name for view in Document.load(path).cells]


def stored(path: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return cells


def stream_text(cell: dict[str, Any]) -> str:
    return "".join(
        "".join(o["text"]) for o in cell.get("outputs", []) if o["output_type"] == "stream"
    )


class Running:
    """Runs one workbench call in a task; ``ticking`` is set at the first heartbeat of the
    cell ``cell`` (a heartbeat: that cell is running)."""

    def __init__(self, call: Any, cell: str) -> None:
        self.call = call
        self.cell = cell
        self.ticking = anyio.Event()
        self.outcome: Any = None

    async def progress(self, done: float, _total: float | None, message: str) -> None:
        if done != int(done) and message.startswith(f"running {self.cell} "):
            self.ticking.set()

    async def __call__(self) -> None:
        self.outcome = await self.call(self.progress)


@pytest.fixture(autouse=True)
def fast_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execute_module, "HEARTBEAT_INTERVAL", 0.5)


async def test_a_restart_during_execute_cells_interrupts_the_cell_and_saves_its_outputs(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, ["kept = 1", TICKS, "after = 2"], "restart")
    kept, ticks, after = names_of(path)
    running = Running(
        lambda progress: wb.execute_cells(path, [ticks, after], on_progress=progress), ticks
    )
    with anyio.fail_after(WAIT):
        await wb.execute_cells(path, [kept])
        async with anyio.create_task_group() as tg:
            tg.start_soon(running)
            await running.ticking.wait()
            restarted = await wb.restart_kernel(path)
        later = await wb.execute_cells(path, [after])
        overview = await wb.notebook_overview(path)
    outcome: ExecuteOutcome = running.outcome
    assert [(c.status, c.interrupted_by) for c in outcome.cells] == [
        ("interrupted", "kernel_restarted"),
        ("skipped", None),
    ]
    assert outcome.error is not None and outcome.error["code"] == ErrorCode.KERNEL_RESTARTED
    assert outcome.stopped_at == ticks and outcome.written == (ticks,)
    assert set(outcome.still_stale) == {kept, ticks, after}
    assert restarted.interrupted_cell == ticks
    assert restarted.epoch != outcome.epoch and later.epoch == restarted.epoch
    assert stream_text(stored(path)[1]).startswith("tick 0\n")  # printed before the restart
    assert later.cells[0].status == "ok" and not later.kernel_started
    assert overview.statuses[kept] == "never_run"


async def test_a_restart_during_run_stale_stops_the_plan_and_reports_the_rest(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, ["base = 1", TICKS, "top = base + 1"], "stale")
    base, ticks, top = names_of(path)
    running = Running(lambda progress: wb.run_stale(path, on_progress=progress), ticks)
    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(running)
            await running.ticking.wait()
            await wb.restart_kernel(path)
        plan = await wb.run_stale(path, dry_run=True)
    outcome = running.outcome
    assert outcome.plan == (base, ticks, top)
    assert [c.status for c in outcome.cells] == ["ok", "interrupted", "skipped"]
    assert outcome.error["code"] == ErrorCode.KERNEL_RESTARTED
    assert outcome.error["details"]["cell"] == ticks
    assert outcome.written == (base, ticks)
    cells = stored(path)
    assert cells[0]["execution_count"] is not None and "tick 0" in stream_text(cells[1])
    assert cells[2]["execution_count"] is None
    assert plan.plan == (base, ticks, top)  # the new kernel has run nothing


async def test_two_restarts_during_an_execution_both_answer_with_one_new_kernel(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, [TICKS], "twice")
    (ticks,) = names_of(path)
    running = Running(lambda progress: wb.execute_cells(path, [ticks], on_progress=progress), ticks)
    restarts: list[Any] = []

    async def restart() -> None:
        restarts.append(await wb.restart_kernel(path))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(running)
            await running.ticking.wait()
            tg.start_soon(restart)
            tg.start_soon(restart)
        info = (await wb.notebook_overview(path)).kernel
    assert running.outcome.cells[0].status == "interrupted"
    assert len(restarts) == 2 and restarts[0].epoch == restarts[1].epoch == info.epoch
    assert info.state == "idle"


@pytest.mark.kernel
async def test_a_timeout_the_cell_ignores_kills_the_kernel_and_the_result_says_so(
    real_wb: Workbench, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_jcli.kernels._request.SETTLE_TIMEOUT", 1.5)
    path = make_notebook(work, ["kept = 1", IGNORES_SIGINT, "after = 2"], "killed")
    kept, ignores, after = names_of(path)
    with anyio.fail_after(WAIT):
        await real_wb.execute_cells(path, [kept])
        outcome = await real_wb.execute_cells(path, [ignores, after], timeout=1.0)
    cell = outcome.cells[0]
    assert (cell.status, cell.kernel_killed) == ("timeout", True)
    assert outcome.error is not None and outcome.error["code"] == ErrorCode.KERNEL_KILLED
    assert outcome.error["details"]["cell"] == ignores
    assert outcome.kernel.state == "dead"
    assert set(outcome.still_stale) == {kept, ignores, after}
    assert outcome.to_dict()["cells"][0]["kernel_killed"] is True
    assert stream_text(stored(path)[1]) == "ignoring\n"


async def test_a_cell_removed_by_another_program_while_it_runs_says_why_it_was_not_saved(
    wb: Workbench, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(work)  # the fake kernel runs in this process, in the notebook's folder
    # the cell itself plays JupyterLab: it rewrites its notebook without itself, then ends
    remover = (
        "import json\nnb = json.load(open('removed.ipynb'))\n"
        "nb['cells'] = [c for c in nb['cells'] if 'REMOVE-ME' not in ''.join(c['source'])]\n"
        "json.dump(nb, open('removed.ipynb', 'w'))\nprint('done')  # REMOVE-ME"
    )
    path = make_notebook(work, [remover, "x = 1"], "removed")
    remove, other = names_of(path)
    with anyio.fail_after(WAIT):
        outcome = await wb.execute_cells(path, [remove, other])
    assert [c.status for c in outcome.cells] == ["ok", "ok"]
    assert outcome.cells[0].written is False
    assert outcome.cells[0].not_written_reason == "cell_removed"
    assert outcome.cells[1].written and outcome.cells[1].not_written_reason is None
    assert outcome.to_dict()["cells"][0]["not_written_reason"] == "cell_removed"
    assert names_of(path) == [other]


async def test_a_cell_edited_by_another_program_while_it_runs_says_cell_changed(
    wb: Workbench, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(work)  # the fake kernel runs in this process, in the notebook's folder
    editor = (
        "import json\nnb = json.load(open('edited.ipynb'))\n"
        "nb['cells'][0]['source'] = '# edited in JupyterLab'\n"
        "json.dump(nb, open('edited.ipynb', 'w'))"
    )
    path = make_notebook(work, [editor], "edited")
    (edit,) = names_of(path)
    with anyio.fail_after(WAIT):
        outcome = await wb.execute_cells(path, [edit])
    assert outcome.cells[0].status == "ok"
    assert (outcome.cells[0].written, outcome.cells[0].not_written_reason) == (
        False,
        "cell_changed",
    )
    assert stored(path)[0]["source"] == "# edited in JupyterLab"


async def test_a_notebook_whose_kernelspec_is_missing_runs_with_kernel_name(
    wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, ["1 + 1"], "foreign")
    document = json.loads(path.read_text(encoding="utf-8"))
    document["metadata"]["kernelspec"] = {"name": "conda-env-gone-py", "display_name": "gone"}
    path.write_text(json.dumps(document), encoding="utf-8")
    (cell,) = names_of(path)
    with anyio.fail_after(WAIT):
        with pytest.raises(JcliError) as missing:
            await wb.execute_cells(path, [cell])
        outcome = await wb.execute_cells(path, [cell], kernel_name="python3")
        again = await wb.run_stale(path)  # the override is remembered for the notebook
    assert missing.value.code == ErrorCode.KERNELSPEC_NOT_FOUND
    assert missing.value.details["kernelspec"] == "conda-env-gone-py"
    assert missing.value.details["source"] == "notebook_metadata"
    assert "python3" in missing.value.details["installed"]
    assert outcome.cells[0].status == "ok" and outcome.kernel.kernelspec_name == "python3"
    assert again.error is None
    assert json.loads(path.read_text(encoding="utf-8"))["metadata"]["kernelspec"]["name"] == (
        "conda-env-gone-py"
    )  # the override does not rewrite the notebook's metadata


@pytest.mark.kernel
async def test_a_restart_while_the_kernel_starts_for_a_call_runs_none_of_its_cells(
    real_wb: Workbench, work: Path
) -> None:
    path = make_notebook(work, ["a = 1", "b = 2"], "starting")
    a, b = names_of(path)
    asked = anyio.Event()
    restarts: list[Any] = []

    async def progress(done: float, _total: float | None, message: str) -> None:
        if message.startswith(f"running {a} "):  # the call is about to start the kernel
            asked.set()

    async def restart() -> None:
        await asked.wait()
        restarts.append(await real_wb.restart_kernel(path))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(restart)
            outcome = await real_wb.execute_cells(path, [a, b], on_progress=progress)
    assert [(c.status, c.interrupted_by) for c in outcome.cells] == [
        ("interrupted", "kernel_restarted"),
        ("skipped", None),
    ]
    assert outcome.cells[0].execution_count is None and outcome.written == ()
    assert outcome.error is not None and outcome.error["code"] == ErrorCode.KERNEL_RESTARTED
    assert outcome.error["details"]["ran"] is False
    assert restarts[0].kernel.state == "idle"
