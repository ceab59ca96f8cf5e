"""``jupyter-mcp``'s kernel tools over stdio, on a real kernel: execute, run_stale, restart,
interrupt, inspect, progress notifications, concurrent calls; the refusals in-process on the
fake kernel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from memory_client import workbench_in_process
from workbench_client import (
    PLOTS_NB,
    call,
    error_code,
    images,
    module_params,
    ok,
    open_session,
    populate_root,
    server_env,
)

pytestmark = pytest.mark.anyio

NB = "work.ipynb"
CELLS = [
    {"source": "# A hand-made notebook", "cell_type": "markdown", "name": "title"},
    {"source": "values = list(range(10))\ntotal = sum(values)", "name": "data"},
    {"source": "print('total is', total)", "name": "show"},
    {
        "source": "%matplotlib inline\nimport matplotlib.pyplot as plt\n"
        "plt.plot(values, [v * v for v in values])\nplt.show()",
        "name": "plot",
    },
]
SLOW_CELLS = [
    {"source": "import time\ntime.sleep(1.5)", "name": "nap-1"},
    {"source": "time.sleep(1.5)", "name": "nap-2"},
    {"source": "time.sleep(60)", "name": "long-sleep"},
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder.resolve()


def _params(root: Path, tmp_path: Path) -> Any:
    return module_params("--root", str(root), env=server_env(tmp_path / "cache"))


async def _create(session: ClientSession, *, slow: bool = True) -> dict[str, Any]:
    cells = CELLS + SLOW_CELLS if slow else CELLS
    created: dict[str, Any] = await ok(session, "create_notebook", path=NB, cells=cells)
    return created


def _stored_outputs(root: Path, index: int) -> list[dict[str, Any]]:
    notebook = json.loads((root / NB).read_text(encoding="utf-8"))
    outputs: list[dict[str, Any]] = notebook["cells"][index]["outputs"]
    return outputs


@pytest.mark.kernel
async def test_execute_inspect_edit_run_stale_restart(root: Path, tmp_path: Path) -> None:
    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        await _create(session, slow=False)
        result, executed = await call(
            session, "execute_cells", path=NB, names=["data", "show", "plot"]
        )
        variable = await ok(session, "inspect_variable", path=NB, name="values")
        overview = await ok(session, "notebook_overview", path=NB)
        data = next(cell for cell in overview["cells"] if cell["name"] == "data")
        await ok(
            session,
            "update_cell",
            path=NB,
            name="data",
            expected_rev=data["rev"],
            source="values = list(range(20))\ntotal = sum(values)",
        )
        plan = await ok(session, "run_stale", path=NB, dry_run=True)
        rerun = await ok(session, "run_stale", path=NB, include_images=False)
        restarted = await ok(session, "restart_kernel", path=NB)
        after_restart = await ok(session, "notebook_overview", path=NB)
        gone = await error_code(session, "inspect_variable", path=NB, name="values")
    assert not result.is_error
    assert executed["ok"] is True
    assert executed["kernel_started"] is True
    assert [cell["status"] for cell in executed["cells"]] == ["ok", "ok", "ok"]
    assert "total is 45" in executed["cells"][1]["outputs"]["text"]
    assert executed["image_count"] >= 1
    assert len(images(result)) == executed["image_count"]
    plot_images = executed["cells"][2]["outputs"]["images"]
    assert plot_images[0]["delivered_as"] == "image_content"
    assert _stored_outputs(root, 2)[0]["text"] == ["total is 190\n"]  # after run_stale
    assert any("image/png" in output.get("data", {}) for output in _stored_outputs(root, 3))
    assert variable["type"] == "list"
    assert variable["length"] == 10
    statuses = {cell["name"]: cell["status"] for cell in overview["cells"]}
    assert statuses["data"] == statuses["show"] == statuses["plot"] == "fresh"
    assert overview["kernel"]["state"] in ("idle", "busy")
    assert plan["plan"] == ["data", "show", "plot"]
    assert plan["dry_run"] is True
    assert plan["cells"] == []
    assert rerun["plan"] == ["data", "show", "plot"]
    assert rerun["still_stale"] == []
    assert rerun["cells"][1]["outputs"]["text"].count("total is 190") == 1
    assert restarted["epoch"] != restarted["previous_epoch"]
    assert {"data", "show", "plot"} <= set(restarted["still_stale"])
    assert {cell["status"] for cell in after_restart["cells"] if cell["cell_type"] == "code"} == {
        "never_run"
    }
    assert gone == "VARIABLE_NOT_FOUND"


@pytest.mark.kernel
async def test_a_cell_renamed_with_update_cell_keeps_its_run_status(
    root: Path, tmp_path: Path
) -> None:
    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        await _create(session, slow=False)
        await ok(session, "execute_cells", path=NB, names=["data", "show"])
        overview = await ok(session, "notebook_overview", path=NB)
        data = next(cell for cell in overview["cells"] if cell["name"] == "data")
        renamed = await ok(
            session, "update_cell", path=NB, name="data", expected_rev=data["rev"],
            new_name="values",
        )  # fmt: skip
        after = await ok(session, "notebook_overview", path=NB)
        plan = await ok(session, "run_stale", path=NB, dry_run=True)
    assert renamed["stale"] == []
    statuses = {cell["name"]: cell["status"] for cell in after["cells"]}
    assert statuses["values"] == statuses["show"] == "fresh"
    assert plan["plan"] == ["plot"]


@pytest.mark.usefixtures("in_process")
async def test_kernel_errors_are_error_results(root: Path, tmp_path: Path) -> None:
    async with workbench_in_process(root, tmp_path / "cache") as session:
        await _create(session)
        codes = {
            "interrupt without kernel": await error_code(session, "interrupt_kernel", path=NB),
            "inspect without kernel": await error_code(
                session, "inspect_variable", path=NB, name="values"
            ),
            "execute markdown": await error_code(
                session, "execute_cells", path=NB, names=["title"]
            ),
            "execute unknown": await error_code(session, "execute_cells", path=NB, names=["nope"]),
            "execute no names": await error_code(session, "execute_cells", path=NB, names=[]),
            "bad timeout": await error_code(
                session, "execute_cells", path=NB, names=["data"], timeout=0
            ),
            "outside": await error_code(
                session, "execute_cells", path=str(tmp_path / "x.ipynb"), names=["data"]
            ),
        }
        await ok(session, "execute_cells", path=NB, names=["data"])
        codes["unknown variable"] = await error_code(
            session, "inspect_variable", path=NB, name="undefined_thing"
        )
        codes["not an identifier"] = await error_code(
            session, "inspect_variable", path=NB, name="values[0]"
        )
    assert codes == {
        "interrupt without kernel": "KERNEL_NOT_RUNNING",
        "inspect without kernel": "KERNEL_NOT_RUNNING",
        "execute markdown": "USAGE_ERROR",
        "execute unknown": "CELL_NOT_FOUND",
        "execute no names": "USAGE_ERROR",
        "bad timeout": "USAGE_ERROR",
        "outside": "PATH_NOT_ALLOWED",
        "unknown variable": "VARIABLE_NOT_FOUND",
        "not an identifier": "USAGE_ERROR",
    }


@pytest.mark.kernel
async def test_a_multi_cell_execution_reports_progress_and_heartbeats(
    root: Path, tmp_path: Path
) -> None:
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        await _create(session)
        result, executed = await call(
            session, "execute_cells", on_progress, path=NB, names=["data", "nap-1", "nap-2"]
        )
    assert not result.is_error, executed
    assert executed["ok"] is True
    values = [progress for progress, _, _ in reports]
    assert values == sorted(values)
    assert len(set(values)) == len(values)  # strictly increasing, as MCP requires
    messages = [message or "" for _, _, message in reports]
    for name in ("data", "nap-1", "nap-2"):
        assert any(name in message for message in messages), (name, messages)
    assert any("elapsed" in message for message in messages), messages  # the 1 s heartbeat
    assert any(total == 3 for _, total, _ in reports)


@pytest.mark.kernel
async def test_the_server_keeps_serving_while_a_cell_runs(root: Path, tmp_path: Path) -> None:
    """A second execution is refused (KERNEL_BUSY) and an interrupt stops the running cell."""
    started = anyio.Event()
    outcome: dict[str, Any] = {}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if message and "long-sleep" in message:
            started.set()

    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        await _create(session)
        await ok(session, "execute_cells", path=NB, names=["data", "nap-1"])

        async def run_long() -> None:
            _, outcome["document"] = await call(
                session, "execute_cells", on_progress, path=NB, names=["long-sleep", "show"]
            )

        async with anyio.create_task_group() as group:
            group.start_soon(run_long)
            with anyio.fail_after(60):
                await started.wait()
            busy = await error_code(session, "execute_cells", path=NB, names=["show"])
            overview = await ok(session, "notebook_overview", path=NB)
            interrupted = await ok(session, "interrupt_kernel", path=NB)
        value = await ok(session, "inspect_variable", path=NB, name="total")
    document = outcome["document"]
    assert busy == "KERNEL_BUSY"
    assert overview["kernel"]["state"] == "busy"
    assert interrupted["interrupted_cell"] == "long-sleep"
    assert document["ok"] is False
    assert document["stopped_at"] == "long-sleep"
    assert [cell["status"] for cell in document["cells"]] == ["interrupted", "skipped"]
    assert document["cells"][0]["interrupted_by"] == "kernel_interrupted"
    assert document["error"] is None  # an interrupt keeps the kernel and its variables
    assert "KeyboardInterrupt" in json.dumps(document["cells"][0])
    assert value["repr"] == "45"


@pytest.mark.kernel
async def test_run_stale_on_a_real_notebook_stops_at_an_error_then_finishes_after_a_fix(
    tmp_path: Path,
) -> None:
    """04.03-Errorbars uses a matplotlib style renamed since: the first run stops there."""
    root = populate_root(tmp_path / "real")
    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        overview = await ok(session, "notebook_overview", path=PLOTS_NB)
        setup = overview["cells"][3]
        first = await ok(session, "run_stale", path=PLOTS_NB)
        await ok(
            session,
            "update_cell",
            path=PLOTS_NB,
            name=setup["name"],
            expected_rev=setup["rev"],
            source=setup_source_fixed(),
        )
        result, second = await call(session, "run_stale", path=PLOTS_NB)
    code_cells = [cell["name"] for cell in overview["cells"] if cell["cell_type"] == "code"]
    assert first["ok"] is False
    assert first["stopped_at"] == setup["name"]
    assert first["cells"][0]["status"] == "error"
    assert first["cells"][0]["ename"] is not None
    assert "seaborn-whitegrid" in first["cells"][0]["evalue"]
    assert set(first["still_stale"]) == set(code_cells)
    assert not result.is_error
    assert second["ok"] is True
    assert second["plan"] == code_cells
    assert [cell["status"] for cell in second["cells"]] == ["ok"] * len(code_cells)
    assert second["still_stale"] == []
    assert second["image_count"] == 3
    assert len(images(result)) == 3
    stored = json.loads((root / PLOTS_NB).read_text(encoding="utf-8"))
    assert all(
        any("image/png" in output.get("data", {}) for output in stored["cells"][index]["outputs"])
        for index in (4, 6, 11)
    )


def setup_source_fixed() -> str:
    return (
        "%matplotlib inline\nimport matplotlib.pyplot as plt\n"
        "plt.style.use('seaborn-v0_8-whitegrid')\nimport numpy as np"
    )


async def _running_cell(session: ClientSession) -> str | None:
    overview = await ok(session, "notebook_overview", path=NB)
    running: str | None = overview["kernel"]["running_cell"]
    return running


@pytest.mark.usefixtures("in_process")
async def test_the_kernel_tools_in_process_on_the_fake_kernel(root: Path, tmp_path: Path) -> None:
    """execute, progress, inspect, edit + run_stale, a busy refusal and an interrupt while a
    cell runs, restart: the kernel tools end to end without a kernel process."""
    reports: list[str] = []
    started = anyio.Event()
    outcome: dict[str, Any] = {}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(message or "")
        if message and "long-sleep" in message:
            started.set()

    cells = [*CELLS[:3], {"source": "import time\ntime.sleep(60)", "name": "long-sleep"}]
    async with workbench_in_process(root, tmp_path / "cache") as session:
        await ok(session, "create_notebook", path=NB, cells=cells)
        _, executed = await call(
            session, "execute_cells", on_progress, path=NB, names=["data", "show"]
        )
        variable = await ok(session, "inspect_variable", path=NB, name="values")
        overview = await ok(session, "notebook_overview", path=NB)
        data = next(cell for cell in overview["cells"] if cell["name"] == "data")
        source = "values = list(range(20))\ntotal = sum(values)"
        await ok(
            session, "update_cell", path=NB, name="data", expected_rev=data["rev"], source=source
        )
        plan = await ok(session, "run_stale", path=NB, dry_run=True)

        async def run_long() -> None:
            _, outcome["long"] = await call(
                session, "execute_cells", on_progress, path=NB, names=["long-sleep", "show"]
            )

        async with anyio.create_task_group() as group:
            group.start_soon(run_long)
            with anyio.fail_after(30):
                await started.wait()
                while await _running_cell(session) != "long-sleep":  # it reached the kernel
                    await anyio.sleep(0.05)
            busy = await error_code(session, "execute_cells", path=NB, names=["show"])
            interrupted = await ok(session, "interrupt_kernel", path=NB)
        rerun = await ok(session, "run_stale", path=NB, timeout=1)
        restarted = await ok(session, "restart_kernel", path=NB)
        gone = await error_code(session, "inspect_variable", path=NB, name="values")
    assert executed["ok"] is True and executed["kernel_started"] is True
    assert "total is 45" in executed["cells"][1]["outputs"]["text"]
    assert any("data" in message for message in reports)
    assert (variable["type"], variable["length"]) == ("list", 10)
    assert plan["plan"] == ["data", "show", "long-sleep"] and plan["dry_run"] is True
    assert busy == "KERNEL_BUSY"
    assert interrupted["interrupted_cell"] == "long-sleep"
    long = outcome["long"]
    assert [cell["status"] for cell in long["cells"]] == ["interrupted", "skipped"]
    assert long["error"] is None
    assert "long-sleep" in rerun["plan"] and rerun["plan"][:2] == ["data", "show"]
    assert _stored_outputs(root, 2)[0]["text"] == ["total is 190\n"]
    assert restarted["epoch"] != restarted["previous_epoch"]
    assert gone == "VARIABLE_NOT_FOUND"
