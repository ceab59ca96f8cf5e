"""``--server-url``, ``--token``, ``--server-root``: the Jupyter Server a command's kernels run on.

Every ``j-cli`` command that runs code takes them (:func:`server_options`); without a URL
(and without ``JUPYTER_JCLI_SERVER_URL``) kernels are local, as always. The values go to
:func:`jupyter_jcli.workbench.server_from_options`, which falls back to the
``JUPYTER_JCLI_SERVER_*`` variables and refuses a bad URL with ``USAGE_ERROR`` before
anything starts. The token is never printed (not in ``--help``, not in an error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from jupyter_jcli.kernels import ServerConfig

__all__ = ["server_from", "server_options"]

_F = TypeVar("_F", bound=Callable[..., Any])

_HELP = {
    "server_url": "Run the kernel on this Jupyter Server (default: $JUPYTER_JCLI_SERVER_URL; "
    "neither: a local kernel).",
    "token": "The server's token (default: $JUPYTER_JCLI_SERVER_TOKEN, the safer way: "
    "command lines are visible to other users).",
    "server_root": "The local folder that is the server's root (default: "
    "$JUPYTER_JCLI_SERVER_ROOT, else the root_dir the server reports).",
}


def server_options(command: _F) -> _F:
    """Add ``--server-url URL``, ``--token TOKEN`` and ``--server-root DIR`` to a command; it
    receives them as ``server_url``, ``token`` and ``server_root`` (``None`` when not given)."""
    for name, flag, metavar in (
        ("server_root", "--server-root", "DIR"),
        ("token", "--token", "TOKEN"),
        ("server_url", "--server-url", "URL"),
    ):
        command = click.option(flag, name, metavar=metavar, default=None, help=_HELP[name])(command)
    return command


def server_from(
    server_url: str | None, token: str | None, server_root: str | None
) -> ServerConfig | None:
    """The server the options (or the environment) name, ``None`` for local kernels.

    Raises:
        UsageError: ``USAGE_ERROR`` (see :func:`jupyter_jcli.workbench.server_from_options`).
    """
    from jupyter_jcli.workbench import server_from_options

    return server_from_options(server_url, token, server_root)
