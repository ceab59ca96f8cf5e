"""``jupyter-mcp``'s long runs over stdio, through the MCP SDK's client, on a real kernel:
``background: true`` answers at once with a run id, ``run_status`` follows the run to its
result, the outputs are written and the statuses fresh; progress notifications come while
a long cell runs."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from workbench_client import call, error_code, module_params, ok, open_session, server_env

pytestmark = pytest.mark.anyio

NB = "work.ipynb"
GATE = "go"
CELLS = [
    {"source": "x = 1\nprint('first', x)", "name": "data"},
    {
        "source": "import os, time\nfor _ in range(1200):\n    if os.path.exists('go'):\n"
        "        break\n    time.sleep(0.05)\nprint('after the gate')",
        "name": "gate",
    },
    {"source": "y = x + 1\nprint('y is', y)", "name": "last"},
]
NAMES = [cell["name"] for cell in CELLS]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    return folder.resolve()


def _params(root: Path, tmp_path: Path, **env: str) -> Any:
    return module_params("--root", str(root), env={**server_env(tmp_path / "cache"), **env})


async def _status_when(
    session: ClientSession, run_id: str, done: Any, *, seconds: float = 60
) -> dict[str, Any]:
    """Poll ``run_status`` (wait_s=0) until ``done(document)``, bounded."""
    with anyio.fail_after(seconds):
        while True:
            document: dict[str, Any] = await ok(session, "run_status", path=NB, run_id=run_id)
            if done(document):
                return document
            await anyio.sleep(0.2)


def _text(cell: dict[str, Any]) -> str:
    return str((cell.get("outputs") or {}).get("text", ""))


@pytest.mark.kernel
async def test_a_background_run_outlives_its_call_and_run_status_returns_its_outputs(
    root: Path, tmp_path: Path
) -> None:
    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS)
        started = await ok(session, "execute_cells", path=NB, names=NAMES, background=True)
        assert started["operation"] == "execute_cells"
        assert started["state"] == "running"
        run_id = started["run_id"]

        # the call has returned; the run goes on: its first cell is reported, the gate holds it
        running = await _status_when(session, run_id, lambda d: d["cells_count"] >= 1)
        assert running["state"] == "running"
        assert running["cells"][0]["name"] == "data"
        assert "first 1" in _text(running["cells"][0])
        assert running["total"] == 3

        # a second execution meanwhile is refused, naming the run
        result, busy = await call(session, "execute_cells", path=NB, names=["data"])
        assert result.is_error
        assert busy["code"] == "KERNEL_BUSY"
        assert busy["details"]["run_id"] == run_id
        again, busy_bg = await call(session, "run_stale", path=NB, background=True)
        assert again.is_error
        assert busy_bg["code"] == "KERNEL_BUSY"
        assert busy_bg["details"]["run_id"] == run_id

        (root / GATE).write_text("", encoding="utf-8")
        final = await ok(session, "run_status", path=NB, run_id=run_id, wait_s=60)
        assert final["state"] == "done"
        assert final["run_id"] == run_id
        assert final["tool"] == "execute_cells"
        assert [cell["status"] for cell in final["cells"]] == ["ok", "ok", "ok"]
        assert "y is 2" in _text(final["cells"][2])

        overview = await ok(session, "notebook_overview", path=NB)
        assert {cell["name"]: cell["status"] for cell in overview["cells"]} == {
            "data": "fresh",
            "gate": "fresh",
            "last": "fresh",
        }

        # run_stale in the background too: after an edit it re-runs the edited cell
        last = next(cell for cell in overview["cells"] if cell["name"] == "last")
        await ok(
            session,
            "update_cell",
            path=NB,
            name="last",
            expected_rev=last["rev"],
            source="y = x + 41\nprint('y is', y)",
        )
        stale_run = await ok(session, "run_stale", path=NB, background=True)
        done = await ok(session, "run_status", path=NB, run_id=stale_run["run_id"], wait_s=60)
        assert done["state"] == "done"
        assert [cell["name"] for cell in done["cells"]] == ["last"]
        assert "y is 42" in _text(done["cells"][0])
        assert not done.get("still_stale")

    notebook = json.loads((root / NB).read_text(encoding="utf-8"))
    stored = {
        cell["metadata"]["jupyter_mcp"]["name"]: "".join(
            "".join(output.get("text", "")) for output in cell["outputs"]
        )
        for cell in notebook["cells"]
    }
    assert "first 1" in stored["data"]
    assert "after the gate" in stored["gate"]
    assert "y is 42" in stored["last"]


@pytest.mark.kernel
async def test_run_status_refuses_unknown_runs_and_bad_waits(root: Path, tmp_path: Path) -> None:
    async with open_session(_params(root, tmp_path), tmp_path / "err.log") as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS[:1])
        await ok(session, "create_notebook", path="other.ipynb", cells=CELLS[:1])
        assert await error_code(session, "run_status", path=NB, run_id="nope") == "RUN_NOT_FOUND"
        started = await ok(session, "execute_cells", path=NB, names=["data"], background=True)
        run_id = started["run_id"]
        other = await error_code(session, "run_status", path="other.ipynb", run_id=run_id)
        assert other == "RUN_NOT_FOUND"
        for wait_s in (-1, 61, "soon"):
            code = await error_code(session, "run_status", path=NB, run_id=run_id, wait_s=wait_s)
            assert code == "USAGE_ERROR"
        final = await ok(session, "run_status", path=NB, run_id=run_id, wait_s=60)
        assert final["state"] == "done"

        # a run that fails says so through run_status, with the error's own code
        failing = await ok(session, "execute_cells", path=NB, names=["missing"], background=True)
        result, error = await call(
            session, "run_status", path=NB, run_id=failing["run_id"], wait_s=60
        )
        assert result.is_error
        assert error["code"] == "CELL_NOT_FOUND"
        assert error["details"]["run_id"] == failing["run_id"]


@pytest.mark.kernel
async def test_a_long_cell_sends_progress_at_least_every_ten_seconds(
    root: Path, tmp_path: Path
) -> None:
    """The server's own heartbeat setting (no test override): a 12 s cell."""
    arrivals: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        arrivals.append(time.monotonic())

    params = _params(root, tmp_path)
    assert params.env is not None
    params.env.pop("JUPYTER_MCP_HEARTBEAT_SECONDS", None)
    cells = [
        {"source": "import time", "name": "warm"},
        {"source": "time.sleep(12)\nprint('slept')", "name": "long"},
    ]
    async with open_session(params, tmp_path / "err.log") as session:
        await ok(session, "create_notebook", path=NB, cells=cells)
        await ok(session, "execute_cells", path=NB, names=["warm"])  # the kernel starts
        start = time.monotonic()
        result, executed = await call(
            session, "execute_cells", on_progress, path=NB, names=["long"]
        )
        end = time.monotonic()
    assert not result.is_error, executed
    assert executed["cells"][0]["status"] == "ok"
    beats = [t for t in arrivals if start <= t <= end]
    assert len(beats) >= 3  # the cell's start, then heartbeats through its 12 s
    gaps = [b - a for a, b in zip([start, *beats], [*beats, end], strict=True)]
    assert max(gaps) <= 10.0, gaps


@pytest.mark.kernel
async def test_a_background_run_cut_by_the_server_exit_keeps_its_finished_cells(
    root: Path, tmp_path: Path
) -> None:
    """The server exits (stdin closes) while the run waits at its gate: the cell that
    finished is in the file, the server stopped cleanly."""
    errlog = tmp_path / "err.log"
    async with open_session(_params(root, tmp_path), errlog) as session:
        await ok(session, "create_notebook", path=NB, cells=CELLS)
        started = await ok(session, "execute_cells", path=NB, names=NAMES, background=True)
        await _status_when(session, started["run_id"], lambda d: d["cells_count"] >= 1)
    notebook = json.loads((root / NB).read_text(encoding="utf-8"))
    first = "".join("".join(output.get("text", "")) for output in notebook["cells"][0]["outputs"])
    assert "first 1" in first
    assert notebook["cells"][2]["outputs"] == []
    assert "Traceback" not in errlog.read_text(encoding="utf-8")
