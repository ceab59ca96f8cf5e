"""``jupyter-mcp``: the kernel-attached MCP server with the workbench tools.

A stdio MCP server (official ``mcp`` SDK, low-level ``Server``) over
:mod:`jupyter_jcli.workbench`: an agent creates, reads, edits, runs and inspects notebooks, one
persistent kernel per notebook. Multi-notebook: every tool takes the notebook ``path`` (but
``list_kernels``, and ``stop_kernel`` with ``all``), relative to the server's root (its working
directory, or ``--root``; several ``--root`` are allowed) or absolute inside it; anything
outside is refused with ``PATH_NOT_ALLOWED`` (:mod:`jupyter_jcli.mcp._roots`). With ``--store``
(or ``JUPYTER_JCLI_STORE``; ``auto`` by default, :mod:`jupyter_jcli.notebook.stores`) a
notebook may open in a server's store (``collab``: the live collaborative document;
``contents``): its ``path`` is then the server's path, relative to the server's root, and it is
confined by the server (what the token may open), not by the roots (``_server.store_path``).

Tools: the document tools of :mod:`jupyter_jcli.mcp._workbench_tools`, the kernel tools of
:mod:`jupyter_jcli.mcp._kernel_tools` and ``read_notebook_output``, the exact saved-output
read shared with ``jcli-notebook-output`` (:mod:`jupyter_jcli.mcp._output_tool`). Arguments
are checked against each tool's input schema first (``USAGE_ERROR`` listing every problem).
Each tool is a registry entry (:mod:`jupyter_jcli.mcp._registry`) served by the dispatcher
of :mod:`jupyter_jcli.mcp._server`. Results follow :mod:`jupyter_jcli.mcp._results`: the
JSON document as structured content and as text, charts as ``ImageContent``; domain failures
are ``isError`` results whose only content is the error JSON as text (``code``, ``message``,
``details``; no structured content), never a traceback. Long executions send progress
notifications when the request carries a ``progressToken``
(:mod:`jupyter_jcli.mcp._progress`). Blocking operations run in worker threads.

Every stdin line gets an answer, even one that is not JSON (:mod:`jupyter_jcli.mcp._stdio`).
Only JSON-RPC goes to stdout: the SDK's stdio transport points fd 1 at stderr while serving,
kernels write their own stdout to stderr, logs go to stderr. Kernels are shared with
``j-cli`` through the registry (:func:`jupyter_jcli.workbench.shared_workbench`): a notebook's
live kernel (``j-cli kernel start``) is joined, not duplicated, and the cells that ran on it
are fresh for both. Every kernel the server started for a run is shut down when it exits
(kernels it joined, and those ``start_kernel`` started, keep running): when stdin closes,
and on SIGTERM, SIGINT or SIGHUP (kernels first, then the signal's default action).

Over HTTP (``--transport streamable-http [--host H] [--port N] [--token-file PATH]``, see
:mod:`jupyter_jcli.mcp._http`) the same tools and roots are served at ``/mcp`` behind a
required bearer token; its kernels are stopped the same way on SIGTERM, SIGINT or SIGHUP.

Run as ``jupyter-mcp [--root PATH ...]``, ``j-cli mcp workbench [--root PATH ...]`` or
``python -m jupyter_jcli.mcp.workbench [--root PATH ...]``: one click command,
:func:`jupyter_jcli.mcp.workbench_command`. With ``--server-url URL`` (or
``JUPYTER_JCLI_SERVER_URL``) the kernels run on that Jupyter Server (JupyterLab, JupyterHub,
Kernel Gateway, Enterprise Gateway), authenticated by ``--token`` or, better (a command
line is visible to other users), ``JUPYTER_JCLI_SERVER_TOKEN``; ``--server-root DIR`` (or
``JUPYTER_JCLI_SERVER_ROOT``) is the local folder the server's root is; ``--kernel-username
NAME`` (or ``JUPYTER_JCLI_KERNEL_USERNAME``; default the local user) is the
``KERNEL_USERNAME`` a gateway's kernels start with. A bad URL fails at
start-up (``USAGE_ERROR``, exit 2); the token is never logged or echoed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server

from jupyter_jcli.mcp import _server
from jupyter_jcli.mcp._http import HttpTransport
from jupyter_jcli.mcp._kernel_tools import KERNEL_TOOLS
from jupyter_jcli.mcp._output_tool import OUTPUT_TOOL
from jupyter_jcli.mcp._server import SHUTDOWN_SECONDS, fixed_roots
from jupyter_jcli.mcp._workbench_tools import DOCUMENT_TOOLS
from jupyter_jcli.notebook.stores import using_store
from jupyter_jcli.workbench import Workbench, shared_workbench

__all__ = [
    "SERVER_NAME",
    "SHUTDOWN_SECONDS",
    "build_server",
    "serve",
    "tools",
]

SERVER_NAME = "jupyter-mcp"
_INSTRUCTIONS = (
    "Work on Jupyter notebooks with a live kernel per notebook. Start with notebook_overview "
    "(cell names, revs, status, dependencies); read_cells for sources and condensed outputs "
    "(charts as images); edit with add_cell/update_cell/remove_cell/move_cell passing the "
    "expected_rev you read; run_stale re-runs exactly what your edits made stale; "
    "execute_cells runs named cells; inspect_variable looks at a live value without running "
    "a cell; undo_last reverts the last edit; a long run takes background=true, then run_status. "
    "Paths are relative to the server's root."
)
_SPECS = (*DOCUMENT_TOOLS, *KERNEL_TOOLS)


def tools() -> list[types.Tool]:
    """Every tool this server lists, in a stable order (``read_notebook_output`` last)."""
    return [spec.tool() for spec in _SPECS] + [OUTPUT_TOOL.definition]


def build_server(roots: Sequence[Path], workbench: Workbench) -> Server[Any]:
    """The MCP server object, not yet running (what :func:`jupyter_jcli.mcp._server.build_server`
    returns).

    Args:
        roots: the resolved trusted roots (see :func:`jupyter_jcli.mcp._roots.roots_from_paths`);
            relative tool paths resolve against them.
        workbench: the kernels and execution logs the tools use (the caller shuts it down).
    """
    return _server.build_server(
        name=SERVER_NAME,
        title="Jupyter workbench (jupyter-jcli)",
        instructions=_INSTRUCTIONS,
        tools=[spec.registered(workbench) for spec in _SPECS] + [OUTPUT_TOOL],
        roots=fixed_roots(roots),
    )


async def serve(
    roots: Sequence[Path],
    *,
    workbench: Workbench | None = None,
    transport: HttpTransport | None = None,
) -> None:
    """Serve MCP over this process's stdin/stdout until stdin closes or a signal arrives (or
    over streamable HTTP until a signal arrives); every kernel is shut down either way
    (bounded by :data:`SHUTDOWN_SECONDS`).

    Args:
        roots: the resolved trusted roots.
        workbench: the kernels to serve (default: :func:`shared_workbench`, the local
            registry's kernels).
            Its store choice (``Workbench.stores``: ``--store``) is active for every
            call, so each tool's notebook opens in the store it names.
        transport: None for stdio; else the HTTP host, port and token
            (:mod:`jupyter_jcli.mcp._http`).
    """
    from jupyter_jcli.notebook import tune_collector

    tune_collector()  # a long-lived process keeping notebooks warm
    workbench = workbench if workbench is not None else shared_workbench()
    with using_store(workbench.stores):
        async with workbench.background:  # background batches live as long as the server
            await _server.serve(
                build_server(roots, workbench), cleanup=workbench.shutdown, transport=transport
            )


if __name__ == "__main__":
    from jupyter_jcli.mcp._commands import workbench_command

    workbench_command()
