"""``jupyter-mcp`` as a process: entry points, its root, a clean stdout, startup failures."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.stdio import StdioServerParameters
from workbench_client import PLOTS_NB, ok, open_session, populate_root, server_env

from tool_results import checked_result

pytestmark = pytest.mark.anyio

BIN = Path(sys.executable).parent
PROCESS_TIMEOUT = 60


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return populate_root(tmp_path / "root")


def _entry(entry: str, root: Path, env: dict[str, str]) -> StdioServerParameters:
    commands = {
        "module": [sys.executable, "-m", "jupyter_jcli.mcp.workbench"],
        "console script": [str(BIN / "jupyter-mcp")],
        "j-cli mcp workbench": [str(BIN / "j-cli"), "mcp", "workbench"],
    }
    command, *args = commands[entry]
    return StdioServerParameters(command=command, args=[*args, "--root", str(root)], env=env)


@pytest.mark.parametrize("entry", ["module", "console script", "j-cli mcp workbench"])
async def test_every_entry_point_serves_the_workbench(
    root: Path, tmp_path: Path, entry: str
) -> None:
    params = _entry(entry, root, server_env(tmp_path / "cache"))
    async with open_session(params, tmp_path / "err.log") as session:
        initialized = session.initialize_result
        listed = await session.list_tools()
        overview = await ok(session, "notebook_overview", path=PLOTS_NB)
    assert initialized is not None
    assert initialized.server_info.name == "jupyter-mcp"
    assert "notebook_overview" in [tool.name for tool in listed.tools]
    assert overview["cell_count"] == 13


async def test_without_root_the_working_directory_is_the_root(root: Path, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=str(BIN / "jupyter-mcp"), cwd=root, env=server_env(tmp_path / "cache")
    )
    async with open_session(params, tmp_path / "err.log") as session:
        overview = await ok(session, "notebook_overview", path=PLOTS_NB)
        result = await session.call_tool(
            "notebook_overview", {"path": str(tmp_path / "elsewhere.ipynb")}
        )
    assert overview["path"] == str(root / PLOTS_NB)
    is_error, document = checked_result("notebook_overview", result)
    assert is_error and document["code"] == "PATH_NOT_ALLOWED"


def _rpc(message_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}


async def test_stdout_carries_only_json_rpc(root: Path, tmp_path: Path) -> None:
    """A raw host: every stdout line is one JSON-RPC message answering our requests."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("notebook_overview", {"path": PLOTS_NB}),
        ("read_cells", {"path": PLOTS_NB, "start": 3, "stop": 7}),
        ("add_cell", {"path": PLOTS_NB, "source": "print('hello')"}),
        ("read_cells", {"path": PLOTS_NB, "names": ["missing"]}),
        ("notebook_overview", {"path": "/etc/passwd"}),
    ]
    messages: list[dict[str, object]] = [
        _rpc(
            1,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-test", "version": "0"},
            },
        ),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _rpc(2, "tools/list", {}),
    ]
    messages += [
        _rpc(3 + n, "tools/call", {"name": name, "arguments": arguments})
        for n, (name, arguments) in enumerate(calls)
    ]
    expected_ids = list(range(1, 3 + len(calls)))
    stdin = "".join(json.dumps(message) + "\n" for message in messages).encode()
    errlog = tmp_path / "err.log"
    responses: list[dict[str, Any]] = []
    with anyio.fail_after(PROCESS_TIMEOUT), errlog.open("wb") as err:
        async with await anyio.open_process(
            [sys.executable, "-m", "jupyter_jcli.mcp.workbench", "--root", str(root)],
            stderr=err,
            env=server_env(tmp_path / "cache"),
        ) as process:
            assert process.stdin is not None
            assert process.stdout is not None
            await process.stdin.send(stdin)
            buffer = b""
            while len(responses) < len(expected_ids):
                buffer += await process.stdout.receive()
                *lines, buffer = buffer.split(b"\n")
                responses += [json.loads(line) for line in lines]  # one JSON document a line
            await process.stdin.aclose()
            rest = b""
            async for chunk in process.stdout:
                rest += chunk
            returncode = await process.wait()
    assert (buffer + rest).strip() == b""
    assert returncode == 0
    by_id = {response["id"]: response for response in responses}
    assert sorted(by_id) == expected_ids
    results = [by_id[3 + n]["result"] for n in range(len(calls))]
    checked = [
        checked_result(name, result)[0] for (name, _), result in zip(calls, results, strict=True)
    ]
    assert checked == [False] * 3 + [True] * 2
    assert b"Traceback" not in errlog.read_bytes()


def test_importing_the_server_prints_nothing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import jupyter_jcli.mcp.workbench"],
        capture_output=True,
        timeout=PROCESS_TIMEOUT,
        check=True,
    )
    assert done.stdout == b""
    assert done.stderr == b""


def _run(*command: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in command],
        capture_output=True,
        text=True,
        timeout=PROCESS_TIMEOUT,
        check=False,
    )


@pytest.mark.parametrize(
    ("script", "subcommand"),
    [("jupyter-mcp", "workbench"), ("jcli-notebook-output", "serve")],
)
def test_the_console_script_and_its_j_cli_mcp_subcommand_take_the_same_options(
    script: str, subcommand: str
) -> None:
    console = _run(BIN / script, "--help")
    under_j_cli = _run(BIN / "j-cli", "mcp", subcommand, "--help")
    assert (console.returncode, under_j_cli.returncode) == (0, 0)
    flags = [set(re.findall(r"--[a-z][a-z-]+", done.stdout)) for done in (console, under_j_cli)]
    assert {"--root", "--transport", "--port", "--token-file", "--version"} <= flags[0]
    assert flags[0] == flags[1]


@pytest.mark.parametrize("script", ["jupyter-mcp", "jcli-notebook-output"])
def test_help_and_version_load_no_mcp_sdk(script: str) -> None:
    for option in ("--help", "--version"):
        done = _run(sys.executable, "-X", "importtime", BIN / script, option)
        assert done.returncode == 0, done.stderr[-2000:]
        imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()}
        assert not {name for name in imported if name == "mcp" or name.startswith("mcp.")}
