"""Helpers for driving ``jcli-notebook-output`` through the MCP SDK's own stdio client."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession, ListRootsFnT
from mcp.client.stdio import StdioServerParameters, stdio_client
from pydantic import FileUrl

from tool_results import checked_result

NOTEBOOKS = Path(__file__).parent.parent / "fixtures" / "notebooks"
TOOL = "read_notebook_output"
WAIT_SECONDS = 60
"""Bound on one whole client session (spawn, handshake, calls, shutdown)."""

TEXT_NB = "text_outputs_and_images.ipynb"  # cell 5 HTML+plain, 9 two PNGs, 11 an error
PLOTLY_NB = "plotly_graphs.ipynb"  # cell 4: application/vnd.plotly.v1+json
ERRORS_NB = "01.06-Errors-and-Debugging.ipynb"  # cell 6: a stdout stream


def module_params(*args: str, cwd: Path | None = None) -> StdioServerParameters:
    """Spawn the server as ``python -m jupyter_jcli.mcp.readonly ARGS``."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "jupyter_jcli.mcp.readonly", *args], cwd=cwd
    )


def populate_root(root: Path) -> Path:
    """Copy real notebooks (and a few hand-made bad files) into ``root``; return it resolved."""
    root.mkdir(parents=True, exist_ok=True)
    for name in (TEXT_NB, PLOTLY_NB, ERRORS_NB):
        shutil.copyfile(NOTEBOOKS / name, root / name)
    shutil.copyfile(NOTEBOOKS / "bad" / "truncated.ipynb", root / "truncated.ipynb")
    (root / "notes.txt").write_text("not a notebook\n", encoding="utf-8")
    malformed = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "id": "bad-output",
                "metadata": {},
                "execution_count": 1,
                "source": "x",
                "outputs": [{"output_type": "display_data", "data": [], "metadata": {}}],
            }
        ],
    }
    (root / "malformed.ipynb").write_text(json.dumps(malformed), encoding="utf-8")
    return root.resolve()


def roots_callback(*roots: Path) -> ListRootsFnT:
    """A client ``roots/list`` handler answering with these folders as ``file://`` roots."""

    async def list_roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=FileUrl(root.as_uri())) for root in roots]
        )

    return list_roots


@asynccontextmanager
async def open_session(
    params: StdioServerParameters,
    errlog: Path,
    *,
    list_roots_callback: ListRootsFnT | None = None,
) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` on a spawned server (handshake era), bounded in time.

    The server's stderr goes to ``errlog``.
    """
    with anyio.fail_after(WAIT_SECONDS), errlog.open("a", encoding="utf-8") as err:
        async with (
            stdio_client(params, errlog=err) as (read_stream, write_stream),
            ClientSession(
                read_stream, write_stream, list_roots_callback=list_roots_callback
            ) as session,
        ):
            await session.initialize()
            yield session


async def call(session: ClientSession, **arguments: Any) -> tuple[types.CallToolResult, Any]:
    """Call the tool; return the result and its text JSON, checked by
    :func:`tool_results.checked_result` (success: valid structured content equal to the text;
    error: the error JSON as text, no structured content)."""
    result = await session.call_tool(TOOL, arguments)
    _, document = checked_result(TOOL, result)
    return result, document


def error_code(result: types.CallToolResult, document: Any) -> str:
    """The error code of an ``isError`` result, after checking the error JSON's shape."""
    assert result.is_error, document
    assert document["schema_version"] == 1
    assert document["status"] == "error"
    assert isinstance(document["message"], str)
    assert "Traceback" not in json.dumps(document)
    code: str = document["code"]
    return code
