"""``jupyter-mcp``'s ``list_kernels``, ``start_kernel`` and ``stop_kernel`` (``j-cli kernel
list|start|stop``'s operations and JSON) through the MCP SDK's client, in-process on real
kernels shared through the test's registry, as the server runs by default: a kernel kept by
``start_kernel`` and one the server started for a run, both stopped under the server's feet
and run again; confinement to the root; the errors; and with ``--server-url`` (over stdio, a
real Jupyter Server) the server's notebook sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from memory_client import shared_in_process
from workbench_client import call, error_code, module_params, ok, open_session, server_env

from jupyter_jcli.kernels import KernelRegistry
from jupyter_jcli.workbench import start_live_kernel
from server_helpers import running_server, write_notebook

pytestmark = [pytest.mark.anyio, pytest.mark.kernel, pytest.mark.usefixtures("in_process")]

NB = "work.ipynb"
WAIT = 120
TICKS = "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.1)"
VOLATILE = ("idle_since", "users", "runs", "state", "running_cell")
"""Fields of a kernel that change as it is used (compared by key only)."""
KERNEL_KEYS = {
    "notebook_path", "kernelspec", "pid", "epoch", "state", "started", "idle_since",
    "idle_timeout_s", "started_by", "started_command", "users", "running_cell", "busy_gone",
    "keep", "transport", "connection_file", "kernel_id", "server_url", "runs",
}  # fmt: skip
"""A kernel's fields, as ``j-cli -j kernel list`` gives them (a server's session adds
``session_id`` and ``connections``)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _notebook(folder: Path, sources: tuple[str, ...] = ("x = 40", "y = x + 2")) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {"jupyter_mcp": {"name": f"c{i}"}},
         "source": source, "execution_count": None, "outputs": []}
        for i, source in enumerate(sources)
    ]  # fmt: skip
    path = folder / NB
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path.resolve()


