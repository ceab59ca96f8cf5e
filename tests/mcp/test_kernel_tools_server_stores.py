"""``jupyter-mcp``'s ``start_kernel``, ``list_kernels`` and ``stop_kernel`` with a notebook
path on a server store (``--store contents``: the Contents API; ``--store collab``: the
collaborative room of jupyter-collaboration), through the MCP SDK's stdio client on the real
``jupyter-mcp`` console script, against a real Jupyter Server (with collaboration for
``collab``; without for ``contents``, which refuses to write beneath a server's rooms). The
agent's folder (``--root``, its working directory) is not the server's root: the tools' paths
are the server's.

A kernel started with the path is the one a run joins (``kernel_started`` false: joined, as
with a local kept kernel), ``list_kernels`` shows it, ``stop_kernel`` with the path stops it
(the server has no session left) and a second stop is ``KERNEL_NOT_RUNNING``. Codes and the
server's state are asserted, never message text."""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.stdio import StdioServerParameters
from workbench_client import error_code, ok, open_session, server_env

from server_helpers import NO_COLLABORATION, RunningServer, running_server, write_notebook

pytestmark = [pytest.mark.anyio, pytest.mark.server, pytest.mark.kernel]

WAIT = 240.0
"""Bound on one whole client session (spawn, two kernel starts on the server, shutdown)."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["contents", "collab"])
def store(request: pytest.FixtureRequest) -> str:
    """The ``--store`` of the test."""
    kind: str = request.param
    return kind


@pytest.fixture(scope="module")
def server(store: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A Jupyter Server for ``store``: with real-time collaboration (jupyter-collaboration's
    rooms) for ``collab``; without for ``contents``, which refuses to write beneath a
    server's rooms (``USAGE_ERROR``, reason ``server_has_rooms``)."""
    root = tmp_path_factory.mktemp(f"{store}-root").resolve()
    extra = NO_COLLABORATION if store == "contents" else ()
    with running_server(root, tmp_path_factory.mktemp(f"{store}-work"), extra_args=extra) as up:
        yield up


def _sessions(server: RunningServer) -> list[dict[str, Any]]:
    """The server's sessions, as JupyterLab lists them."""
    with server.client() as client:
        response = client.get("api/sessions")
        response.raise_for_status()
        sessions: list[dict[str, Any]] = response.json()
        return sessions


async def test_a_kernel_started_with_a_path_runs_is_listed_and_stops_with_that_path(
    store: str, server: RunningServer, tmp_path: Path
) -> None:
    folder = server.root / f"proj-{secrets.token_hex(4)}"
    folder.mkdir()
    write_notebook(folder, ["# load\nx = 20", "# show\nprint(x + 1)"], "demo")
    path = f"{folder.name}/demo.ipynb"  # the server's path
    agent = tmp_path / "agent"
    agent.mkdir()
    env = server_env(tmp_path / "cache", JUPYTER_JCLI_SERVER_TOKEN=server.token)
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("jupyter-mcp")),
        args=["--root", str(agent), "--server-url", server.url, "--store", store],
        cwd=agent,
        env=env,
    )
    async with open_session(params, tmp_path / "mcp.log", seconds=WAIT) as session:
        started = await ok(session, "start_kernel", path=path)
        kernel = started["kernel"]
        assert started["started"] is True and kernel["transport"] == "server"
        assert [s["kernel"]["id"] for s in _sessions(server)] == [kernel["kernel_id"]]

        ran = await ok(session, "execute_cells", path=path, names=["load", "show"])
        assert ran["kernel"]["kernel_id"] == kernel["kernel_id"]
        assert ran["kernel_started"] is False  # joined the session start_kernel made
        assert [cell["status"] for cell in ran["cells"]] == ["ok", "ok"]

        listed = await ok(session, "list_kernels")
        assert [k["kernel_id"] for k in listed["kernels"]] == [kernel["kernel_id"]]
        assert listed["kernels"][0]["notebook_path"] == kernel["notebook_path"]

        stopped = await ok(session, "stop_kernel", path=path)
        assert [k["kernel_id"] for k in stopped["stopped"]] == [kernel["kernel_id"]]
        assert _sessions(server) == []
        assert (await ok(session, "list_kernels"))["kernels"] == []
        assert await error_code(session, "stop_kernel", path=path) == "KERNEL_NOT_RUNNING"
    assert _sessions(server) == []
    assert list(agent.rglob("*")) == []  # nothing written in the agent's folder
