"""``jupyter-mcp`` and ``jcli-notebook-output`` over streamable HTTP, as real processes.

Each test starts the console script with ``--transport streamable-http`` on a free port of
127.0.0.1 (:mod:`mcp_http_helpers`) and drives it with the Python SDK's own streamable HTTP
client, or as a plain HTTP client where the token is what is tested.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import click
import psutil
import pytest
from workbench_client import error_code, ok

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.mcp import readonly, workbench
from jupyter_jcli.mcp._http import TOKEN_ENV, transport_from_options, transport_options
from jupyter_jcli.workbench import create_notebook
from mcp_http_helpers import (
    SCRIPTS,
    HttpServer,
    answer,
    http_session,
    open_raw_session,
    post,
    rpc,
    running_http_server,
)
from server_helpers import START_WAIT

pytestmark = [pytest.mark.anyio]

WAIT_SECONDS = 120
NB = "work.ipynb"
MODERN_VERSION = "2026-07-28"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = (tmp_path / "root").resolve()
    folder.mkdir()
    create_notebook(
        folder / NB,
        cells=[
            {"source": "x = 20", "name": "setup"},
            {"source": "print(x + 1)", "name": "show"},
        ],
    )
    return folder


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    create_notebook(folder / NB, cells=[{"source": "1", "name": "one"}])
    return folder / NB


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.kernel
async def test_python_client_reads_edits_and_runs_a_cell_then_sigterm_stops_the_kernel(
    root: Path, tmp_path: Path, outside: Path
) -> None:
    with running_http_server("jupyter-mcp", root, tmp_path) as server:
        with anyio.fail_after(WAIT_SECONDS):
            async with http_session(server.url, server.token) as session:
                listed = await session.list_tools()
                assert sorted(tool.name for tool in listed.tools) == sorted(
                    tool.name for tool in workbench.tools()
                )
                overview = await ok(session, "notebook_overview", path=NB)
                setup = overview["cells"][0]
                assert setup["name"] == "setup"
                await ok(
                    session,
                    "update_cell",
                    path=NB,
                    name="setup",
                    expected_rev=setup["rev"],
                    source="x = 41",
                )
                ran = await ok(session, "execute_cells", path=NB, names=["setup", "show"])
                assert [cell["status"] for cell in ran["cells"]] == ["ok", "ok"]
                assert "42" in ran["cells"][1]["outputs"]["text"]
                pid = ran["kernel"]["pid"]
                assert _alive(pid)
                refused = await error_code(session, "notebook_overview", path=str(outside))
                assert refused == ErrorCode.PATH_NOT_ALLOWED
        assert "x = 41" in (root / NB).read_text()
        assert server.stop(signal.SIGTERM) == -signal.SIGTERM
    assert not _alive(pid)


@pytest.mark.kernel
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_during_a_running_cell_stops_the_server_and_its_kernel(
    root: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    started = tmp_path / "cell-started"
    code = f"import time\nopen({str(started)!r}, 'w').close()\ntime.sleep(600)"
    with running_http_server("jupyter-mcp", root, tmp_path) as server:
        with anyio.fail_after(WAIT_SECONDS):
            async with http_session(server.url, server.token) as session:
                await ok(session, "execute_code", path=NB, code="1")  # the kernel is up
                kernels = psutil.Process(server.process.pid).children(recursive=True)
                assert kernels
                async with anyio.create_task_group() as group:
                    group.start_soon(_call_quietly, session, code)
                    while not started.exists():
                        await anyio.sleep(0.1)
                    returncode = await anyio.to_thread.run_sync(server.stop, sig)
                    group.cancel_scope.cancel()
    assert returncode == -sig
    # the server killed them on its way out (SIGKILL at the latest); their end is the
    # system's to deliver, within seconds even on a loaded machine (a kernel left running
    # would sleep on for 600 s)
    psutil.wait_procs(kernels, timeout=15)
    assert not [kernel for kernel in kernels if _alive(kernel.pid)]


async def _call_quietly(session: Any, code: str) -> None:
    """A call the server's stop interrupts (whatever the client then sees)."""
    with contextlib.suppress(Exception):
        await session.call_tool("execute_code", {"path": NB, "code": code})


@pytest.mark.kernel
async def test_a_call_without_or_with_a_wrong_token_gets_401_and_leaves_no_trace(
    root: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "the-kernel-ran"
    before = (root / NB).read_bytes()
    with running_http_server("jupyter-mcp", root, tmp_path) as server:
        session_id = open_raw_session(server)
        calls = [
            rpc("tools/call", {"name": "create_notebook", "arguments": {"path": "new.ipynb"}}, 2),
            rpc(
                "tools/call",
                {
                    "name": "execute_code",
                    "arguments": {"path": NB, "code": f"open({str(marker)!r}, 'w').close()"},
                },
                3,
            ),
            rpc(
                "tools/call",
                {"name": "remove_cell", "arguments": {"path": NB, "name": "show"}},
                4,
            ),
        ]
        refused_headers = [None, "Bearer wrong-token-of-enough-length", f"Basic {server.token}"]
        for authorization in refused_headers:
            for call in calls:
                response = post(server, call, authorization=authorization, session_id=session_id)
                assert response.status_code == 401, response.text
                modern = _modern_post(server, call, authorization)
                assert modern.status_code == 401, modern.text
        assert not marker.exists()
        assert not (root / "new.ipynb").exists()
        assert (root / NB).read_bytes() == before
        assert not psutil.Process(server.process.pid).children(recursive=True)  # no kernel
        # The same call with the token does run: the refusals above were the token's.
        response = post(
            server, calls[1], authorization=f"Bearer {server.token}", session_id=session_id
        )
        assert response.status_code == 200, response.text
        assert answer(response)["result"]["isError"] is False
        assert marker.exists()


def _modern_post(server: HttpServer, call: dict[str, Any], authorization: str | None) -> Any:
    """The same call as a 2026-07-28 request (no session: one POST would run the tool)."""
    import httpx

    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN_VERSION,
    }
    if authorization is not None:
        headers["Authorization"] = authorization
    return httpx.post(server.url, json=call, headers=headers, timeout=60)


