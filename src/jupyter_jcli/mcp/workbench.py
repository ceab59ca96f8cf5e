"""``jupyter-mcp``: the kernel-attached MCP server with the workbench tools.

A stdio MCP server (official ``mcp`` SDK, low-level ``Server``) over
:mod:`jupyter_jcli.workbench`: an agent creates, reads, edits, runs and inspects notebooks,
one persistent kernel per notebook. Multi-notebook: every tool takes the notebook ``path``,
relative to the server's root (its working directory, or ``--root``; several ``--root`` are
allowed) or absolute inside it; anything outside is refused with ``PATH_NOT_ALLOWED``
(:mod:`jupyter_jcli.mcp._roots`).

Tools: the document tools of :mod:`jupyter_jcli.mcp._workbench_tools`, the kernel tools of
:mod:`jupyter_jcli.mcp._kernel_tools` and ``read_notebook_output``, the exact saved-output
read shared with ``jcli-notebook-output`` (:mod:`jupyter_jcli.mcp._output_tool`). Arguments
are checked against each tool's input schema first (``USAGE_ERROR`` listing every problem).
Results follow :mod:`jupyter_jcli.mcp._results`: the JSON document as structured content and
as text, charts as ``ImageContent``; domain failures are ``isError`` results whose only
content is the error JSON as text (``code``, ``message``, ``details``; no structured content),
never a traceback. Long executions send
progress notifications when the request carries a ``progressToken``
(:mod:`jupyter_jcli.mcp._progress`). Blocking operations run in worker threads.

Every stdin line gets an answer, even one that is not JSON (:mod:`jupyter_jcli.mcp._stdio`).
Only JSON-RPC goes to stdout: the SDK's stdio transport points fd 1 at stderr while serving,
kernels write their own stdout to stderr, logs go to stderr. Every kernel is shut down when
the server exits: when stdin closes, and on SIGTERM, SIGINT or SIGHUP (kernels first, then
the signal's default action).

Run as ``jupyter-mcp [--root PATH ...]``, ``j-cli mcp workbench [--root PATH ...]`` or
``python -m jupyter_jcli.mcp.workbench [--root PATH ...]``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

from jupyter_jcli import __version__
from jupyter_jcli.errors import JcliError, UsageError
from jupyter_jcli.mcp._arguments import check_arguments
from jupyter_jcli.mcp._kernel_tools import KERNEL_HANDLERS, KERNEL_TOOLS
from jupyter_jcli.mcp._output_tool import (
    OUTPUT_TOOL_NAME,
    output_tool,
    parse_output_arguments,
    run_output_read,
)
from jupyter_jcli.mcp._progress import ProgressReporter, heartbeat_interval
from jupyter_jcli.mcp._results import exception_result, json_result, json_text, protocol_result
from jupyter_jcli.mcp._roots import confined_to, roots_from_paths
from jupyter_jcli.mcp._stdio import serve_stdio
from jupyter_jcli.mcp._workbench_calls import DOCUMENT_HANDLERS, Call, Handler
from jupyter_jcli.mcp._workbench_tools import DOCUMENT_TOOLS, ToolSpec
from jupyter_jcli.workbench._session import Workbench

__all__ = ["SERVER_NAME", "SHUTDOWN_SECONDS", "build_server", "main", "serve", "tools"]

SERVER_NAME = "jupyter-mcp"
SHUTDOWN_SECONDS = 30.0
"""Bound on stopping every kernel when the server exits."""

_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_INSTRUCTIONS = (
    "Work on Jupyter notebooks with a live kernel per notebook. Start with notebook_overview "
    "(cell names, revs, status, dependencies); read_cells for sources and condensed outputs "
    "(charts as images); edit with add_cell/update_cell/remove_cell/move_cell passing the "
    "expected_rev you read; run_stale re-runs exactly what your edits made stale; "
    "execute_cells runs named cells; inspect_variable looks at a live value without running "
    "a cell; undo_last reverts the last edit. Paths are relative to the server's root."
)
_log = logging.getLogger(__name__)


def _specs() -> dict[str, ToolSpec]:
    return {spec.name: spec for spec in (*DOCUMENT_TOOLS, *KERNEL_TOOLS)}


def _handlers() -> dict[str, Handler]:
    return {**DOCUMENT_HANDLERS, **KERNEL_HANDLERS}


def tools() -> list[types.Tool]:
    """Every tool this server lists, in a stable order (``read_notebook_output`` last)."""
    return [spec.tool() for spec in _specs().values()] + [output_tool()]


def build_server(roots: Sequence[Path], workbench: Workbench) -> Server[Any]:
    """The MCP server object (not yet running).

    Args:
        roots: the resolved trusted roots (see :func:`jupyter_jcli.mcp._roots.roots_from_paths`);
            relative tool paths resolve against them.
        workbench: the kernels and run logs the tools use (the caller shuts it down).

    Returns:
        A low-level ``mcp.server.lowlevel.Server`` serving ``tools/list`` and ``tools/call``.
    """
    fixed = tuple(roots)
    specs = _specs()
    handlers = _handlers()
    listed = tools()  # built once: the definitions never change while serving
    names = [tool.name for tool in listed]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            if params.name == OUTPUT_TOOL_NAME:
                request = parse_output_arguments(params.arguments)
                document = await anyio.to_thread.run_sync(run_output_read, request, fixed)
                return protocol_result(document)
            spec = specs.get(params.name)
            if spec is None:
                raise UsageError(f"Unknown tool {params.name!r}.", {"tools": names})
            arguments = check_arguments(spec.name, spec.input_schema, params.arguments)
            progress = None
            if progress_token_from_params(ctx.params) is not None:
                progress = ProgressReporter(
                    ctx.session.report_progress, interval=heartbeat_interval()
                )
            call = Call(spec.name, arguments, fixed, workbench, progress)
            with confined_to(fixed):  # every file the operation opens, checked where opened
                reply = await handlers[spec.name](call)
        except Exception as err:
            return exception_result(err)
        return json_result(reply.document, images=reply.images)

    return Server(
        SERVER_NAME,
        version=__version__,
        title="Jupyter workbench (jupyter-jcli)",
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _shutdown(workbench: Workbench) -> None:
    """Stop every kernel, shielded from cancellation and bounded by :data:`SHUTDOWN_SECONDS`."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(SHUTDOWN_SECONDS) as scope:
        await workbench.shutdown()
    if scope.cancelled_caught:
        _log.error("kernels did not stop within %g s", SHUTDOWN_SECONDS)


