"""``jupyter-mcp``'s ``execute_cells`` saves each cell's outputs as it finishes (issue 27 item
2): while its third cell runs the file already holds the first cell's outputs (the wait for
them is bounded by ``fail_after``: before the fix nothing was written until the call ended),
and a SIGHUP then (the server's cleanup saves what its running batches hold before it stops
the kernels) leaves the two finished cells saved in a whole notebook. A real server process
on a real kernel."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import nbformat
import pytest
from test_workbench_lifecycle import WAIT_SECONDS, _RawHost
from workbench_client import server_env

from jupyter_jcli.workbench import create_notebook

pytestmark = [pytest.mark.anyio, pytest.mark.kernel]

NB = "three.ipynb"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _outputs(path: Path) -> list[list[Any]]:
    try:
        return [cell.get("outputs", []) for cell in json.loads(path.read_bytes())["cells"]]
    except (OSError, ValueError, KeyError):
        return []


async def test_execute_cells_saves_finished_cells_while_it_runs_and_on_sighup(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "root").resolve()
    root.mkdir()
    mark = tmp_path / "third-running"
    cells = [
        {"source": "import time\ntime.sleep(2.5)\nprint('one')", "name": "one"},
        {"source": "print('two')", "name": "two"},  # ends just after a write: it waits
        {"source": f"open({str(mark)!r}, 'w').close()\ntime.sleep(120)", "name": "three"},
    ]
    create_notebook(root / NB, cells=cells)
    path = root / NB
    with anyio.fail_after(WAIT_SECONDS), (tmp_path / "err.log").open("wb") as err:
        async with await anyio.open_process(
            [sys.executable, "-m", "jupyter_jcli.mcp.workbench", "--root", str(root)],
            stderr=err,
            env=server_env(tmp_path / "cache"),
        ) as process:
            host = _RawHost(process)
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
            names = ["one", "two", "three"]
            arguments = {"path": NB, "names": names}
            await host.send(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "execute_cells", "arguments": arguments},
                }
            )
            while not (mark.exists() and _outputs(path)[:1] != [[]]):  # bounded: fail_after
                await anyio.sleep(0.05)
            process.send_signal(signal.SIGHUP)
            returncode = await process.wait()
    saved = nbformat.read(path, as_version=4)
    nbformat.validate(saved)
    texts = [[output.get("text") for output in cell.outputs] for cell in saved.cells]
    assert texts[:2] == [["one\n"], ["two\n"]]  # the third: what its stop left, if anything
    assert returncode == -signal.SIGHUP
