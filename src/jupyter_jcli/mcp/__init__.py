"""The MCP front ends of jupyter-jcli and the plumbing they share.

Servers (each a stdio MCP server on the official ``mcp`` SDK, or a streamable HTTP one
behind a bearer token with ``--transport streamable-http``: :mod:`jupyter_jcli.mcp._http`):

- :mod:`jupyter_jcli.mcp.readonly`: ``jcli-notebook-output``, the read-only
  ``read_notebook_output`` tool over the saved-output protocol.
- :mod:`jupyter_jcli.mcp.workbench`: ``jupyter-mcp``, the kernel-attached workbench tools
  (create, overview, read, edit, execute, run_stale, kernels, inspect, undo, search,
  summarize) plus the same ``read_notebook_output``.

Their command lines (:mod:`jupyter_jcli.mcp._commands`), re-exported here: each server is one
click command, its console script and its ``j-cli mcp`` subcommand alike:
:func:`readonly_command` (``jcli-notebook-output``, ``j-cli mcp serve``) and
:func:`workbench_command` (``jupyter-mcp``, ``j-cli mcp workbench``).

Shared plumbing, re-exported here:

- tool results (:mod:`jupyter_jcli.mcp._results`): :func:`json_result`,
  :func:`protocol_result`, :func:`error_result`, :func:`exception_result`, :class:`ImagePart`;
- trusted roots and path safety (:mod:`jupyter_jcli.mcp._roots`): :func:`roots_from_paths`,
  :func:`roots_from_uris`, :func:`resolve_in_roots`, :func:`ensure_inside_roots`,
  :func:`ensure_pair_inside_roots`, :func:`find_root`.

The server modules (and the ``mcp`` SDK) are not imported here, so
``python -m jupyter_jcli.mcp.readonly`` (and ``.workbench``) runs cleanly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.mcp._commands import readonly_command, workbench_command
    from jupyter_jcli.mcp._results import (
        IMAGE_DELIVERY,
        ImagePart,
        error_result,
        exception_result,
        json_result,
        json_text,
        protocol_result,
    )
    from jupyter_jcli.mcp._roots import (
        ensure_inside_roots,
        ensure_pair_inside_roots,
        find_root,
        resolve_in_roots,
        roots_from_paths,
        roots_from_uris,
    )

_PUBLIC = {
    "_commands": "readonly_command workbench_command",
    "_results": (
        "IMAGE_DELIVERY ImagePart error_result exception_result json_result json_text "
        "protocol_result"
    ),
    "_roots": (
        "ensure_inside_roots ensure_pair_inside_roots find_root resolve_in_roots roots_from_paths "
        "roots_from_uris"
    ),
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562)."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
