"""``j-cli mcp ...``: run jupyter-jcli's MCP servers over stdio.

``j-cli mcp serve [--root PATH ...]`` is the same server as the ``jcli-notebook-output``
console script (:mod:`jupyter_jcli.mcp.readonly`). The ``mcp`` SDK is imported only when a
server starts, so ``j-cli --help`` stays fast.
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
