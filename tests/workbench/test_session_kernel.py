"""The Workbench executing cells: outputs saved, stops, timeout, stdin, death, races, outside
edits, display updates, kernel control and variable inspection.

Most tests drive the Workbench in-process on the fake kernel
(:func:`kernel_fakes.python_backend`, fixture ``wb``); what proves real-kernel
behaviour (a race of two calls on a sleeping cell, inspecting pandas and numpy values) runs
on a real ipykernel (fixture ``real_wb``, marker ``kernel``). One Workbench of each kind is
shared by the module; tests that kill or restart a kernel use a notebook of their own. Every
wait is bounded (``anyio.fail_after``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
from wb_helpers import fake_workbench, make_notebook

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.workbench import ExecuteOutcome, Workbench
from jupyter_jcli.workbench import _execute as execute_module

pytestmark = pytest.mark.anyio

WAIT = 60.0
"""Upper bound (s) on any one test's kernel waits."""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("session")


@pytest.fixture(scope="module")
async def wb(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Workbench]:
    async with fake_workbench(tmp_path_factory.mktemp("cache")) as workbench:
        yield workbench


@pytest.fixture(scope="module")
async def real_wb(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Workbench]:
    async with Workbench(cache_dir=tmp_path_factory.mktemp("cache")) as workbench:
        yield workbench


def names_of(path: Path) -> list[str]:
    from jupyter_jcli.notebook.document import Document

    return [view.name for view in Document.load(path).cells]


def saved(path: Path) -> list[dict[str, Any]]:
    """The cells of the file, re-read and validated with nbformat."""
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    return [dict(cell) for cell in notebook.cells]


def texts(cell: dict[str, Any]) -> str:
    parts = []
    for output in cell["outputs"]:
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif output["output_type"] == "error":
            parts.append(output["ename"])
        else:
            parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)


async def execute(wb: Workbench, path: Path, names: list[str], **kw: Any) -> ExecuteOutcome:
    with anyio.fail_after(WAIT):
        return await wb.execute_cells(path, names, **kw)


async def test_execute_cells_writes_outputs_and_counts_into_the_file(
    wb: Workbench, folder: Path
) -> None:
    path = make_notebook(folder, ["a = 6", "print(a * 7)", "a * 2", ("markdown", "# t")], "write")
    a, printer, expr, _md = names_of(path)
    outcome = await execute(wb, path, [a, printer, expr])
    assert outcome.ok and outcome.kernel_started and outcome.error is None
    assert [c.status for c in outcome.cells] == ["ok", "ok", "ok"]
    assert outcome.written == (a, printer, expr)
    cells = saved(path)
    assert [c["execution_count"] for c in cells[:3]] == [1, 2, 3]
    assert texts(cells[1]) == "42\n" and texts(cells[2]) == "12"
    assert cells[2]["outputs"][0]["execution_count"] == 3
    assert outcome.cells[1].outputs is not None and "42" in outcome.cells[1].outputs.text
    assert outcome.still_stale == ()
    overview = await wb.notebook_overview(path)
    assert overview.statuses == {a: "fresh", printer: "fresh", expr: "fresh"}
    assert overview.kernel.state == "idle" and overview.kernel.epoch == outcome.epoch
    again = await execute(wb, path, [expr])
    assert not again.kernel_started and again.epoch == outcome.epoch


async def test_an_error_stops_the_call_and_later_cells_are_skipped(
    wb: Workbench, folder: Path
) -> None:
    path = make_notebook(folder, ["b = 1", "raise ValueError('boom')", "b = 2"], "stops")
    b1, bad, b2 = names_of(path)
    outcome = await execute(wb, path, [b1, bad, b2])
    assert [c.status for c in outcome.cells] == ["ok", "error", "skipped"]
    assert outcome.stopped_at == bad and outcome.error is None
    assert outcome.cells[1].ename == "ValueError"
    cells = saved(path)
    assert cells[1]["outputs"][0]["output_type"] == "error"
    assert cells[2]["outputs"] == [] and cells[2]["execution_count"] is None
    read = await wb.read_cells(path, names=[bad])
    assert read.cells[0].status == "error"  # type: ignore[attr-defined]


