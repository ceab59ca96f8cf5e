"""``j-cli mcp ...``: run jupyter-jcli's MCP servers over stdio.

``j-cli mcp serve [--root PATH ...]`` is the same server as the ``jcli-notebook-output``
console script (:mod:`jupyter_jcli.mcp.readonly`); ``j-cli mcp workbench [--root PATH ...]``
the same as ``jupyter-mcp`` (:mod:`jupyter_jcli.mcp.workbench`). The ``mcp`` SDK is imported
only when a server starts, so ``j-cli --help`` stays fast.
"""

from __future__ import annotations

import click

__all__ = ["mcp"]


@click.group(name="mcp")
def mcp() -> None:
    """Run an MCP server on stdin/stdout (for agent hosts)."""


@mcp.command(name="serve")
@click.option(
    "--root",
    "roots",
    multiple=True,
    metavar="PATH",
    type=click.Path(path_type=str),
    help="A trusted folder (repeatable). Without it, the roots the client supplies are used.",
)
def serve(roots: tuple[str, ...]) -> None:
    """The read-only server `jcli-notebook-output`: one tool, read_notebook_output.

    Serves until stdin closes. Only JSON-RPC is written to stdout; logs go to stderr.
    """
    import anyio

    from jupyter_jcli.mcp._roots import roots_from_paths
    from jupyter_jcli.mcp.readonly import configure_logging
    from jupyter_jcli.mcp.readonly import serve as serve_readonly

    trusted = roots_from_paths(roots)
    configure_logging()
    anyio.run(serve_readonly, trusted)


@mcp.command(name="workbench")
@click.option(
    "--root",
    "roots",
    multiple=True,
    metavar="PATH",
    type=click.Path(path_type=str),
    help="The folder tool paths are relative to and confined to (repeatable; default: the "
    "working directory).",
)
def workbench(roots: tuple[str, ...]) -> None:
    """The kernel-attached server `jupyter-mcp`: the workbench tools, a kernel per notebook.

    Serves until stdin closes (or SIGTERM); every kernel is shut down on exit. Only JSON-RPC
    is written to stdout; logs go to stderr.
    """
    import sys

    from jupyter_jcli.mcp.workbench import main as serve_workbench

    args: list[str] = []
    for root in roots:
        args += ["--root", root]
    code = serve_workbench(args)
    if code:
        sys.exit(code)