async def _exit_on_signal(workbench: Workbench) -> None:
    """On SIGTERM/SIGINT/SIGHUP: stop the kernels, then die of the signal as usual.

    Re-raising the signal (default action) rather than cancelling the server: the stdio
    transport reads stdin in a worker thread that cancellation cannot interrupt.
    """
    with anyio.open_signal_receiver(*_SIGNALS) as received:
        async for signum in received:
            _log.warning("received %s: stopping kernels", signal.Signals(signum).name)
            await _shutdown(workbench)
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return


async def serve(roots: Sequence[Path]) -> None:
    """Serve MCP over this process's stdin/stdout until stdin closes or a signal arrives;
    every kernel is shut down either way.

    Args:
        roots: the resolved trusted roots.
    """
    workbench = Workbench()
    try:
        server = build_server(roots, workbench)
        async with anyio.create_task_group() as group:
            group.start_soon(_exit_on_signal, workbench)
            await serve_stdio(server)
            group.cancel_scope.cancel()
    finally:
        await _shutdown(workbench)


def configure_logging() -> None:
    """Send log records to stderr (never stdout, which carries JSON-RPC)."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(name)s %(levelname)s: %(message)s"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point of ``jupyter-mcp``.

    Args:
        argv: arguments after the program name (``sys.argv[1:]`` when None):
            ``[--root PATH ...]``.

    Returns:
        0 when stdin closes; 2 when a ``--root`` does not exist (the error JSON is written to
        stderr, since stdout belongs to JSON-RPC).
    """
    parser = argparse.ArgumentParser(
        prog=SERVER_NAME,
        description="Kernel-attached MCP server (stdio): the jupyter-jcli workbench tools.",
    )
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="PATH",
        help="The folder tool paths are relative to and confined to (repeatable; default: "
        "the working directory).",
    )
    parser.add_argument("--version", action="version", version=f"{SERVER_NAME} {__version__}")
    options = parser.parse_args(argv)
    configure_logging()
    try:
        roots = roots_from_paths(options.root or [Path.cwd()])
    except JcliError as err:
        print(json_text(err.to_dict()), file=sys.stderr)
        return 2
    anyio.run(serve, roots)
    return 0


if __name__ == "__main__":
    sys.exit(main())