async def test_a_cell_past_its_timeout_is_reported_and_the_kernel_stays_usable(
    wb: Workbench, folder: Path
) -> None:
    path = make_notebook(folder, ["import time\ntime.sleep(60)", "print('after')"], "timeout")
    slow, after = names_of(path)
    outcome = await execute(wb, path, [slow, after], timeout=1.0)
    assert [c.status for c in outcome.cells] == ["timeout", "skipped"]
    assert outcome.stopped_at == slow
    next_call = await execute(wb, path, [after])
    assert next_call.cells[0].status == "ok" and not next_call.kernel_started


async def test_input_fails_at_once_instead_of_hanging(wb: Workbench, folder: Path) -> None:
    path = make_notebook(folder, ["name = input('name? ')"], "stdin")
    (cell,) = names_of(path)
    outcome = await execute(wb, path, [cell], timeout=30.0)
    assert outcome.cells[0].status == "error"
    assert outcome.cells[0].ename == "StdinNotImplementedError"


async def test_a_dying_kernel_is_reported_with_the_cell_and_replaced_next_time(
    wb: Workbench, folder: Path
) -> None:
    path = make_notebook(folder, ["k = 1", "import os\nos._exit(1)", "k = 2"], "dies")
    k1, dies, k2 = names_of(path)
    outcome = await execute(wb, path, [k1, dies, k2])
    assert [c.status for c in outcome.cells] == ["ok", "died", "skipped"]
    assert outcome.error is not None and outcome.error["code"] == ErrorCode.KERNEL_DIED
    assert outcome.error["details"]["cell"] == dies
    assert saved(path)[0]["execution_count"] == 1  # what ran before the death is saved
    overview = await wb.notebook_overview(path)
    assert set(overview.statuses.values()) == {"never_run"}
    again = await execute(wb, path, [k2])
    assert again.kernel_started and again.kernel_restarted and again.epoch != outcome.epoch


