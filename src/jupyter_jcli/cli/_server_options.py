"""``--server-url``, ``--token``, ``--server-root``: the Jupyter Server a command's kernels run on.

Every ``j-cli`` command that runs code takes them (:func:`server_options`); without a URL
(and without ``JUPYTER_JCLI_SERVER_URL``) kernels are local, as always. The values go to
:func:`jupyter_jcli.workbench.server_from_options`, which falls back to the
``JUPYTER_JCLI_SERVER_*`` variables and refuses a bad URL with ``USAGE_ERROR`` before
anything starts. The token is never printed (not in ``--help``, not in an error).
``--kernel-username NAME`` (default ``$JUPYTER_JCLI_KERNEL_USERNAME``, else the local user)
is the ``KERNEL_USERNAME`` a gateway's kernels are started with; the commands never see it:
:func:`server_from` reads it from the click context.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from jupyter_jcli.kernels import ServerConfig

__all__ = ["given_kernel_username", "server_from", "server_options"]

_F = TypeVar("_F", bound=Callable[..., Any])

_HELP = {
    "server_url": "Run the kernel on this Jupyter Server (default: $JUPYTER_JCLI_SERVER_URL; "
    "neither: a local kernel).",
    "token": "The server's token (default: $JUPYTER_JCLI_SERVER_TOKEN, the safer way: "
    "command lines are visible to other users).",
    "server_root": "The local folder that is the server's root (default: "
    "$JUPYTER_JCLI_SERVER_ROOT, else the root_dir the server reports).",
}
_USERNAME_HELP = (
    "The KERNEL_USERNAME a gateway's kernels start with (Enterprise Gateway authorizes it; "
    "default: $JUPYTER_JCLI_KERNEL_USERNAME, else the local user's name)."
)
_USERNAME_KEY = "jupyter_jcli.kernel_username"
"""Where ``--kernel-username`` is kept in the click context's ``meta``."""


def _keep_username(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.meta[_USERNAME_KEY] = value


def server_options(command: _F) -> _F:
    """Add ``--server-url URL``, ``--token TOKEN`` and ``--server-root DIR`` to a command; it
    receives them as ``server_url``, ``token`` and ``server_root`` (``None`` when not given).
    ``--kernel-username NAME`` is added too, kept for :func:`server_from`."""
    command = click.option(
        "--kernel-username",
        metavar="NAME",
        default=None,
        expose_value=False,
        callback=_keep_username,
        help=_USERNAME_HELP,
    )(command)
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
    """The server the options (or the environment) name, ``None`` for local kernels; with
    the command's ``--kernel-username``, when given.

    Raises:
        UsageError: ``USAGE_ERROR`` (see :func:`jupyter_jcli.workbench.server_from_options`).
    """
    from jupyter_jcli.workbench import server_from_options

    return server_from_options(
        server_url, token, server_root, kernel_username=given_kernel_username()
    )


def given_kernel_username() -> str | None:
    """The running command's ``--kernel-username``, ``None`` when not given (or outside a
    click command)."""
    ctx = click.get_current_context(silent=True)
    value = ctx.find_root().meta.get(_USERNAME_KEY) if ctx is not None else None
    return value if isinstance(value, str) else None
