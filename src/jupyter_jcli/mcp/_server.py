"""What both MCP servers share: the dispatcher, the server object, stdio serving, ``main``.

:func:`build_server` makes a low-level ``mcp.server.lowlevel.Server`` over a list of
:class:`~jupyter_jcli.mcp._registry.RegisteredTool`: ``tools/list`` shows their definitions,
``tools/call`` goes through one dispatcher (check the arguments, get the trusted roots,
resolve the call's notebook with :func:`jupyter_jcli.mcp._roots.resolve_notebook`, run the
operation with every file it opens confined to the roots, render the reply; any failure
becomes the error result of :func:`jupyter_jcli.mcp._results.exception_result`).
:func:`serve` runs a server on stdio (:mod:`jupyter_jcli.mcp._stdio`) or, given an
:class:`~jupyter_jcli.mcp._http.HttpTransport`, over streamable HTTP
(:mod:`jupyter_jcli.mcp._http`), with an optional cleanup run on exit and on SIGTERM, SIGINT
or SIGHUP; :func:`run` starts a server from its command line (:mod:`jupyter_jcli.mcp._commands`:
the roots, logging, the error exit). Logs go to stderr, never stdout (JSON-RPC).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.jsonrpc_dispatcher import progress_token_from_params

from jupyter_jcli import __version__
from jupyter_jcli.errors import ErrorCode, JcliError, UsageError
from jupyter_jcli.mcp._http import HttpTransport, serve_http
from jupyter_jcli.mcp._progress import ProgressReporter, heartbeat_interval
from jupyter_jcli.mcp._registry import Call, RegisteredTool, Reply
from jupyter_jcli.mcp._results import exception_result, json_text
from jupyter_jcli.mcp._roots import confined_to, resolve_notebook, roots_from_paths
from jupyter_jcli.mcp._stdio import serve_stdio
from jupyter_jcli.notebook.stores import SERVER_STORES, active_choice

__all__ = [
    "SHUTDOWN_SECONDS",
    "RootsSource",
    "Serve",
    "build_server",
    "configure_logging",
    "fixed_roots",
    "report",
    "run",
    "serve",
]

SHUTDOWN_SECONDS = 30.0
"""Bound on a server's cleanup (stopping every kernel) when it exits."""

_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_log = logging.getLogger(__name__)

RootsSource = Callable[
    [ServerRequestContext[Any], types.CallToolRequestParams],
    Awaitable[tuple[Path, ...] | types.InputRequiredResult],
]
"""The trusted roots of one call, or the request asking the client for them."""


