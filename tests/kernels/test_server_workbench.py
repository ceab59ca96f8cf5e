"""The workbench's real-kernel scenarios through a real Jupyter Server (marker ``server``):
execute, run_stale after an edit, timeout and interrupt, ``input()``, a killed kernel
process, restart, display updates, a 5 MB stream and images, both WebSocket framings and a
base URL with a path prefix. One Workbench on the session's server; every wait is bounded.
"""

from __future__ import annotations

import base64
import os
import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.kernels import (
    KernelBackend,
    KernelPool,
    NotebookKernel,
    ServerBackend,
    backend_factory,
)
from jupyter_jcli.notebook.document import Document
from jupyter_jcli.outputs.notebook import read_notebook_output
from jupyter_jcli.workbench import ExecuteOutcome, Workbench, update_cell
from server_helpers import RunningServer, running_server, write_notebook

pytestmark = [pytest.mark.server, pytest.mark.anyio]

WAIT = 90.0
"""Upper bound (s) on one test's waits."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def wb(
    jupyter_server: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Workbench]:
    pool = KernelPool(backend_factory=backend_factory(jupyter_server.config()))
    async with Workbench(cache_dir=tmp_path_factory.mktemp("cache"), pool=pool) as workbench:
        yield workbench


def names(path: Path) -> list[str]:
    return [view.name for view in Document.load(path).cells]


def saved(path: Path) -> list[dict[str, Any]]:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    return [dict(cell) for cell in notebook.cells]


def text_of(cell: dict[str, Any]) -> str:
    parts = []
    for output in cell["outputs"]:
        if output["output_type"] == "stream":
            parts.append(output["text"])
        elif output["output_type"] == "error":
            parts.append(output["ename"])
        else:
            parts.append(output["data"].get("text/plain", ""))
    return "".join(parts)


async def execute(wb: Workbench, path: Path, cells: list[str], **kw: Any) -> ExecuteOutcome:
    with anyio.fail_after(WAIT):
        return await wb.execute_cells(path, cells, **kw)


async def test_cells_run_on_a_server_session_that_jupyterlab_would_show(
    wb: Workbench, jupyter_server: RunningServer, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["a = 6", "print(a * 7)", "a * 2"], "plain")
    a, printer, expr = names(path)
    outcome = await execute(wb, path, [a, printer, expr])
    assert outcome.ok and outcome.kernel_started
    cells = saved(path)
    assert [c["execution_count"] for c in cells] == [1, 2, 3]
    assert text_of(cells[1]) == "42\n" and text_of(cells[2]) == "12"
    kernel = (await wb.notebook_overview(path)).kernel
    assert kernel.state == "idle" and kernel.pid is None
    assert not kernel.origin.attached and kernel.origin.server_url == jupyter_server.url
    with jupyter_server.client() as rest:
        sessions = rest.get("api/sessions").json()
    relative = path.resolve().relative_to(jupyter_server.root.resolve()).as_posix()
    (session,) = [s for s in sessions if s["path"] == relative]
    assert session["type"] == "notebook" and session["kernel"]["id"] == kernel.origin.kernel_id


async def test_run_stale_after_an_edit_runs_exactly_the_edited_cell_and_its_dependents(
    wb: Workbench, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["x = 1", "y = x + 1", "z = 5", "print(y)"], "stale")
    x, y, _z, shown = names(path)
    with anyio.fail_after(WAIT):
        first = await wb.run_stale(path)
        assert first.ok and first.still_stale == ()
        rev = Document.load(path).cell(x).rev
        edit = update_cell(path, x, expected_rev=rev, source="x = 10")
        again = await wb.run_stale(path)
    assert set(edit.stale) == {x, y, shown}
    assert [c.name for c in again.cells] == [x, y, shown] and again.ok
    assert text_of(saved(path)[3]) == "11\n"


async def test_a_timeout_interrupts_the_cell_and_keeps_the_kernel(
    wb: Workbench, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["kept = 1", "import time\ntime.sleep(60)", "kept"], "slow")
    kept, slow, show = names(path)
    await execute(wb, path, [kept])
    outcome = await execute(wb, path, [slow, show], timeout=2.0)
    assert [c.status for c in outcome.cells] == ["timeout", "skipped"]
    after = await execute(wb, path, [show])
    assert after.ok and not after.kernel_started and text_of(saved(path)[2]) == "1"


async def test_interrupt_kernel_stops_the_running_cell_through_the_server(
    wb: Workbench, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["import time\nprint('go')\ntime.sleep(60)"], "interrupt")
    (slow,) = names(path)
    results: list[ExecuteOutcome] = []

    async def run() -> None:
        results.append(await wb.execute_cells(path, [slow]))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            while (await wb.notebook_overview(path)).kernel.state != "busy":
                await anyio.sleep(0.1)
            await anyio.sleep(1.0)
            await wb.interrupt_kernel(path)
    (outcome,) = results
    assert outcome.cells[0].status == "interrupted"
    assert outcome.cells[0].ename == "KeyboardInterrupt"


async def test_input_fails_at_once(wb: Workbench, tmp_path: Path) -> None:
    path = write_notebook(tmp_path, ["name = input('name? ')"], "stdin")
    outcome = await execute(wb, path, names(path), timeout=30.0)
    assert outcome.cells[0].status == "error"
    assert outcome.cells[0].ename == "StdinNotImplementedError"


async def test_a_killed_kernel_process_is_reported_died_and_replaced(
    wb: Workbench, tmp_path: Path
) -> None:
    path = write_notebook(
        tmp_path, ["import os\nprint(os.getpid())", "import time\ntime.sleep(60)", "'back'"], "kill"
    )
    pid_cell, slow, back = names(path)
    first = await execute(wb, path, [pid_cell])
    pid = int(text_of(saved(path)[0]))
    results: list[ExecuteOutcome] = []

    async def run() -> None:
        results.append(await wb.execute_cells(path, [slow, back]))

    with anyio.fail_after(WAIT):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            while (await wb.notebook_overview(path)).kernel.state != "busy":
                await anyio.sleep(0.1)
            os.kill(pid, signal.SIGKILL)
    (outcome,) = results
    assert [c.status for c in outcome.cells] == ["died", "skipped"]
    assert outcome.error is not None and outcome.error["code"] == ErrorCode.KERNEL_DIED
    again = await execute(wb, path, [back])
    assert again.ok and again.kernel_restarted and again.epoch != first.epoch


async def test_a_restart_keeps_the_server_kernel_and_forgets_its_variables(
    wb: Workbench, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, ["r = 1", "r"], "restart")
    set_r, show = names(path)
    first = await execute(wb, path, [set_r])
    before = (await wb.notebook_overview(path)).kernel.origin.kernel_id
    with anyio.fail_after(WAIT):
        restarted = await wb.restart_kernel(path)
    after = await execute(wb, path, [show])
    assert restarted.epoch != first.epoch and after.epoch == restarted.epoch
    assert restarted.kernel.origin.kernel_id == before
    assert after.cells[0].status == "error" and after.cells[0].ename == "NameError"


async def test_a_display_update_reaches_the_earlier_cell_in_the_file(
    wb: Workbench, tmp_path: Path
) -> None:
    sources = ["h = display('first', display_id=True)\nh.update('second')", "h.update('third')"]
    path = write_notebook(tmp_path, sources, "display")
    shown, later = names(path)
    outcome = await execute(wb, path, [shown, later])
    assert outcome.ok
    cells = saved(path)
    assert text_of(cells[0]) == "'third'" and cells[1]["outputs"] == []


async def test_a_5_mb_stream_is_saved_whole(wb: Workbench, tmp_path: Path) -> None:
    size = 5 * 1000 * 1000
    code = f"import sys\nfor _ in range(50):\n    sys.stdout.write('0123456789' * {size // 500})"
    path = write_notebook(tmp_path, [code], "big")
    outcome = await execute(wb, path, names(path))
    assert outcome.ok
    page = read_notebook_output(path, 0, 0, offset=size - 10, limit=10)["stream"]
    assert page["total_characters"] == size and page["data"] == "0123456789"


async def test_an_image_output_arrives_as_a_png(wb: Workbench, tmp_path: Path) -> None:
    code = (
        "import matplotlib\nmatplotlib.use('module://matplotlib_inline.backend_inline')\n"
        "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.show()"
    )
    path = write_notebook(tmp_path, [code], "image")
    outcome = await execute(wb, path, names(path))
    assert outcome.ok
    (image,) = [o for o in saved(path)[0]["outputs"] if "image/png" in o.get("data", {})]
    assert base64.b64decode(image["data"]["image/png"]).startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize("protocols", [(), ("v1.kernel.websocket.jupyter.org",)])
async def test_both_websocket_framings_carry_streams_results_displays_and_errors(
    jupyter_server: RunningServer, tmp_path: Path, protocols: tuple[str, ...]
) -> None:
    made: list[ServerBackend] = []

    def factory() -> KernelBackend:
        made.append(ServerBackend(jupyter_server.config(), protocols=protocols))
        return made[-1]

    kernel = NotebookKernel(tmp_path / "framing.ipynb", backend_factory=factory)
    code = "print('out')\ndisplay({'a': 1}, raw=False)\n6 * 7"
    try:
        with anyio.fail_after(WAIT):
            result = await kernel.execute(code)
            failed = await kernel.execute("1 / 0")
    finally:
        with anyio.fail_after(WAIT):
            await kernel.shutdown()
    assert made[0].framing == (protocols[0] if protocols else None)
    kinds = [o["output_type"] for o in result.outputs]
    assert kinds == ["stream", "display_data", "execute_result"]
    assert result.outputs[2]["data"]["text/plain"] == "42"
    assert (failed.status, failed.ename) == ("error", "ZeroDivisionError")


@pytest.fixture(scope="module")
def prefixed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root, work = tmp_path_factory.mktemp("prefixed-root"), tmp_path_factory.mktemp("prefixed")
    with running_server(root, work, base_url="/user/ana/") as server:
        yield server


async def test_a_server_behind_a_path_prefix_runs_cells(
    prefixed_server: RunningServer, tmp_path_factory: pytest.TempPathFactory
) -> None:
    assert prefixed_server.url.endswith("/user/ana/")
    path = write_notebook(prefixed_server.root, ["'through the prefix'"], "prefixed")
    pool = KernelPool(backend_factory=backend_factory(prefixed_server.config()))
    async with Workbench(cache_dir=tmp_path_factory.mktemp("cache"), pool=pool) as workbench:
        outcome = await execute(workbench, path, names(path))
    assert outcome.ok and text_of(saved(path)[0]) == "'through the prefix'"
