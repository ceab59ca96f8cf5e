"""``jupyter-mcp``'s kernels die with it (stdin closed, SIGTERM), and a kernel's own stdout
never reaches the JSON-RPC stream."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from workbench_client import server_env

from jupyter_jcli.workbench import create_notebook
from tool_results import checked_result

pytestmark = [pytest.mark.anyio, pytest.mark.kernel]

WAIT_SECONDS = 90
NB = "noisy.ipynb"
NOISY_CELL = (
    "import os, sys\n"
    "os.write(1, b'RAW-KERNEL-FD1\\n')\n"
    "sys.__stdout__.write('KERNEL-SYS-STDOUT\\n'); sys.__stdout__.flush()\n"
    "print('printed by the cell')"
)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = (tmp_path / "root").resolve()
    folder.mkdir()
    create_notebook(folder / NB, cells=[{"source": NOISY_CELL, "name": "noisy"}])
    return folder


def _alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class _RawHost:
    """A host speaking newline-delimited JSON-RPC to the server's stdin/stdout."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.buffer = b""
        self.lines: list[bytes] = []

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps(message) + "\n").encode())

    async def response(self, message_id: int) -> dict[str, Any]:
        assert self.process.stdout is not None
        while True:
            for line in self.lines:
                document: dict[str, Any] = json.loads(line)  # every line is JSON-RPC
                if document.get("id") == message_id:
                    return document
            self.buffer += await self.process.stdout.receive()
            *lines, self.buffer = self.buffer.split(b"\n")
            self.lines += lines

    async def rest(self) -> bytes:
        assert self.process.stdout is not None
        rest = self.buffer
        async for chunk in self.process.stdout:
            rest += chunk
        return rest


async def _start_and_execute(host: _RawHost) -> int:
    """Handshake, run the noisy cell; return the kernel's pid."""
    await host.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw-host", "version": "0"},
            },
        }
    )
    await host.response(1)
    await host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    await host.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "execute_cells", "arguments": {"path": NB, "names": ["noisy"]}},
        }
    )
    is_error, document = checked_result("execute_cells", (await host.response(2))["result"])
    assert not is_error, document
    assert document["cells"][0]["status"] == "ok"
    assert "printed by the cell" in document["cells"][0]["outputs"]["text"]
    pid = document["kernel"]["pid"]
    assert isinstance(pid, int)
    assert _alive(pid)
    return pid


@pytest.mark.parametrize("ending", ["stdin closed", "SIGTERM"])
async def test_kernels_end_with_the_server(root: Path, tmp_path: Path, ending: str) -> None:
    errlog = tmp_path / "err.log"
    with anyio.fail_after(WAIT_SECONDS), errlog.open("wb") as err:
        async with await anyio.open_process(
            [sys.executable, "-m", "jupyter_jcli.mcp.workbench", "--root", str(root)],
            stderr=err,
            env=server_env(tmp_path / "cache"),
        ) as process:
            host = _RawHost(process)
            pid = await _start_and_execute(host)
            if ending == "SIGTERM":
                process.send_signal(signal.SIGTERM)
            else:
                assert process.stdin is not None
                await process.stdin.aclose()
            rest = await host.rest()
            returncode = await process.wait()
    assert rest.strip() == b""  # nothing but the JSON-RPC lines already parsed
    assert b"RAW-KERNEL-FD1" not in b"".join(host.lines)
    stderr = errlog.read_bytes()
    assert b"RAW-KERNEL-FD1" in stderr  # the kernel's own stdout went to stderr
    assert b"KERNEL-SYS-STDOUT" in stderr
    assert b"Traceback" not in stderr
    assert returncode == (-signal.SIGTERM if ending == "SIGTERM" else 0)
    assert not _alive(pid)