def fixed_roots(roots: Sequence[Path]) -> RootsSource:
    """The same roots for every call (``--root``, or the working directory)."""
    fixed = tuple(roots)

    async def source(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> tuple[Path, ...]:
        return fixed

    return source


async def _dispatch(
    tool: RegisteredTool,
    params: types.CallToolRequestParams,
    ctx: ServerRequestContext[Any],
    roots: RootsSource,
) -> Reply | types.InputRequiredResult:
    arguments = tool.check(params.arguments)
    trusted = await roots(ctx, params)
    if isinstance(trusted, types.InputRequiredResult):
        return trusted
    progress = None
    if progress_token_from_params(ctx.params) is not None:
        progress = ProgressReporter(ctx.session.report_progress, interval=heartbeat_interval())
    if tool.path_argument not in arguments:  # a tool whose notebook is optional, not named
        return await tool.operation(Call(tool.name, None, arguments, trusted, progress))
    given = str(arguments.pop(tool.path_argument))
    choice = active_choice()
    served = None
    if choice is not None and not choice.local_only:
        served = await anyio.to_thread.run_sync(store_path, given, trusted)
    if served is not None:  # a notebook of a server store: confined by the server
        return await tool.operation(Call(tool.name, served, arguments, trusted, progress))
    with confined_to(trusted):  # every file the operation opens, checked where opened
        path = await anyio.to_thread.run_sync(
            partial(resolve_notebook, given, trusted, must_exist=tool.must_exist)
        )
        return await tool.operation(Call(tool.name, path, arguments, trusted, progress))


def store_path(given: str, roots: Sequence[Path] = ()) -> Path | None:
    """For a tool's notebook that opens in another store than the local one (the active
    ``--store`` choice: ``collab`` or ``contents``; a test's memory store), the path that
    names it there: for a server store ``given`` is the server's path (relative to the
    server's root), not confined by the local roots (the server decides what its user may
    open); else ``None``: a local file, checked against the roots. ``auto`` does not take
    the contents store for a path that is a file under one of ``roots`` (a tool's relative
    path is relative to the roots, not to this process's folder). Blocking (the ``auto``
    probe): call it from a worker thread."""
    choice = active_choice()
    if choice is None or choice.local_only:
        return None
    kind = choice.kind_for(given)
    if kind == "local" or (kind == "contents" and choice.kind == "auto" and _in(given, roots)):
        return None
    if kind not in SERVER_STORES or os.path.isabs(given):  # another store: its own path
        return Path(given)
    return choice.path_root / given


def _in(given: str, roots: Sequence[Path]) -> bool:
    """Whether ``given`` names an existing file here: absolute, or under one of ``roots``."""
    path = Path(given)
    candidates = [path] if path.is_absolute() else [root / path for root in roots]
    return any(candidate.is_file() for candidate in candidates)


def build_server(
    *,
    name: str,
    title: str,
    instructions: str,
    tools: Sequence[RegisteredTool],
    roots: RootsSource,
) -> Server[Any]:
    """The MCP server object (not yet running).

    Args:
        name: the server name (``serverInfo.name``).
        title: its human title.
        instructions: what the server tells the model on initialize.
        tools: the tools, in the order ``tools/list`` shows them.
        roots: where each call's trusted roots come from.

    Returns:
        A low-level ``mcp.server.lowlevel.Server`` serving ``tools/list`` and ``tools/call``.
    """
    registry = {tool.name: tool for tool in tools}
    listed = [tool.definition for tool in tools]  # the definitions never change while serving

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        tool = registry.get(params.name)
        try:
            if tool is None:
                raise UsageError(f"Unknown tool {params.name!r}.", {"tools": list(registry)})
            reply = await _dispatch(tool, params, ctx, roots)
        except Exception as err:
            return exception_result(err)
        if isinstance(reply, types.InputRequiredResult):
            return reply
        return tool.render(reply)

    return Server(
        name,
        version=__version__,
        title=title,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _cleanup(cleanup: Callable[[], Awaitable[None]]) -> None:
    """Run ``cleanup``, shielded from cancellation and bounded by :data:`SHUTDOWN_SECONDS`."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(SHUTDOWN_SECONDS) as scope:
        await cleanup()
    if scope.cancelled_caught:
        _log.error("the server's cleanup did not end within %g s", SHUTDOWN_SECONDS)


async def _exit_on_signal(cleanup: Callable[[], Awaitable[None]]) -> None:
    """On SIGTERM/SIGINT/SIGHUP: clean up, then die of the signal as usual.

    Re-raising the signal (default action) rather than cancelling the server: the stdio
    transport reads stdin in a worker thread that cancellation cannot interrupt.
    """
    with anyio.open_signal_receiver(*_SIGNALS) as received:
        async for signum in received:
            _log.warning("received %s: cleaning up", signal.Signals(signum).name)
            await _cleanup(cleanup)
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return


async def serve(
    server: Server[Any],
    cleanup: Callable[[], Awaitable[None]] | None = None,
    *,
    transport: HttpTransport | None = None,
) -> None:
    """Serve ``server`` over this process's stdin/stdout until stdin closes, or over
    streamable HTTP until a signal arrives.

    Args:
        server: the server object.
        cleanup: run when the server exits, bounded by :data:`SHUTDOWN_SECONDS`: when stdin
            closes, and on SIGTERM, SIGINT or SIGHUP (then the signal's default action).
            None: nothing to clean up, signals keep their default action (stdio).
        transport: None for stdio; else where and how to serve over HTTP
            (:func:`jupyter_jcli.mcp._http.serve_http`).

    Raises:
        JcliError: ``USAGE_ERROR`` when the HTTP address cannot be bound.
    """
    if transport is not None:
        bounded = partial(_cleanup, cleanup) if cleanup is not None else None
        await serve_http(server, transport, bounded)
        return
    if cleanup is None:
        await serve_stdio(server)
        return
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_exit_on_signal, cleanup)
            await serve_stdio(server)
            group.cancel_scope.cancel()
    finally:
        await _cleanup(cleanup)


def configure_logging() -> None:
    """Send log records to stderr (never stdout, which carries JSON-RPC)."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(name)s %(levelname)s: %(message)s"
    )


class Serve(Protocol):
    """Serves with the resolved roots until stdin closes (stdio) or a signal arrives (HTTP)."""

    def __call__(
        self, roots: tuple[Path, ...], /, *, transport: HttpTransport | None = None
    ) -> Awaitable[None]: ...


def report(err: JcliError) -> int:
    """Write ``err``'s JSON to stderr (stdout carries JSON-RPC); the exit status: 2 for
    ``USAGE_ERROR``, else 1."""
    print(json_text(err.to_dict()), file=sys.stderr)
    return 2 if err.code == ErrorCode.USAGE_ERROR else 1


def run(
    prepare: Callable[[], Serve], roots: Sequence[str | Path], transport: HttpTransport | None
) -> int:
    """Start a server from its command line (:mod:`jupyter_jcli.mcp._commands`): send logs
    to stderr, resolve the roots, serve until stdin closes (stdio) or a signal arrives.

    Args:
        prepare: what serves, built once the roots are resolved (the workbench: its kernels).
        roots: the ``--root`` folders as given (none: the client's roots).
        transport: None for stdio; else the HTTP host, port and token.

    Returns:
        0 when serving ends; 2 when a root does not exist (the command line refused it
        already, as click's usage error, unless it went meanwhile), or when serving fails with
        ``USAGE_ERROR`` (an HTTP address that cannot be bound); 1 for another error. The
        error JSON is written to stderr.
    """
    configure_logging()
    try:
        resolved = roots_from_paths(roots)
    except JcliError as err:
        report(err)
        return 2
    try:
        anyio.run(partial(prepare(), transport=transport), resolved)
    except JcliError as err:
        return report(err)
    return 0
