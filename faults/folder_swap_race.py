"""Fault harness (issue 9 item 3): swap a folder in the root for a symlink to an outside
folder, repeatedly, while both MCP servers serve calls on a notebook inside that folder.

Counts calls that returned the outside notebook's content (outside reads) and cells that
landed in the outside notebook (outside writes). Bounded: ``--calls`` calls per tool (default
300), each server session at most ``--seconds`` seconds. Not collected by pytest.

Run: ``python3 -m uv run python faults/folder_swap_race.py [--calls 300]``
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client


def _notebook(word: str) -> dict[str, Any]:
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "id": "c0",
                "metadata": {},
                "execution_count": 1,
                "source": f"print('{word}')",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{word}\n"}],
            }
        ],
    }


def _swapper(root: str, outside: str, stop: Any) -> None:
    """Rename ``root/sub`` away, put a symlink to ``outside`` in its place, and back."""
    sub, away = os.path.join(root, "sub"), os.path.join(root, "sub_away")
    while not stop.is_set():
        try:
            os.rename(sub, away)
            os.symlink(outside, sub)
            time.sleep(0.002)
            os.unlink(sub)
            os.rename(away, sub)
        except OSError:
            pass
        time.sleep(0.003)
    if os.path.islink(sub):
        os.unlink(sub)
    if os.path.isdir(away) and not os.path.exists(sub):
        os.rename(away, sub)


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _session(params: StdioServerParameters, seconds: float, work: Any) -> Any:
    with anyio.fail_after(seconds), open(os.devnull, "w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)


def _params(module: str, root: Path, cache: Path) -> StdioServerParameters:
    env = dict(os.environ)
    env["JUPYTER_JCLI_CACHE_DIR"] = str(cache)
    env["JUPYTER_MCP_DISABLE_SUMMARIES"] = "1"
    return StdioServerParameters(
        command=sys.executable, args=["-m", module, "--root", str(root)], env=env
    )


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=240.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        root, outside, cache = base / "root", base / "outside", base / "cache"
        (root / "sub").mkdir(parents=True)
        outside.mkdir()
        (root / "sub" / "nb.ipynb").write_text(json.dumps(_notebook("INSIDE")))
        (outside / "nb.ipynb").write_text(json.dumps(_notebook("OUTSIDE")))
        target = str(root / "sub" / "nb.ipynb")
        counts: dict[str, dict[str, int]] = {}

        async def readonly(session: ClientSession) -> None:
            tally = counts.setdefault("read_notebook_output", {"outside": 0, "errors": 0})
            for _ in range(options.calls):
                args = {"file_path": target, "cell_index": 0, "output_index": 0}
                result = await session.call_tool("read_notebook_output", args)
                text = _text(result)
                tally["outside"] += "OUTSIDE" in text
                tally["errors"] += bool(result.is_error)

        async def workbench(session: ClientSession) -> None:
            reads = counts.setdefault("read_cells", {"outside": 0, "errors": 0})
            adds = counts.setdefault("add_cell", {"outside": 0, "errors": 0})
            for i in range(options.calls):
                result = await session.call_tool("read_cells", {"path": target})
                reads["outside"] += "OUTSIDE" in _text(result)
                reads["errors"] += bool(result.is_error)
                result = await session.call_tool(
                    "add_cell", {"path": target, "source": f"# marker {i}\nx = {i}"}
                )
                adds["errors"] += bool(result.is_error)

        stop = multiprocessing.Event()
        swapper = multiprocessing.Process(target=_swapper, args=(str(root), str(outside), stop))
        swapper.start()
        try:
            for module, work in (
                ("jupyter_jcli.mcp.readonly", readonly),
                ("jupyter_jcli.mcp.workbench", workbench),
            ):
                params = _params(module, root, cache)
                anyio.run(_session, params, options.seconds, work)
        finally:
            stop.set()
            swapper.join(10)
            if swapper.is_alive():
                swapper.terminate()
        outside_nb = json.loads((outside / "nb.ipynb").read_text())
        counts["add_cell"]["outside"] = sum(
            "# marker" in "".join(c.get("source", "")) for c in outside_nb["cells"]
        )
        leftovers = [p.name for p in outside.iterdir() if p.name != "nb.ipynb"]
    print(
        json.dumps(
            {"calls_per_tool": options.calls, "counts": counts, "outside_leftovers": leftovers},
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
