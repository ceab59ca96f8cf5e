"""The two MCP servers' command lines, each declared once as a click command.

:func:`readonly_command` is ``jcli-notebook-output`` (and ``j-cli mcp serve``,
``python -m jupyter_jcli.mcp.readonly``); :func:`workbench_command` is ``jupyter-mcp`` (and
``j-cli mcp workbench``, ``python -m jupyter_jcli.mcp.workbench``): the console scripts run
these objects, and ``j-cli`` registers the same objects under ``j-cli mcp``. Both take
``--root PATH`` (repeatable), ``--version`` and the transport options of
:func:`jupyter_jcli.mcp._http.transport_options`; the workbench takes the server and store
options every ``j-cli`` command that runs code takes
(:func:`jupyter_jcli.workbench.server_options`, :func:`~jupyter_jcli.workbench.store_option`).
Importing this module loads click and the option declarations only: the ``mcp`` SDK is
imported when a server starts, so ``j-cli --help`` stays fast.

Only JSON-RPC goes to stdout on stdio; every failure before or while serving is reported on
stderr, with these exit statuses:

- an unknown option or a bad option type (click's usage error): 2;
- an option value refused before serving (a bad server URL, an unknown store, an HTTP option
  with stdio, a short token; ``USAGE_ERROR``): 2, the error JSON (``FILE_NOT_FOUND`` for a
  missing token file: 1). Under ``j-cli`` the command line's own error boundary reports
  these, as for every command (one JSON document on stdout with ``-j``);
- a ``--root`` that does not exist: 2, the error JSON;
- an error while serving: 2 for ``USAGE_ERROR`` (an HTTP address that cannot be bound),
  else 1, the error JSON;
- 0 when serving ends (stdin closed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from jupyter_jcli import __version__
from jupyter_jcli.errors import JcliError
from jupyter_jcli.mcp._http import transport_from_options, transport_options
from jupyter_jcli.workbench import given_kernel_username, server_options, store_option

if TYPE_CHECKING:
    from jupyter_jcli.kernels import ServerConfig
    from jupyter_jcli.mcp._server import Serve
    from jupyter_jcli.notebook.stores import StoreChoice

__all__ = ["readonly_command", "workbench_command"]

_F = TypeVar("_F", bound=Callable[..., Any])
_CONTEXT = {"help_option_names": ["-h", "--help"]}


def _server_command(name: str, root_help: str) -> Callable[[_F], click.Command]:
    """A server's command: ``--root PATH`` (repeatable; ``root_help``), the transport
    options, ``--version`` (printing ``name`` and the version); the callback gets the click
    context first."""

    def decorate(callback: _F) -> click.Command:
        callback = transport_options(callback)
        callback = click.version_option(
            __version__, prog_name=name, message="%(prog)s %(version)s"
        )(callback)
        callback = click.option("--root", "roots", multiple=True, metavar="PATH", help=root_help)(
            callback
        )
        return click.command(name=name, context_settings=_CONTEXT)(click.pass_context(callback))

    return decorate


@contextmanager
def _refused_before_serving(ctx: click.Context) -> Iterator[None]:
    """An option value refused before serving: as a console script, its JSON on stderr and
    exit 2 (1 for another code than ``USAGE_ERROR``); under ``j-cli``, raised to its error
    boundary."""
    try:
        yield
    except JcliError as err:
        if ctx.parent is not None:
            raise
        from jupyter_jcli.mcp._server import report

        ctx.exit(report(err))


@_server_command(
    "jcli-notebook-output",
    "A trusted folder (repeatable). Without it, the roots the client supplies are used.",
)
def readonly_command(ctx: click.Context, *, roots: tuple[str, ...], **transport: Any) -> None:
    """The read-only MCP server `jcli-notebook-output` (stdio, or streamable HTTP with a
    bearer token): one tool, read_notebook_output.

    Serves until stdin closes (stdio) or a signal arrives (HTTP). On stdio only JSON-RPC is
    written to stdout; logs go to stderr.
    """
    with _refused_before_serving(ctx):
        http = transport_from_options(**transport)
    from jupyter_jcli.mcp._server import run  # the mcp SDK loads here

    ctx.exit(run(_readonly, roots, http))


def _readonly() -> Serve:
    from jupyter_jcli.mcp import readonly

    return readonly.serve


@_server_command(
    "jupyter-mcp",
    "The folder tool paths are relative to and confined to (repeatable; default: the "
    "working directory).",
)
@server_options
@store_option
def workbench_command(
    ctx: click.Context,
    *,
    roots: tuple[str, ...],
    server_url: str | None,
    token: str | None,
    server_root: str | None,
    store: str | None,
    **transport: Any,
) -> None:
    """The kernel-attached MCP server `jupyter-mcp` (stdio, or streamable HTTP with a bearer
    token): the jupyter-jcli workbench tools, a kernel per notebook.

    Serves until stdin closes (stdio) or a signal arrives; every kernel it started is shut
    down on exit. On stdio only JSON-RPC is written to stdout; logs go to stderr. With
    --server-url the kernels run on that Jupyter Server.
    """
    from jupyter_jcli.workbench import server_from_options, stores_from_options

    with _refused_before_serving(ctx):
        http = transport_from_options(**transport)
        username = given_kernel_username()
        server = server_from_options(server_url, token, server_root, kernel_username=username)
        stores = stores_from_options(store, server)
    from jupyter_jcli.mcp._server import run  # the mcp SDK loads here

    ctx.exit(run(partial(_workbench, server, stores), roots or (Path.cwd(),), http))


def _workbench(server: ServerConfig | None, stores: StoreChoice) -> Serve:
    """The workbench server on ``server``'s kernels (None: local ones), its notebooks opening
    in ``stores``."""
    from jupyter_jcli.mcp import workbench
    from jupyter_jcli.notebook.stores import using_store
    from jupyter_jcli.workbench import shared_workbench

    with using_store(None if stores.local_only else stores):  # the workbench takes it
        kernels = shared_workbench(server=server)
    return partial(workbench.serve, workbench=kernels)
