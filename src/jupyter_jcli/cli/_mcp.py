"""``j-cli mcp ...``: run jupyter-jcli's MCP servers over stdio.

``j-cli mcp serve [--root PATH ...]`` is the same server as the ``jcli-notebook-output``
console script (:mod:`jupyter_jcli.mcp.readonly`); ``j-cli mcp workbench [--root PATH ...]
[--server-url URL --token T --server-root DIR]`` the same as ``jupyter-mcp``
(:mod:`jupyter_jcli.mcp.workbench`). The ``mcp`` SDK is imported only when a server starts,
so ``j-cli --help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from jupyter_jcli.cli._server_options import (
    STORE_CHOICES,
    given_kernel_username,
    server_from,
    server_options,
)
from jupyter_jcli.workbench import STORE_OPTION_HELP

__all__ = ["mcp"]

F = TypeVar("F", bound=Callable[..., Any])


@click.group(name="mcp")
def mcp() -> None:
    """Run an MCP server on stdin/stdout (for agent hosts)."""


def _roots_option(meaning: str) -> Callable[[F], F]:
    """The repeatable ``--root PATH`` option of both servers (``roots``), ``meaning`` its help."""
    return click.option(
        "--root",
        "roots",
        multiple=True,
        metavar="PATH",
        type=click.Path(path_type=str),
        help=meaning,
    )


@mcp.command(name="serve")
@_roots_option("A trusted folder (repeatable). Without it, the roots the client supplies are used.")
def serve(roots: tuple[str, ...]) -> None:
    """The read-only server `jcli-notebook-output`: one tool, read_notebook_output.

    Serves until stdin closes. Only JSON-RPC is written to stdout; logs go to stderr.
    """
    import anyio

    from jupyter_jcli.mcp import roots_from_paths
    from jupyter_jcli.mcp.readonly import configure_logging
    from jupyter_jcli.mcp.readonly import serve as serve_readonly

    trusted = roots_from_paths(roots)
    configure_logging()
    anyio.run(serve_readonly, trusted)


@mcp.command(name="workbench")
@_roots_option(
    "The folder tool paths are relative to and confined to (repeatable; default: the "
    "working directory)."
)
@server_options
@click.option("--store", metavar="|".join(STORE_CHOICES), default=None, help=STORE_OPTION_HELP)
def workbench(
    roots: tuple[str, ...],
    server_url: str | None,
    token: str | None,
    server_root: str | None,
    store: str | None,
) -> None:
    """The kernel-attached server `jupyter-mcp`: the workbench tools, a kernel per notebook.

    Serves until stdin closes (or SIGTERM); every kernel is shut down on exit. Only JSON-RPC
    is written to stdout; logs go to stderr. With --server-url the kernels run on that
    Jupyter Server.
    """
    import sys

    from jupyter_jcli.mcp.workbench import main as serve_workbench
    from jupyter_jcli.notebook.stores import store_kind

    server_from(server_url, token, server_root)  # a bad URL: USAGE_ERROR, here, as JSON
    store_kind(store)  # an unknown store too
    args: list[str] = []
    for root in roots:
        args += ["--root", root]
    for flag, value in (
        ("--server-url", server_url),
        ("--token", token),
        ("--server-root", server_root),
        ("--kernel-username", given_kernel_username()),
        ("--store", store),
    ):
        if value is not None:
            args += [flag, value]
    code = serve_workbench(args)
    if code:
        sys.exit(code)
