"""The options that choose where kernels run and notebooks live, declared once for every
command line: ``j-cli``'s commands that run code or open a notebook, and ``jupyter-mcp``
(``j-cli mcp workbench``). Click declarations with plain help strings, so a command's
``--help`` loads nothing else; the values go to :func:`jupyter_jcli.workbench.server_from_options`
and :func:`~jupyter_jcli.workbench.stores_from_options`, which fall back to the
``JUPYTER_JCLI_SERVER_*`` and ``JUPYTER_JCLI_STORE`` variables and refuse a bad value with
``USAGE_ERROR``. The token is never printed (not in ``--help``, not in an error).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

__all__ = ["STORE_CHOICES", "given_kernel_username", "server_options", "store_option"]

STORE_CHOICES = ("auto", "local", "collab", "contents")
"""The values of ``--store`` (``notebook.stores.STORE_KINDS``; kept here so ``--help`` loads
nothing)."""

_F = TypeVar("_F", bound=Callable[..., Any])

_USERNAME_KEY = "jupyter_jcli.kernel_username"
"""Where ``--kernel-username`` is kept in the click context's ``meta``."""

_SERVER_OPTIONS = (
    (
        "server_url",
        "--server-url",
        "URL",
        "Run the kernels on this Jupyter Server (JupyterLab, JupyterHub "
        "https://hub/user/NAME/, Kernel Gateway, Enterprise Gateway); default "
        "$JUPYTER_JCLI_SERVER_URL; without either, local kernels.",
    ),
    (
        "token",
        "--token",
        "TOKEN",
        "The server's token; default $JUPYTER_JCLI_SERVER_TOKEN, which is better: a command "
        "line is visible to other users.",
    ),
    (
        "server_root",
        "--server-root",
        "DIR",
        "The local folder that is the server's root (notebook paths are mapped relative to "
        "it); default $JUPYTER_JCLI_SERVER_ROOT, else the server's own root_dir.",
    ),
)
"""``--server-url``, ``--token``, ``--server-root``: parameter name, flag, metavar, help."""


def _keep_username(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value is not None:
        ctx.meta[_USERNAME_KEY] = value


def server_options(command: _F) -> _F:
    """Add ``--server-url URL``, ``--token TOKEN`` and ``--server-root DIR`` to a command; it
    receives them as ``server_url``, ``token`` and ``server_root`` (``None`` when not given).
    ``--kernel-username NAME`` is added too, kept for :func:`given_kernel_username`."""
    command = click.option(
        "--kernel-username",
        metavar="NAME",
        default=None,
        expose_value=False,
        callback=_keep_username,
        help="The KERNEL_USERNAME a gateway's kernels start with (Enterprise Gateway "
        "authorizes it); default $JUPYTER_JCLI_KERNEL_USERNAME, else the local user's name.",
    )(command)
    for name, flag, metavar, help_text in reversed(_SERVER_OPTIONS):  # listed in this order
        command = click.option(flag, name, metavar=metavar, default=None, help=help_text)(command)
    return command


def store_option(command: _F) -> _F:
    """Add ``--store auto|local|collab|contents`` to a command; it receives it as ``store``
    (``None`` when not given: ``$JUPYTER_JCLI_STORE``, else ``auto``)."""
    return click.option(
        "--store",
        "store",
        metavar="|".join(STORE_CHOICES),
        default=None,
        help="Where notebooks are read and written: auto (default; $JUPYTER_JCLI_STORE), "
        "local (the file here), collab (the server's live collaborative document), contents "
        "(the server's contents API). auto: local without a server URL, else collab when the "
        "server has real-time collaboration, else contents when no --server-root is given "
        "and the path is no file here, else local.",
    )(command)


def given_kernel_username() -> str | None:
    """The running command's ``--kernel-username``, ``None`` when not given (or outside a
    click command)."""
    ctx = click.get_current_context(silent=True)
    value = ctx.find_root().meta.get(_USERNAME_KEY) if ctx is not None else None
    return value if isinstance(value, str) else None