@pytest.mark.kernel
async def test_two_racing_calls_never_interleave(
    real_wb: Workbench, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(execute_module, "HEARTBEAT_INTERVAL", 0.3)
    path = make_notebook(folder, ["import time\ntime.sleep(1.5)\nprint('first')", "x = 1"], "race")
    slow, fast = names_of(path)
    await execute(real_wb, path, [fast])  # the kernel is up: heartbeats come while the cell runs
    started = anyio.Event()
    results: dict[str, Any] = {}

    async def progress(done: float, _total: float | None, _message: str) -> None:
        if done != int(done):  # a heartbeat: the first call's cell is running
            started.set()

    async def first() -> None:
        results["first"] = await real_wb.execute_cells(path, [slow], on_progress=progress)

    async def second() -> None:
        await started.wait()
        try:
            results["second"] = await real_wb.execute_cells(path, [fast])
        except JcliError as err:
            results["second"] = err

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(first)
            tg.start_soon(second)
    refused = results["second"]
    assert isinstance(refused, JcliError) and refused.code == ErrorCode.KERNEL_BUSY
    assert refused.details["running_cell"] == slow
    assert results["first"].cells[0].status == "ok"
    cells = saved(path)
    assert texts(cells[0]) == "first\n" and cells[1]["execution_count"] == 1


async def test_an_edit_by_another_program_between_calls_is_kept(
    wb: Workbench, folder: Path
) -> None:
    path = make_notebook(folder, ["p = 1", "q = p + 1"], "outside")
    p, q = names_of(path)
    await execute(wb, path, [p])
    document = json.loads(path.read_text(encoding="utf-8"))
    document["cells"].append(
        {"cell_type": "markdown", "id": "added", "metadata": {}, "source": "# added elsewhere"}
    )
    document["metadata"]["edited_by"] = "someone else"
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    outcome = await execute(wb, path, [q])
    assert outcome.written == (q,)
    cells = saved(path)
    assert cells[-1]["source"] == "# added elsewhere"
    assert nbformat.read(path, as_version=4).metadata["edited_by"] == "someone else"
    assert cells[0]["execution_count"] == 1 and cells[1]["execution_count"] == 2


async def test_a_cell_edited_while_it_runs_keeps_the_new_source_and_gets_no_outputs(
    wb: Workbench, folder: Path
) -> None:
    path = make_notebook(folder, ["print('old')"], "midrun")
    (cell,) = names_of(path)

    async def edit(_done: float, _total: float | None, message: str) -> None:
        if message.startswith("running"):
            document = json.loads(path.read_text(encoding="utf-8"))
            document["cells"][0]["source"] = "print('new')"
            path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")

    outcome = await execute(wb, path, [cell], on_progress=edit)
    assert outcome.cells[0].status == "ok" and not outcome.cells[0].written
    assert outcome.written == ()
    saved_cell = saved(path)[0]
    assert saved_cell["source"] == "print('new')" and saved_cell["outputs"] == []
    overview = await wb.notebook_overview(path)
    assert overview.statuses[cell] == "stale"


async def test_update_display_reaches_an_earlier_cell_in_the_file(
    wb: Workbench, folder: Path
) -> None:
    path = make_notebook(
        folder,
        ["from IPython.display import display\nh = display('loading', display_id=True)",
         "h.update('done')"],
        "display",
    )  # fmt: skip
    shown, update = names_of(path)
    await execute(wb, path, [shown])
    assert texts(saved(path)[0]) == "'loading'"
    outcome = await execute(wb, path, [update])
    assert outcome.written == (shown, update)
    assert texts(saved(path)[0]) == "'done'"


async def test_restart_makes_every_cell_never_run(wb: Workbench, folder: Path) -> None:
    path = make_notebook(folder, ["r = 1", "s = r + 1"], "restart")
    first = await execute(wb, path, names_of(path))
    with anyio.fail_after(WAIT):
        restarted = await wb.restart_kernel(path)
    assert restarted.previous_epoch == first.epoch
    assert restarted.epoch is not None and restarted.epoch != first.epoch
    assert restarted.still_stale == tuple(names_of(path))
    overview = await wb.notebook_overview(path)
    assert set(overview.statuses.values()) == {"never_run"}
    with pytest.raises(JcliError) as err:
        await wb.inspect_variable(path, "r")
    assert err.value.code == ErrorCode.VARIABLE_NOT_FOUND


async def test_interrupt_stops_the_running_cell_and_the_call_says_so(
    wb: Workbench, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(execute_module, "HEARTBEAT_INTERVAL", 0.5)
    path = make_notebook(folder, ["import time\ntime.sleep(60)", "warm = 1"], "interrupt")
    cell, warm = names_of(path)
    with pytest.raises(JcliError) as err:
        await wb.interrupt_kernel(path)
    assert err.value.code == ErrorCode.KERNEL_NOT_RUNNING
    await execute(wb, path, [warm])  # the kernel is up: heartbeats come while the cell runs
    started = anyio.Event()
    outcomes: list[Any] = []

    async def progress(done: float, _total: float | None, _message: str) -> None:
        if done != int(done):  # a heartbeat: the cell is running
            started.set()

    async def run() -> None:
        outcomes.append(await wb.execute_cells(path, [cell], on_progress=progress))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await started.wait()
            interrupted = await wb.interrupt_kernel(path)
    assert interrupted.interrupted_cell == cell
    assert outcomes[0].cells[0].status == "interrupted"
    assert outcomes[0].cells[0].interrupted_by == "kernel_interrupted"
    assert outcomes[0].cells[0].ename == "KeyboardInterrupt"
    assert outcomes[0].error is None  # the kernel and its variables are kept
    assert interrupted.epoch == outcomes[0].epoch


@pytest.mark.kernel
async def test_inspect_variable_describes_live_values(real_wb: Workbench, folder: Path) -> None:
    path = make_notebook(
        folder,
        ["n = 42\nitems = list(range(1000))\nconf = {'a': 1, 'b': 'two'}",
         "import pandas as pd\ndf = pd.DataFrame({'x': [1, 2, 3], 'y': ['a', 'b', 'c']})"],
        "inspect",
    )  # fmt: skip
    await execute(real_wb, path, names_of(path))
    kernel = real_wb.pool.get(path)
    assert kernel is not None
    history = await kernel.evaluate("", user_expressions={"h": "len(In)"})
    with anyio.fail_after(WAIT):
        n = await real_wb.inspect_variable(path, "n")
        items = await real_wb.inspect_variable(path, "items", max_chars=50)
        conf = await real_wb.inspect_variable(path, "conf")
        df = await real_wb.inspect_variable(path, "df")
    assert (n.type, n.repr) == ("int", "42")
    assert items.type == "list" and items.length == 1000
    assert len(items.repr) == 50 and items.repr_chars > 50 and items.truncated
    assert conf.length == 2 and conf.schema is not None
    assert [c["name"] for c in conf.schema] == ["'a'", "'b'"]
    assert df.type.startswith("pandas.") and df.type.endswith("DataFrame")
    assert df.shape == (3, 2) and df.length == 3
    assert df.schema is not None and [c["name"] for c in df.schema] == ["x", "y"]
    assert df.schema[0]["dtype"] == "int64" and df.schema[1]["dtype"] in ("object", "str")
    assert "x" in df.repr and df.to_dict()["operation"] == "inspect_variable"
    after = await kernel.evaluate("", user_expressions={"h": "len(In)"})
    assert after.expressions["h"].text == history.expressions["h"].text
    with pytest.raises(JcliError) as missing:
        await real_wb.inspect_variable(path, "nope")
    assert missing.value.code == ErrorCode.VARIABLE_NOT_FOUND
    with pytest.raises(JcliError) as bad:
        await real_wb.inspect_variable(path, "a.b")
    assert bad.value.code == ErrorCode.USAGE_ERROR


@pytest.mark.kernel
async def test_inspecting_an_array_does_not_import_pandas(real_wb: Workbench, folder: Path) -> None:
    path = make_notebook(folder, ["import numpy as np\narr = np.zeros((4, 3))"], "numpy_only")
    await execute(real_wb, path, names_of(path))
    with anyio.fail_after(WAIT):
        arr = await real_wb.inspect_variable(path, "arr")
    assert arr.type == "numpy.ndarray" and arr.shape == (4, 3) and arr.dtype == "float64"
    kernel = real_wb.pool.get(path)
    assert kernel is not None
    check = await kernel.evaluate(
        "", user_expressions={"p": "'pandas' in __import__('sys').modules"}
    )
    assert check.expressions["p"].text == "False"


async def test_inspect_without_a_kernel_is_kernel_not_running(wb: Workbench, folder: Path) -> None:
    path = make_notebook(folder, ["z = 1"], "nokernel")
    with pytest.raises(JcliError) as err:
        await wb.inspect_variable(path, "z")
    assert err.value.code == ErrorCode.KERNEL_NOT_RUNNING
    overview = await wb.notebook_overview(path)
    assert overview.kernel.state == "not_started"
    assert overview.to_dict()["cells"][0]["status"] == "never_run"
    assert overview.to_dict()["cells"][0]["tldr"]


async def test_execute_refuses_markdown_and_unknown_cells(wb: Workbench, folder: Path) -> None:
    path = make_notebook(folder, ["m = 1", ("markdown", "# title")], "refuse")
    _code, markdown = names_of(path)
    with pytest.raises(JcliError) as md:
        await wb.execute_cells(path, [markdown])
    assert md.value.code == ErrorCode.USAGE_ERROR
    with pytest.raises(JcliError) as unknown:
        await wb.execute_cells(path, ["no-such-cell"])
    assert unknown.value.code == ErrorCode.CELL_NOT_FOUND
    assert wb.pool.get(path) is None or not await wb.pool.get(path).is_alive()  # type: ignore[union-attr]
