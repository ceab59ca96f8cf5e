"""A Jupyter Server client, shared by the kernel layer and the notebook stores.

- Where a server is: :class:`ServerConfig` (URL, token, TLS verification, the local folder of
  its root, the ``KERNEL_USERNAME`` a gateway's kernels get), built by :func:`server_config`
  from options and ``JUPYTER_JCLI_SERVER_*``.
- How a path on this machine maps to the server's: :func:`server_root` (given, else the
  ``root_dir`` a server on this machine reports, :func:`local_server_root`, else the current
  folder) and :func:`server_path`, the one rule (its ``resolve`` says whether symbolic links
  are followed: the kernels' rule, or paths as written: the stores').
- How to talk to it: :func:`auth_headers`, :func:`ssl_context`, :func:`client_options` (an
  ``httpx`` client), :func:`websocket_options`; the one error boundary,
  :func:`server_errors` and :func:`status_error` (transport -> ``SERVER_UNREACHABLE``, 401/403
  -> ``SERVER_AUTH_FAILED``, other -> ``SERVER_ERROR``, raised as the caller's
  :class:`~jupyter_jcli.errors.JcliError` class); :class:`ServerClient`, its REST calls.

Errors: ``USAGE_ERROR`` (a bad URL or root), ``SERVER_PATH_OUTSIDE_ROOT``, and the three codes
of the boundary. ``httpx`` and ``websockets`` are imported only when a request is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.server._config import (
        KERNEL_USERNAME_ENV,
        SERVER_ROOT_ENV,
        SERVER_TOKEN_ENV,
        SERVER_URL_ENV,
        ServerConfig,
        kernel_username,
        local_server_root,
        pid_alive,
        server_config,
        server_path,
        server_root,
    )
    from jupyter_jcli.server._http import (
        CONNECT_TIMEOUT,
        REQUEST_TIMEOUT,
        ServerClient,
        auth_headers,
        client_options,
        server_errors,
        ssl_context,
        status_error,
        websocket_options,
    )

_PUBLIC = {
    "_config": (
        "KERNEL_USERNAME_ENV SERVER_ROOT_ENV SERVER_TOKEN_ENV SERVER_URL_ENV ServerConfig "
        "kernel_username local_server_root pid_alive server_config server_path server_root"
    ),
    "_http": (
        "CONNECT_TIMEOUT REQUEST_TIMEOUT ServerClient auth_headers client_options "
        "server_errors ssl_context status_error websocket_options"
    ),
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562)."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
