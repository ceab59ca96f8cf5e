"""Helpers for driving ``jupyter-mcp`` through the MCP SDK's own stdio client, as a host does."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.dispatcher import ProgressFnT

from tool_results import checked_result

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
WAIT_SECONDS = 120
"""Bound on one whole client session (spawn, handshake, calls, kernels, shutdown)."""

PLOTS_NB = "04.03-Errorbars.ipynb"  # cells 4, 6, 11: one PNG each
ERRORS_NB = "01.06-Errors-and-Debugging.ipynb"
TEXT_NB = "text_outputs_and_images.ipynb"  # cell 9: two PNGs


def server_env(cache: Path, **extra: str) -> dict[str, str]:
    """The server's environment: ours, with the snapshot cache in ``cache`` (never the user's
    cache), deterministic summaries (no API calls) and a 1 s progress heartbeat."""
    env = dict(os.environ)
    env["JUPYTER_JCLI_CACHE_DIR"] = str(cache)
    env["JUPYTER_MCP_DISABLE_SUMMARIES"] = "1"
    env["JUPYTER_MCP_HEARTBEAT_SECONDS"] = "1"
    env.update(extra)
    return env


def module_params(
    *args: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> StdioServerParameters:
    """Spawn the server as ``python -m jupyter_jcli.mcp.workbench ARGS``."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "jupyter_jcli.mcp.workbench", *args],
        cwd=cwd,
        env=dict(env) if env is not None else None,
    )


def populate_root(root: Path) -> Path:
    """Copy real notebooks into ``root`` (a tmp folder); return it resolved."""
    root.mkdir(parents=True, exist_ok=True)
    for name in (PLOTS_NB, ERRORS_NB, TEXT_NB):
        shutil.copyfile(NOTEBOOKS / name, root / name)
    return root.resolve()


@asynccontextmanager
async def open_session(
    params: StdioServerParameters, errlog: Path, *, seconds: float = WAIT_SECONDS
) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` on a spawned server, bounded in time.

    The server's stderr goes to ``errlog``.
    """
    with anyio.fail_after(seconds), errlog.open("a", encoding="utf-8") as err:
        async with (
            stdio_client(params, errlog=err) as (read_stream, write_stream),
            ClientSession(read_stream, write_stream) as session,
        ):
            await session.initialize()
            yield session


async def call(
    session: ClientSession,
    tool: str,
    progress_callback: ProgressFnT | None = None,
    **arguments: Any,
) -> tuple[types.CallToolResult, Any]:
    """Call a tool; return the result and its text JSON, checked by
    :func:`tool_results.checked_result` (success: valid structured content equal to the text;
    error: the error JSON as text, no structured content)."""
    result = await session.call_tool(tool, arguments, progress_callback=progress_callback)
    _, document = checked_result(tool, result)
    return result, document


async def ok(session: ClientSession, tool: str, **arguments: Any) -> Any:
    """Call a tool that must succeed; return its JSON document."""
    result, document = await call(session, tool, **arguments)
    assert not result.is_error, document
    assert document["schema_version"] == 1
    assert document["status"] == "ok"
    return document


async def error_code(session: ClientSession, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail; check the error JSON's shape and return its code."""
    result, document = await call(session, tool, **arguments)
    assert result.is_error, document
    assert document["schema_version"] == 1
    assert document["status"] == "error"
    assert isinstance(document["message"], str)
    assert "Traceback" not in json.dumps(document)
    code: str = document["code"]
    return code


def images(result: types.CallToolResult) -> list[types.ImageContent]:
    """The image blocks of a result, in order."""
    return [block for block in result.content if isinstance(block, types.ImageContent)]
