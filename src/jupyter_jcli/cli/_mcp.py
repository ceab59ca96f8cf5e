"""``j-cli mcp ...``: run jupyter-jcli's MCP servers.

``j-cli mcp serve`` is the ``jcli-notebook-output`` command and ``j-cli mcp workbench`` the
``jupyter-mcp`` command: the same click command objects (:func:`jupyter_jcli.mcp.readonly_command`,
:func:`jupyter_jcli.mcp.workbench_command`), declared once in :mod:`jupyter_jcli.mcp`, with
the same options. The ``mcp`` SDK is imported only when a server starts, so ``j-cli --help``
stays fast.
"""

from __future__ import annotations

import click

from jupyter_jcli.mcp import readonly_command, workbench_command

__all__ = ["mcp"]


@click.group(name="mcp")
def mcp() -> None:
    """Run an MCP server: on stdin/stdout for agent hosts, or over streamable HTTP."""


mcp.add_command(readonly_command, "serve")
mcp.add_command(workbench_command, "workbench")
