"""``jcli-notebook-output``: the read-only MCP server with one tool, ``read_notebook_output``.

A stdio MCP server (official ``mcp`` SDK, low-level ``Server``). The tool lists a cell's
saved outputs (no ``output_index``) or reads one of them, through
:func:`jupyter_jcli.outputs.notebook.list_notebook_outputs` and
:func:`~jupyter_jcli.outputs.notebook.read_notebook_output` and nothing else. It never
executes, writes, caches or creates anything; the tool is annotated ``readOnlyHint`` and
``idempotentHint`` (not destructive, closed world).

Trusted roots (see :mod:`jupyter_jcli.mcp._roots`): the ``--root`` folders when given;
otherwise the roots the client supplies, asked for at every call: a ``roots/list`` request on
handshake-era connections (protocol versions up to 2025-11-25), an ``InputRequiredResult``
carrying a ``roots/list`` input request on 2026-07-28 connections. A client that declares no
roots capability, or answers with no usable ``file://`` root, gets ``ROOTS_REQUIRED``.

Results and errors follow :mod:`jupyter_jcli.mcp._results`. Every stdin line gets an answer,
even one that is not JSON (see :mod:`jupyter_jcli.mcp._stdio`). Only JSON-RPC goes to stdout
(the SDK's stdio transport points fd 1 at stderr while serving); logs go to stderr.

Over HTTP (``--transport streamable-http``, see :mod:`jupyter_jcli.mcp._http`) the tool is
served at ``/mcp`` behind a required bearer token; the client's roots name folders on the
client's machine there, so give ``--root``.

Run as ``jcli-notebook-output [--root PATH ...]``, ``j-cli mcp serve [--root PATH ...]`` or
``python -m jupyter_jcli.mcp.readonly [--root PATH ...]``: one click command,
:func:`jupyter_jcli.mcp.readonly_command`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.mcp import _server
from jupyter_jcli.mcp._http import HttpTransport
from jupyter_jcli.mcp._output_tool import OUTPUT_TOOL
from jupyter_jcli.mcp._roots import roots_from_uris
from jupyter_jcli.mcp._server import fixed_roots

__all__ = [
    "ROOTS_TIMEOUT_SECONDS",
    "SERVER_NAME",
    "build_server",
    "serve",
    "tool",
]

SERVER_NAME = "jcli-notebook-output"
ROOTS_TIMEOUT_SECONDS = 10.0
"""How long a call waits for the client's answer to ``roots/list``."""

_ROOTS_INPUT_KEY = "roots"
_INSTRUCTIONS = (
    "Reads the outputs saved in Jupyter notebooks (.ipynb, or a .py paired through jupytext) "
    "inside the trusted roots, without executing anything. List a cell's outputs first "
    "(read_notebook_output without output_index), then read the one you need."
)
_log = logging.getLogger(__name__)


def tool() -> types.Tool:
    """The ``read_notebook_output`` tool definition (schemas, description, annotations)."""
    return OUTPUT_TOOL.definition


async def _client_roots(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> tuple[Path, ...] | types.InputRequiredResult:
    """The roots the client supplies for this call, or the request asking for them.

    Raises:
        JcliError: ``ROOTS_REQUIRED`` when the client supplies no usable root.
    """
    supplied = await _supplied_roots(ctx, params)
    if not isinstance(supplied, types.InputRequiredResult) and not supplied:
        raise JcliError(
            ErrorCode.ROOTS_REQUIRED,
            "No trusted roots: the server has no --root and the client supplied no file:// roots.",
            {"client_supports_roots": _client_declares_roots(ctx)},
        )
    return supplied


async def _supplied_roots(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> tuple[Path, ...] | types.InputRequiredResult:
    declared = _client_declares_roots(ctx)
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answer = (params.input_responses or {}).get(_ROOTS_INPUT_KEY)
        if isinstance(answer, types.ListRootsResult):
            return roots_from_uris(str(root.uri) for root in answer.roots)
        if declared:
            return types.InputRequiredResult(
                input_requests={_ROOTS_INPUT_KEY: types.ListRootsRequest()}
            )
        return ()
    if not declared:
        return ()
    try:
        with anyio.fail_after(ROOTS_TIMEOUT_SECONDS + 1):
            listed = await ctx.session.send_request(
                types.ListRootsRequest(),
                types.ListRootsResult,
                request_read_timeout_seconds=ROOTS_TIMEOUT_SECONDS,
            )
    except (MCPError, ValidationError, TimeoutError) as err:
        _log.warning("roots/list failed: %s: %s", type(err).__name__, err)
        raise JcliError(
            ErrorCode.ROOTS_REQUIRED,
            "The client did not answer roots/list; start the server with --root PATH.",
            {"client_supports_roots": True, "reason": type(err).__name__},
        ) from err
    return roots_from_uris(str(root.uri) for root in listed.roots)


def build_server(roots: Sequence[Path] | None = None) -> Server[Any]:
    """The MCP server object, not yet running (what :func:`jupyter_jcli.mcp._server.build_server`
    returns).

    Args:
        roots: resolved trusted roots (see :func:`jupyter_jcli.mcp._roots.roots_from_paths`);
            None or empty: use the roots the client supplies at each call.
    """
    return _server.build_server(
        name=SERVER_NAME,
        title="Jupyter saved outputs (jupyter-jcli, read-only)",
        instructions=_INSTRUCTIONS,
        tools=[OUTPUT_TOOL],
        roots=fixed_roots(roots) if roots else _client_roots,
    )


def _client_declares_roots(ctx: ServerRequestContext[Any]) -> bool:
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.roots is not None


async def serve(
    roots: Sequence[Path] | None = None, *, transport: HttpTransport | None = None
) -> None:
    """Serve MCP over this process's stdin/stdout until stdin closes (or over streamable HTTP
    until a signal arrives).

    Args:
        roots: resolved trusted roots; None or empty: the client's roots.
        transport: None for stdio; else the HTTP host, port and token.
    """
    await _server.serve(build_server(roots), transport=transport)


if __name__ == "__main__":
    from jupyter_jcli.mcp._commands import readonly_command

    readonly_command()
