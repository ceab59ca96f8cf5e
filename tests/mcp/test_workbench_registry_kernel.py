"""``jupyter-mcp`` and ``j-cli`` share one kernel per notebook through the registry."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters
from workbench_client import error_code, ok, open_session, server_env

from jupyter_jcli.kernels import KernelRegistry

pytestmark = [pytest.mark.anyio, pytest.mark.kernel]

TIMEOUT = 120


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _notebook(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": source,
         "execution_count": None, "outputs": []}
        for i, source in enumerate(["x = 40", "y = x + 2", "print(y)"])
    ]  # fmt: skip
    path = folder / "shared.ipynb"
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


def _jcli(env: dict[str, str], *args: str | Path) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "jupyter_jcli", "-j", *map(str, args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=TIMEOUT,
        check=False,
        env=env,
    )
    document: dict[str, Any] = json.loads(done.stdout)
    return done.returncode, document


async def test_jupyter_mcp_and_j_cli_run_on_one_kernel_and_agree_on_freshness(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path / "root")
    env = server_env(tmp_path / "cache")
    status, started = _jcli(env, "kernel", "start", path)
    assert status == 0
    pid = started["kernel"]["pid"]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "jupyter_jcli.mcp.workbench", "--root", str(path.parent)],
        env=env,
    )
    async with open_session(params, tmp_path / "err.log", seconds=TIMEOUT) as session:
        overview = await ok(session, "notebook_overview", path=path.name)
        first, second, third = (c["name"] for c in overview["cells"])
        assert overview["kernel"]["pid"] == pid
        assert overview["kernel"]["started_by"] == started["kernel"]["started_by"]
        executed = await ok(session, "execute_cells", path=path.name, names=[first])
        assert executed["kernel"]["pid"] == pid and executed["kernel_started"] is False

        status, stale = _jcli(env, "run", path, "--stale")
        assert status == 0
        assert [c["name"] for c in stale["run"]["cells"]] == [second, third]
        assert stale["run"]["cells"][1]["outputs"]["text"].endswith("42\n")

        after = await ok(session, "notebook_overview", path=path.name)
        assert {c["status"] for c in after["cells"]} == {"fresh"}
        plan = await ok(session, "run_stale", path=path.name, dry_run=True)
        assert plan["plan"] == []
        variable = await ok(session, "inspect_variable", path=path.name, name="y")
        assert variable["repr"] == "42"
    (entry,) = KernelRegistry().entries()  # the server left the kernel it joined running
    assert entry.pid == pid


def _wait_running(path: Path, mark: Path) -> None:
    """Until the kernel runs the exec's code: ``mark`` exists (the code's first act) and the
    registry says busy. The busy record alone comes before the ``execute_request`` is sent, so
    a kill right after it can leave the kernel idle, and the next run rightly proceeds."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        entry = KernelRegistry().read(path.resolve())
        if mark.exists() and entry is not None and entry.busy:
            return
        time.sleep(0.05)
    raise AssertionError("the exec's code never ran on the kernel")


async def test_jupyter_mcp_is_refused_not_queued_behind_code_a_killed_j_cli_exec_left_running(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path / "root")
    env = server_env(tmp_path / "cache")
    assert _jcli(env, "kernel", "start", path)[0] == 0
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "jupyter_jcli.mcp.workbench", "--root", str(path.parent)],
        env=env,
    )
    async with open_session(params, tmp_path / "err.log", seconds=TIMEOUT) as session:
        first = (await ok(session, "notebook_overview", path=path.name))["cells"][0]["name"]
        mark = tmp_path / "running"
        killed = subprocess.Popen(
            [sys.executable, "-m", "jupyter_jcli", "-j", "exec", str(path), "--code",
             f"open({str(mark)!r}, 'w').close()\nimport time\ntime.sleep(120)"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        try:
            _wait_running(path, mark)
        finally:
            killed.kill()
            killed.communicate(timeout=TIMEOUT)
        code = await error_code(session, "execute_cells", path=path.name, names=[first])
        assert _jcli(env, "kernel", "interrupt", path)[0] == 0
        executed = await ok(session, "execute_cells", path=path.name, names=[first])
    _jcli(env, "kernel", "stop", path)
    assert code == "KERNEL_BUSY"
    assert [c["status"] for c in executed["cells"]] == ["ok"]
