"""``jupyter-mcp --server-url URL`` over stdio with the MCP SDK's client, on a real Jupyter
Server: stale cells run on a kernel of the server (in a session JupyterLab shows), a session a
person has open is joined and shared, and a server that goes away gives its code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from workbench_client import call, error_code, module_params, ok, open_session, server_env

from server_helpers import running_server, write_notebook

pytestmark = [pytest.mark.anyio, pytest.mark.server, pytest.mark.kernel]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _sessions(server: Any) -> list[dict[str, Any]]:
    with server.client() as client:
        response = client.get("api/sessions")
        response.raise_for_status()
        sessions: list[dict[str, Any]] = response.json()
        return sessions


def _names(document: dict[str, Any]) -> list[str]:
    return [cell["name"] for cell in document["cells"] if cell["status"] != "skipped"]


async def test_jupyter_mcp_runs_stale_cells_on_a_server_kernel_that_jupyterlab_would_show(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    path = write_notebook(root, ["a = 20", "b = a + 1", "print(a + b)"])
    with running_server(root, tmp_path / "work") as server:
        env = server_env(tmp_path / "cache", JUPYTER_JCLI_SERVER_TOKEN=server.token)
        params = module_params(
            "--root", str(root), "--server-url", server.url, "--server-root", str(root), env=env
        )
        async with open_session(params, tmp_path / "server.log") as session:
            ran = await ok(session, "run_stale", path=path.name)
            assert len(_names(ran)) == 3 and ran["cells"][2]["outputs"]["text"].endswith("\n41\n")
            kernel = ran["kernel"]
            assert kernel["server_url"] == server.url and kernel["kernel_id"]
            assert kernel["attached"] is False
            (listed,) = [s for s in _sessions(server) if s["path"] == path.name]
            assert listed["kernel"]["id"] == kernel["kernel_id"]  # JupyterLab shows this one

            overview = await ok(session, "notebook_overview", path=path.name)
            first = overview["cells"][0]
            await ok(
                session,
                "update_cell",
                path=path.name,
                name=first["name"],
                source="a = 30",
                expected_rev=first["rev"],
            )
            stale = await ok(session, "run_stale", path=path.name)
            assert len(_names(stale)) == 3 and stale["cells"][2]["outputs"]["text"].endswith(
                "\n61\n"
            )
            assert stale["kernel"]["kernel_id"] == kernel["kernel_id"]  # the same kernel
            again = await ok(session, "run_stale", path=path.name)
            assert _names(again) == []
        assert [s for s in _sessions(server) if s["path"] == path.name] == []  # ours: removed


async def test_jupyter_mcp_joins_the_session_a_person_has_open_and_shares_its_state(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    path = write_notebook(root, ["total = 1", "print(total)"])
    with running_server(root, tmp_path / "work") as server:
        with server.client() as client:  # as JupyterLab opens the notebook
            response = client.post(
                "api/sessions",
                json={
                    "path": path.name,
                    "name": path.name,
                    "type": "notebook",
                    "kernel": {"name": "python3"},
                },
            )
            response.raise_for_status()
            lab_kernel = response.json()["kernel"]["id"]
        env = server_env(tmp_path / "cache", JUPYTER_JCLI_SERVER_TOKEN=server.token)
        params = module_params(
            "--root", str(root), "--server-url", server.url, "--server-root", str(root), env=env
        )
        async with open_session(params, tmp_path / "server.log") as session:
            ran = await ok(session, "run_stale", path=path.name)
            assert ran["kernel"]["attached"] is True
            assert ran["kernel"]["kernel_id"] == lab_kernel and ran["kernel"]["started_by"]
            assert await error_code(session, "restart_kernel", path=path.name) == "KERNEL_SHARED"
            seen = await ok(session, "inspect_variable", path=path.name, name="total")
            assert "1" in str(seen)
        (still,) = [s for s in _sessions(server) if s["path"] == path.name]
        assert still["kernel"]["id"] == lab_kernel  # the person's kernel keeps running


async def test_a_server_that_goes_away_gives_a_code_and_the_next_call_says_why(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    path = write_notebook(root, ["x = 1"])
    with running_server(root, tmp_path / "work") as server:
        env = server_env(tmp_path / "cache", JUPYTER_JCLI_SERVER_TOKEN=server.token)
        params = module_params(
            "--root", str(root), "--server-url", server.url, "--server-root", str(root), env=env
        )
        async with open_session(params, tmp_path / "server.log") as session:
            ran = await ok(session, "run_stale", path=path.name)
            cell = ran["cells"][0]["name"]
            server.kill()
            gone = await run_code(session, path.name, cell)
            assert gone in {"KERNEL_DIED", "SERVER_UNREACHABLE"}
            later = await run_code(session, path.name, cell)
            assert later == "SERVER_UNREACHABLE"


async def run_code(session: Any, name: str, cell: str) -> str:
    """The code a run on a gone server reports: the outcome's ``error`` (a cell that found
    its kernel gone) or the call's error code (no kernel could be reached)."""
    result, document = await call(session, "execute_cells", path=name, names=[cell])
    if result.is_error:
        return str(document["code"])
    return str(document["error"]["code"])
