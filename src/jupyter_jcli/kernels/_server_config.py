"""Which kernel backend to use: local processes (the default) or a Jupyter Server.

:class:`ServerConfig` is where a Jupyter Server is and how to authenticate to it;
:func:`server_config` builds one from command-line options and the environment
(``JUPYTER_JCLI_SERVER_URL``, ``JUPYTER_JCLI_SERVER_TOKEN``, ``JUPYTER_JCLI_SERVER_ROOT``,
``JUPYTER_JCLI_KERNEL_USERNAME``);
:func:`backend_factory` gives the :data:`~jupyter_jcli.kernels.BackendFactory` for a config
(``None``: :class:`~jupyter_jcli.kernels.LocalBackend`).
"""

from __future__ import annotations

import functools
import getpass
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from jupyter_jcli.errors import UsageError
from jupyter_jcli.kernels._backend import BackendFactory

__all__ = [
    "KERNEL_USERNAME_ENV",
    "SERVER_ROOT_ENV",
    "SERVER_TOKEN_ENV",
    "SERVER_URL_ENV",
    "ServerConfig",
    "backend_factory",
    "kernel_username",
    "server_config",
]

SERVER_URL_ENV = "JUPYTER_JCLI_SERVER_URL"
"""Environment variable: the Jupyter Server base URL (as ``--server-url``)."""
SERVER_TOKEN_ENV = "JUPYTER_JCLI_SERVER_TOKEN"
"""Environment variable: the Jupyter Server token (as ``--token``; the only way host setup
passes a token, so it never lands in a host's config file)."""
SERVER_ROOT_ENV = "JUPYTER_JCLI_SERVER_ROOT"
"""Environment variable: the local folder the server's root maps to (as ``--server-root``)."""
KERNEL_USERNAME_ENV = "JUPYTER_JCLI_KERNEL_USERNAME"
"""Environment variable: the ``KERNEL_USERNAME`` sent to a gateway (as ``--kernel-username``)."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """A Jupyter Server (JupyterLab, JupyterHub, Kernel Gateway, Enterprise Gateway).

    Attributes:
        url: the base URL with its path prefix and a trailing ``/``
            (``https://hub.example.org/user/ana/``); REST paths such as ``api/kernels`` are
            joined to it.
        token: sent as ``Authorization: token <token>``; ``None`` for a server without auth.
        verify: verify TLS certificates (``True``), or the path of a CA bundle to verify with.
        server_root: the local folder that is the server's root (notebook paths are mapped
            to server paths relative to it); ``None``: ask the server for its ``root_dir``.
        kernel_username: the ``KERNEL_USERNAME`` a kernel started through ``POST api/kernels``
            (a gateway) gets in its ``env``: the user Enterprise Gateway authorizes, and
            impersonates where it is set up to; ``None``: the local user's name
            (:func:`kernel_username`).
    """

    url: str
    token: str | None = None
    verify: bool | str = True
    server_root: Path | None = None
    kernel_username: str | None = None

    def __repr__(self) -> str:
        token = None if self.token is None else "***"
        return (
            f"ServerConfig(url={self.url!r}, token={token!r}, verify={self.verify!r}, "
            f"server_root={self.server_root!r}, kernel_username={self.kernel_username!r})"
        )


def kernel_username(config: ServerConfig) -> str | None:
    """The ``KERNEL_USERNAME`` to send: the configured one, else this process's user name
    (:func:`getpass.getuser`: ``$LOGNAME``, ``$USER``, ..., then the password database);
    ``None`` when neither is known (nothing is sent, and the gateway picks its own)."""
    if config.kernel_username:
        return config.kernel_username
    try:
        return getpass.getuser() or None
    except (KeyError, OSError):  # a uid without a name (3.13 raises OSError, older KeyError)
        return None


def server_config(
    url: str | None = None,
    token: str | None = None,
    server_root: str | os.PathLike[str] | None = None,
    *,
    kernel_username: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServerConfig | None:
    """The server to use from options, falling back to the environment variables.

    Returns ``None`` (local kernels) when neither ``url`` nor ``JUPYTER_JCLI_SERVER_URL`` is
    set. The URL is normalised to end in ``/``.

    Raises:
        UsageError: ``USAGE_ERROR`` for a URL that is not ``http``/``https`` with a host, a
            root or a kernel user name given without a URL, an empty kernel user name, or a
            root that is not a folder here.
    """
    env = os.environ if environ is None else environ
    url = url or env.get(SERVER_URL_ENV) or None
    token = token or env.get(SERVER_TOKEN_ENV) or None
    root = server_root or env.get(SERVER_ROOT_ENV) or None
    username = kernel_username or env.get(KERNEL_USERNAME_ENV) or None
    if kernel_username is not None and not kernel_username.strip():
        raise UsageError(  # an empty name would silently fall back to the local user's
            "--kernel-username needs a user name", {"option": "kernel_username"}
        )
    if url is None:
        if server_root:
            raise UsageError("--server-root needs --server-url", {"option": "server_root"})
        if kernel_username is not None:  # local kernels have no KERNEL_USERNAME to send
            raise UsageError("--kernel-username needs --server-url", {"option": "kernel_username"})
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a bad port or IPv6 literal raises here)
    except ValueError as exc:  # "http://[::1", "http://h:99999"
        raise UsageError(
            f"the server URL is not a valid URL ({exc})", {"option": "server_url"}
        ) from exc
    if parts.scheme not in ("http", "https") or not parts.netloc:
        shown = parts._replace(query="", fragment="").geturl()
        raise UsageError(  # never echo a query: it may hold a token (?token=...)
            f"the server URL must be http:// or https:// with a host, not {shown!r}",
            {"option": "server_url", "value": shown},
        )
    if parts.query or parts.fragment:
        raise UsageError(
            "the server URL must not have a query or fragment (pass the token with --token)",
            {"option": "server_url"},
        )
    base = url if url.endswith("/") else url + "/"
    if root is not None and not Path(root).expanduser().is_dir():  # every path would map wrong
        raise UsageError(
            f"the server root {root!r} is not a folder on this machine (--server-root names "
            "the local folder that is the server's root)",
            {"option": "server_root", "value": str(root)},
        )
    return ServerConfig(
        url=base,
        token=token,
        server_root=Path(root).expanduser().resolve() if root is not None else None,
        kernel_username=username,
    )


def backend_factory(server: ServerConfig | None) -> BackendFactory:
    """The backend factory for ``server``: :class:`~jupyter_jcli.kernels.LocalBackend` for
    ``None`` (local kernels), else one :class:`~jupyter_jcli.kernels.ServerBackend` of that
    server per kernel life. Nothing is contacted until a kernel starts."""
    if server is None:
        from jupyter_jcli.kernels._local import LocalBackend

        return LocalBackend
    from jupyter_jcli.kernels._server import ServerBackend

    return functools.partial(ServerBackend, server)
