"""``jcli-notebook-output`` as a process: its entry points, a clean stdout, and no writes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jupytext
import pytest
from mcp.client.stdio import StdioServerParameters
from readonly_client import (
    ERRORS_NB,
    PLOTLY_NB,
    TEXT_NB,
    TOOL,
    call,
    module_params,
    open_session,
    populate_root,
)

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


def _entry_points(root: Path) -> dict[str, StdioServerParameters]:
    return {
        "module": module_params("--root", str(root)),
        "console script": StdioServerParameters(
            command=str(BIN / "jcli-notebook-output"), args=["--root", str(root)]
        ),
        "j-cli mcp serve": StdioServerParameters(
            command=str(BIN / "j-cli"), args=["mcp", "serve", "--root", str(root)]
        ),
    }


@pytest.mark.parametrize("entry", ["module", "console script", "j-cli mcp serve"])
async def test_every_entry_point_serves_the_tool(root: Path, tmp_path: Path, entry: str) -> None:
    params = _entry_points(root)[entry]
    async with open_session(params, tmp_path / "err.log") as session:
        initialized = session.initialize_result
        tools = await session.list_tools()
        result, doc = await call(session, file_path=TEXT_NB, cell_index=9, output_index=1)
    assert initialized is not None
    assert initialized.server_info.name == "jcli-notebook-output"
    assert [tool.name for tool in tools.tools] == [TOOL]
    assert not result.is_error
    assert doc["source"]["output_index"] == 1


def _rpc(message_id: int, method: str, params: dict[str, object]) -> dict[str, object]:
    return {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}


async def test_stdout_carries_only_json_rpc(root: Path, tmp_path: Path) -> None:
    """A raw host: every stdout line is one JSON-RPC message answering our requests."""
    calls = [
        {"file_path": TEXT_NB, "cell_index": 9},
        {"file_path": TEXT_NB, "cell_index": 9, "output_index": 0},
        {"file_path": ERRORS_NB, "cell_index": 6, "output_index": 0},
        {"file_path": TEXT_NB, "cell_index": 99},
        {"file_path": "/etc/passwd", "cell_index": 0},
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
        _rpc(3 + n, "tools/call", {"name": TOOL, "arguments": arguments})
        for n, arguments in enumerate(calls)
    ]
    expected_ids = list(range(1, 3 + len(calls)))
    stdin = "".join(json.dumps(message) + "\n" for message in messages).encode()
    errlog = tmp_path / "err.log"
    responses: list[dict[str, Any]] = []
    with anyio.fail_after(PROCESS_TIMEOUT), errlog.open("wb") as err:
        async with await anyio.open_process(
            [sys.executable, "-m", "jupyter_jcli.mcp.readonly", "--root", str(root)],
            stderr=err,
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
    assert all(response["jsonrpc"] == "2.0" for response in responses)
    by_id = {response["id"]: response for response in responses}
    assert sorted(by_id) == expected_ids
    results = [by_id[3 + n]["result"] for n in range(len(calls))]
    assert [checked_result(TOOL, result)[0] for result in results] == [False] * 3 + [True] * 2
    assert b"Traceback" not in errlog.read_bytes()


def test_importing_the_servers_prints_nothing() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import jupyter_jcli.mcp, jupyter_jcli.mcp.readonly, jupyter_jcli.cli._mcp",
        ],
        capture_output=True,
        timeout=PROCESS_TIMEOUT,
        check=True,
    )
    assert done.stdout == b""
    assert done.stderr == b""


def _tree(folder: Path) -> dict[str, str]:
    """Every entry under ``folder``: files by content hash and mtime, folders and links."""
    state: dict[str, str] = {}
    for path in sorted(folder.rglob("*")):
        key = str(path.relative_to(folder))
        if path.is_symlink():
            state[key] = f"link:{os.readlink(path)}"
        elif path.is_dir():
            state[key] = "dir"
        else:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            state[key] = f"{digest}:{path.stat().st_mtime_ns}"
    return state


async def test_the_server_writes_nothing(root: Path, tmp_path: Path) -> None:
    notebook = json.loads((root / TEXT_NB).read_text(encoding="utf-8"))
    text = jupytext.writes(jupytext.reads(json.dumps(notebook), fmt="ipynb"), fmt="py:percent")
    (root / "text_outputs_and_images.py").write_text(text, encoding="utf-8")
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    before_root, before_cwd = _tree(root), _tree(workdir)
    errlog = tmp_path / "err.log"
    async with open_session(module_params("--root", str(root), cwd=workdir), errlog) as session:
        for arguments in (
            {"file_path": TEXT_NB, "cell_index": 9},
            {"file_path": TEXT_NB, "cell_index": 9, "output_index": 0},
            {"file_path": TEXT_NB, "cell_index": 5, "output_index": 0, "limit": 10},
            {"file_path": PLOTLY_NB, "cell_index": 4, "output_index": 0},
            {"file_path": "text_outputs_and_images.py", "cell_index": 9, "output_index": 1},
            {"file_path": "malformed.ipynb", "cell_index": 0, "output_index": 0},
            {"file_path": "truncated.ipynb", "cell_index": 0},
            {"file_path": "missing.ipynb", "cell_index": 0},
        ):
            await call(session, **arguments)
    assert _tree(root) == before_root
    assert _tree(workdir) == before_cwd
