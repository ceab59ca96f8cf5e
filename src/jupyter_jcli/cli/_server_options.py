"""``--server-url``, ``--token``, ``--server-root``: the Jupyter Server a command's kernels run on.

Every ``j-cli`` command that runs code takes them (:func:`server_options`, declared once in
:mod:`jupyter_jcli.workbench` for every command line, ``jupyter-mcp``'s too); without a URL
(and without ``JUPYTER_JCLI_SERVER_URL``) kernels are local, as always. The values go to
:func:`jupyter_jcli.workbench.server_from_options`, which falls back to the
``JUPYTER_JCLI_SERVER_*`` variables and refuses a bad URL with ``USAGE_ERROR`` before
anything starts. The token is never printed (not in ``--help``, not in an error).
``--kernel-username NAME`` (default ``$JUPYTER_JCLI_KERNEL_USERNAME``, else the local user)
is the ``KERNEL_USERNAME`` a gateway's kernels are started with; the commands never see it:
:func:`server_from` reads it from the click context.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from jupyter_jcli.workbench import given_kernel_username, server_options, store_option

if TYPE_CHECKING:
    from jupyter_jcli.kernels import ServerConfig

__all__ = ["current_server", "server_from", "server_options", "store_options"]

_SERVER_KEY = "jupyter_jcli.server"
_SERVER_URL_ENV = "JUPYTER_JCLI_SERVER_URL"  # kernels.SERVER_URL_ENV, without loading kernels
_STORE_ENV = "JUPYTER_JCLI_STORE"  # notebook.stores.STORE_ENV

_F = TypeVar("_F", bound=Callable[..., Any])


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


def store_options(command: _F) -> _F:
    """Add ``--store auto|local|collab|contents`` (default ``$JUPYTER_JCLI_STORE``, else
    ``auto``) to a command that names a notebook, plus ``--server-url``, ``--token`` and
    ``--server-root`` unless it has them (it then does not receive them). The command runs
    with the store choice they name active (``notebook.stores.using_store``), so every
    notebook it opens by path opens in that store; without a server, or with ``--store
    local``, nothing changes (local files). With neither ``--store``, the variable nor a
    server, the choice active where the command is run is kept (a program that runs the
    command line in its process under ``notebook.stores.using_store``). Put it directly
    under the ``@command`` line.

    Raises:
        UsageError: ``USAGE_ERROR`` for an unknown store (also from the variable), or
            ``collab``/``contents`` without a server URL, before the command does anything.
    """
    params = getattr(command, "__click_params__", [])
    passes_server = any(param.name == "server_url" for param in params)

    @functools.wraps(command)
    def run(*args: Any, store: str | None = None, **kwargs: Any) -> Any:
        names = ("server_url", "token", "server_root")
        server = [kwargs[name] if passes_server else kwargs.pop(name) for name in names]
        from jupyter_jcli.notebook.stores import StoreChoice, using_store

        config = None  # the server modules load only with a server (or an option to refuse)
        given = [*server, given_kernel_username()]
        if any(value is not None for value in given) or os.environ.get(_SERVER_URL_ENV):
            config = server_from(*server)
        click.get_current_context().meta[_SERVER_KEY] = config
        if config is None:
            choice = StoreChoice(store)
        else:
            from jupyter_jcli.workbench import stores_from_options

            choice = stores_from_options(store, config)
        if choice.local_only and store is None and not os.environ.get(_STORE_ENV):
            return command(*args, **kwargs)  # nothing named: a caller's active choice holds
        with using_store(None if choice.local_only else choice):
            return command(*args, **kwargs)

    wrapped: Any = run
    if not passes_server:
        wrapped = server_options(wrapped)
    return store_option(wrapped)  # type: ignore[no-any-return]


def current_server() -> ServerConfig | None:
    """The server the running command's options named (:func:`store_options` resolved it),
    else the one the environment names."""
    context = click.get_current_context(silent=True)
    if context is not None and _SERVER_KEY in context.meta:
        config: ServerConfig | None = context.meta[_SERVER_KEY]
        return config
    return server_from(None, None, None)
