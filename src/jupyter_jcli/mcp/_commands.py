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

- every bad option at start-up, before anything is served: click's usage error, exit 2, the
  usage line and a message naming the option on stderr. That is an unknown option, a bad
  option type, a ``--root`` that is not an existing folder, a ``--token-file`` that is not
  an existing readable file (both checked by click's ``Path`` type), and an option value our
  checks refuse (a bad server URL, an unknown store, an HTTP option with stdio, a bad port or
  token; their ``USAGE_ERROR`` becomes the usage error of the option its ``details.option``
  names). Under ``j-cli`` the command line's own error boundary reports them, as it does
  every command's usage errors: exit 2, ``USAGE_ERROR``, the error JSON on stdout with
  ``-j`` (our checks' error with its ``details``), else on stderr;
- an error while serving: 2 for ``USAGE_ERROR`` (an HTTP address that cannot be bound),
  else 1, the error JSON on stderr;
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
from jupyter_jcli.errors import ErrorCode, JcliError
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
        callback = click.option(
            "--root",
            "roots",
            multiple=True,
            type=click.Path(exists=True, file_okay=False),  # a folder: click's usage error
            metavar="PATH",
            help=root_help,
        )(callback)
        return click.command(name=name, context_settings=_CONTEXT)(click.pass_context(callback))

    return decorate


@contextmanager
def _refused_before_serving(ctx: click.Context) -> Iterator[None]:
    """An option value refused before serving is a usage error, as click's own: as a console
    script click prints the usage and a message naming the option (``details.option``, or
    the options its message names) on stderr and exits 2; under ``j-cli`` a ``USAGE_ERROR``
    goes to its error boundary as it is (exit 2, its details kept), another code as click's
    usage error (exit 2 too)."""
    try:
        yield
    except JcliError as err:
        if ctx.parent is not None and err.code == ErrorCode.USAGE_ERROR:
            raise
        param = _option_of(ctx, err)
        if param is None:
            raise click.UsageError(err.message, ctx) from err
        raise click.BadParameter(err.message, ctx, param) from err


def _option_of(ctx: click.Context, err: JcliError) -> click.Parameter | None:
    """The parameter of ``ctx``'s command that ``err``'s ``details`` name (``option``: its
    name), ``None`` when none (an error of several options, ``options``, names them in its
    message: click's plain usage error says it without naming one twice)."""
    named = err.details.get("option")
    for param in ctx.command.params:
        if named is not None and (named == param.name or named in param.opts):
            return param
    return None


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