async def test_readonly_server_over_http_reads_outputs_inside_its_root_only(
    root: Path, tmp_path: Path, outside: Path
) -> None:
    with running_http_server("jcli-notebook-output", root, tmp_path) as server:
        with anyio.fail_after(WAIT_SECONDS):
            async with http_session(server.url, server.token) as session:
                listed = await session.list_tools()
                assert [tool.name for tool in listed.tools] == [readonly.tool().name]
                document = await ok(session, "read_notebook_output", file_path=NB, cell_index=0)
                assert document["source"]["cell_index"] == 0
                refused = await error_code(
                    session, "read_notebook_output", file_path=str(outside), cell_index=0
                )
                assert refused == ErrorCode.PATH_NOT_ALLOWED
        assert server.stop(signal.SIGTERM) == -signal.SIGTERM


def test_a_host_header_is_accepted_only_when_allowed(root: Path, tmp_path: Path) -> None:
    with running_http_server(
        "jcli-notebook-output", root, tmp_path, "--allow-host", "hub.example.org"
    ) as server:
        bearer = f"Bearer {server.token}"
        init = rpc(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-http", "version": "0"},
            },
        )
        assert post(server, init, authorization=bearer, host="evil.example").status_code == 421
        assert post(server, init, authorization=None, host="evil.example").status_code == 401
        accepted = post(server, init, authorization=bearer, host="hub.example.org")
        assert accepted.status_code == 200, accepted.text


def test_a_port_in_use_is_a_usage_error_at_start(root: Path, tmp_path: Path) -> None:

    with running_http_server("jcli-notebook-output", root, tmp_path) as server:
        port = server.url.split(":")[2].split("/")[0]
        env = dict(os.environ, **{TOKEN_ENV: server.token})
        script = str(SCRIPTS / "jcli-notebook-output")
        done = subprocess.run(
            [script, "--transport", "streamable-http", "--port", port, "--root", str(root)],
            capture_output=True,
            text=True,
            env=env,
            timeout=START_WAIT,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    assert json.loads(done.stderr.splitlines()[-1])["code"] == ErrorCode.USAGE_ERROR
    assert server.token not in done.stderr


@click.command()
@transport_options
def _parse(**options: Any) -> dict[str, Any]:
    return options


def _options(*argv: str) -> dict[str, Any]:
    """The transport options as the servers' command line parses them."""
    parsed: dict[str, Any] = _parse.main(list(argv), standalone_mode=False)
    return parsed


@pytest.mark.parametrize(
    ("argv", "environ", "code"),
    [
        (["--port", "9000"], {}, ErrorCode.USAGE_ERROR),  # an HTTP option with stdio
        (["--transport", "streamable-http", "--port", "70000"], {}, ErrorCode.USAGE_ERROR),
        (["--transport", "streamable-http"], {TOKEN_ENV: "short"}, ErrorCode.USAGE_ERROR),
        (
            ["--transport", "streamable-http"],
            {TOKEN_ENV: "has a space in the middle"},
            ErrorCode.USAGE_ERROR,
        ),
    ],
)
def test_transport_options_are_checked_before_serving(
    argv: list[str], environ: dict[str, str], code: ErrorCode
) -> None:
    with pytest.raises(JcliError) as caught:
        transport_from_options(**_options(*argv), environ=environ)
    assert caught.value.code == code


def test_a_missing_token_file_is_refused_by_the_option_and_by_the_transport() -> None:
    missing = "/nonexistent/token"
    with pytest.raises(click.BadParameter):  # the command line: click's usage error
        _options("--transport", "streamable-http", "--token-file", missing)
    with pytest.raises(JcliError) as caught:  # gone after the command line checked it
        transport_from_options(transport="streamable-http", token_file=missing, environ={})
    assert caught.value.code == ErrorCode.FILE_NOT_FOUND


def test_the_token_comes_from_the_file_then_the_environment_then_is_generated(
    tmp_path: Path,
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("from-the-file-0123456789\n")
    environ = {TOKEN_ENV: "from-the-environment-0123"}
    http = ["--transport", "streamable-http"]
    from_file = transport_from_options(
        **_options(*http, "--token-file", str(token_file)), environ=environ
    )
    from_env = transport_from_options(**_options(*http), environ=environ)
    generated = transport_from_options(**_options(*http), environ={})
    assert from_file is not None and from_env is not None and generated is not None
    assert (from_file.token, from_file.token_source) == ("from-the-file-0123456789", "--token-file")
    assert (from_env.token, from_env.token_source) == ("from-the-environment-0123", TOKEN_ENV)
    assert generated.token_source == "generated" and len(generated.token) >= 32
    assert (generated.host, from_env.host) == ("127.0.0.1", "127.0.0.1")
    assert transport_from_options(**_options(), environ={}) is None  # stdio stays the default
    assert generated.token not in repr(generated)