def _jcli(*args: str) -> dict[str, Any]:
    """``j-cli -j ARGS``'s document (the test's registry, through the environment)."""
    done = subprocess.run(
        [sys.executable, "-m", "jupyter_jcli", "-j", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=WAIT,
        check=False,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


async def _until_running(path: Path, cell: str) -> None:
    """Until the registry says the notebook's kernel runs ``cell`` (bounded)."""
    with anyio.fail_after(WAIT):
        while True:
            entry = KernelRegistry().read(path)
            if entry is not None and (entry.busy or {}).get("cell") == cell:
                return
            await anyio.sleep(0.1)


def _stable(kernel: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in kernel.items() if key not in VOLATILE}


async def test_a_kernel_kept_by_start_kernel_is_listed_as_j_cli_lists_it_and_runs_join_it(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path / "root")
    async with shared_in_process(path.parent, tmp_path / "cache", seconds=WAIT) as session:
        started = await ok(session, "start_kernel", path=NB, idle_timeout=600)
        assert started["operation"] == "start_kernel"
        assert started["started"] is True
        kernel = started["kernel"]
        assert kernel["keep"] is True and kernel["idle_timeout_s"] == 600
        assert kernel["notebook_path"] == str(path)
        again = await ok(session, "start_kernel", path=NB)
        assert again["started"] is False and again["kernel"]["pid"] == kernel["pid"]

        listed = await ok(session, "list_kernels")
        assert [k["pid"] for k in listed["kernels"]] == [kernel["pid"]]
        by_j_cli = _jcli("kernel", "list")["kernels"]
        assert [sorted(k) for k in listed["kernels"]] == [sorted(k) for k in by_j_cli]
        assert [_stable(k) for k in listed["kernels"]] == [_stable(k) for k in by_j_cli]
        assert set(kernel) == set(by_j_cli[0]) == KERNEL_KEYS

        ran = await ok(session, "execute_cells", path=NB, names=["c0", "c1"])
        assert ran["kernel"]["pid"] == kernel["pid"] and ran["kernel_started"] is False
    (entry,) = KernelRegistry().entries()  # kept: the server's exit left it running
    assert entry.pid == kernel["pid"]


async def test_a_kept_kernel_stopped_by_stop_kernel_is_let_go_and_the_next_run_starts_anew(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path / "root")
    async with shared_in_process(path.parent, tmp_path / "cache", seconds=WAIT) as session:
        kernel = (await ok(session, "start_kernel", path=NB))["kernel"]
        await ok(session, "execute_cells", path=NB, names=["c0"])

        stopped = await ok(session, "stop_kernel", path=NB)
        assert stopped["operation"] == "stop_kernel"
        assert [k["pid"] for k in stopped["stopped"]] == [kernel["pid"]]
        (gone,) = stopped["stopped"]  # as stopped, as a server's: stopping, its runs gone
        assert (gone["state"], gone["runs"], gone["keep"]) == ("stopping", 0, True)
        assert (await ok(session, "list_kernels"))["kernels"] == []
        overview = await ok(session, "notebook_overview", path=NB)
        assert {c["status"] for c in overview["cells"]} == {"never_run"}

        rerun = await ok(session, "execute_cells", path=NB, names=["c1"])
        assert rerun["kernel_started"] is True
        assert rerun["kernel_restarted"] is False  # a stop asked for, not a death
        assert rerun["kernel"]["pid"] != kernel["pid"]
        assert rerun["cells"][0]["ename"] == "NameError"  # x went with the stopped kernel


async def test_a_kernel_the_server_started_for_a_run_stops_for_stop_kernel_all_and_comes_back(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path / "root")
    async with shared_in_process(path.parent, tmp_path / "cache", seconds=WAIT) as session:
        first = await ok(session, "execute_cells", path=NB, names=["c0"])
        (listed,) = (await ok(session, "list_kernels"))["kernels"]
        assert listed["pid"] == first["kernel"]["pid"] and listed["keep"] is False

        stopped = await ok(session, "stop_kernel", all=True)
        assert [k["pid"] for k in stopped["stopped"]] == [listed["pid"]]
        assert KernelRegistry().entries() == []
        assert await error_code(session, "stop_kernel", path=NB) == "KERNEL_NOT_RUNNING"

        rerun = await ok(session, "execute_cells", path=NB, names=["c0", "c1"])
        assert rerun["kernel_started"] is True and rerun["kernel_restarted"] is False
        assert rerun["ok"] is True
        assert (await ok(session, "inspect_variable", path=NB, name="y"))["repr"] == "42"
    assert KernelRegistry().entries() == []  # started for a run: stopped with the server


async def test_stop_kernel_ends_a_running_background_run_interrupted_by_the_shutdown(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path / "root", ("x = 40", TICKS))
    async with shared_in_process(path.parent, tmp_path / "cache", seconds=WAIT) as session:
        await ok(session, "start_kernel", path=NB)
        started = await ok(session, "execute_cells", path=NB, names=["c0", "c1"], background=True)
        run_id = started["run_id"]
        await _until_running(path, "c1")
        stopped = await ok(session, "stop_kernel", path=NB)
        assert len(stopped["stopped"]) == 1
        _, final = await call(session, "run_status", path=NB, run_id=run_id, wait_s=60)
        cells = {c["name"]: c for c in final.get("cells", [])}
        assert cells["c1"]["status"] == "interrupted"
        assert cells["c1"]["interrupted_by"] == "kernel_shutdown"
        rerun = await ok(session, "execute_cells", path=NB, names=["c0"])
        assert rerun["ok"] is True and rerun["kernel_started"] is True


async def test_list_and_stop_all_see_only_kernels_of_notebooks_under_the_root(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path / "root")
    outside = _notebook(tmp_path / "elsewhere")
    kept, _ = await start_live_kernel(outside)
    async with shared_in_process(path.parent, tmp_path / "cache", seconds=WAIT) as session:
        assert (await ok(session, "list_kernels"))["kernels"] == []
        await ok(session, "start_kernel", path=NB)
        (listed,) = (await ok(session, "list_kernels"))["kernels"]
        assert listed["notebook_path"] == str(path)
        stopped = await ok(session, "stop_kernel", all=True)
        assert [k["notebook_path"] for k in stopped["stopped"]] == [str(path)]
        outside_path = str(outside.relative_to(tmp_path.resolve()).as_posix())
        assert await error_code(session, "stop_kernel", path=f"../{outside_path}") == (
            "PATH_NOT_ALLOWED"
        )
    assert [e.pid for e in KernelRegistry().entries()] == [kept.pid]


async def test_kernel_tool_errors_are_the_catalogues_codes(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "root")
    async with shared_in_process(path.parent, tmp_path / "cache", seconds=WAIT) as session:
        codes = {
            "stop without kernel": await error_code(session, "stop_kernel", path=NB),
            "stop neither": await error_code(session, "stop_kernel"),
            "stop both": await error_code(session, "stop_kernel", path=NB, all=True),
            "start bad idle": await error_code(session, "start_kernel", path=NB, idle_timeout=0),
            "start missing spec": await error_code(
                session, "start_kernel", path=NB, kernel_name="no-such-kernelspec"
            ),
            "start missing file": await error_code(session, "start_kernel", path="gone.ipynb"),
            "list extra": await error_code(session, "list_kernels", path=NB),
        }
        assert (await ok(session, "stop_kernel", all=True))["stopped"] == []
    assert codes == {
        "stop without kernel": "KERNEL_NOT_RUNNING",
        "stop neither": "USAGE_ERROR",
        "stop both": "USAGE_ERROR",
        "start bad idle": "USAGE_ERROR",
        "start missing spec": "KERNELSPEC_NOT_FOUND",
        "start missing file": "FILE_NOT_FOUND",
        "list extra": "USAGE_ERROR",
    }
    assert KernelRegistry().entries() == []


def _sessions(server: Any) -> list[dict[str, Any]]:
    with server.client() as client:
        response = client.get("api/sessions")
        response.raise_for_status()
        sessions: list[dict[str, Any]] = response.json()
        return sessions


@pytest.mark.server
async def test_with_a_server_url_the_kernel_tools_act_on_the_servers_notebook_sessions(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    path = write_notebook(root, ["a = 20", "print(a + 1)"])
    with running_server(root, tmp_path / "work") as server:
        env = server_env(tmp_path / "cache", JUPYTER_JCLI_SERVER_TOKEN=server.token)
        params = module_params(
            "--root", str(root), "--server-url", server.url, "--server-root", str(root), env=env
        )
        async with open_session(params, tmp_path / "server.log", seconds=WAIT) as session:
            ran = await ok(session, "run_stale", path=path.name)
            (listed,) = (await ok(session, "list_kernels"))["kernels"]
            assert listed["transport"] == "server" and listed["server_url"] == server.url
            assert listed["kernel_id"] == ran["kernel"]["kernel_id"]
            assert listed["notebook_path"] == str(path)
            assert set(listed) == KERNEL_KEYS | {"session_id", "connections"}

            stopped = await ok(session, "stop_kernel", path=path.name)
            assert [k["kernel_id"] for k in stopped["stopped"]] == [listed["kernel_id"]]
            assert _sessions(server) == []
            assert await error_code(session, "stop_kernel", path=path.name) == (
                "KERNEL_NOT_RUNNING"
            )
            assert await error_code(session, "start_kernel", path=path.name, idle_timeout=5) == (
                "USAGE_ERROR"  # the server culls its own idle kernels
            )
            started = await ok(session, "start_kernel", path=path.name)
            assert started["started"] is True and started["kernel"]["keep"] is True
            again = await ok(session, "run_stale", path=path.name)
            assert again["kernel"]["kernel_id"] == started["kernel"]["kernel_id"]
            assert again["cells"][1]["outputs"]["text"].endswith("21\n")
        (kept,) = _sessions(server)  # started to be kept: the server's exit left it
        assert kept["kernel"]["id"] == started["kernel"]["kernel_id"]


@pytest.mark.server
async def test_a_session_the_server_created_for_a_run_is_listed_not_kept_by_either_front_end(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    path = write_notebook(root, ["a = 20", "print(a + 1)"])
    with running_server(root, tmp_path / "work") as server:
        env = server_env(tmp_path / "cache", JUPYTER_JCLI_SERVER_TOKEN=server.token)
        where = ("--server-url", server.url, "--server-root", str(root))
        params = module_params("--root", str(root), *where, env=env)
        async with open_session(params, tmp_path / "server.log", seconds=WAIT) as session:
            ran = await ok(session, "run_stale", path=path.name)
            (listed,) = (await ok(session, "list_kernels"))["kernels"]
            assert listed["keep"] is False  # the server deletes it when it exits
            assert "jupyter_jcli.mcp.workbench" in listed["started_command"]
            assert "--server-url" in listed["started_command"]
            assert (listed["epoch"], listed["runs"]) == (ran["kernel"]["epoch"], 2)
            token = ("--token", server.token)
            (by_j_cli,) = _jcli("kernel", "list", *where, *token)["kernels"]  # another process
            assert by_j_cli == listed
            stopped = await ok(session, "stop_kernel", path=path.name)
            (gone,) = stopped["stopped"]
            assert (gone["state"], gone["runs"]) == ("stopping", 0)
            assert (gone["keep"], gone["epoch"]) == (False, listed["epoch"])
            again = await ok(session, "run_stale", path=path.name)  # a new session for it
            (relisted,) = (await ok(session, "list_kernels"))["kernels"]
            assert relisted["kernel_id"] == again["kernel"]["kernel_id"] != listed["kernel_id"]
            assert (relisted["keep"], relisted["runs"]) == (False, 2)
        assert _sessions(server) == []  # gone with the server that created it
