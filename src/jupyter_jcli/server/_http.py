"""Talking to a Jupyter Server: its token, TLS, bounded HTTP clients, and the one error
boundary every caller (the kernel layer, the notebook stores) goes through.

REST paths (https://jupyter-server.readthedocs.io/en/latest/developers/rest-api.html) are
joined to the configured base URL (its path prefix kept, e.g. JupyterHub's ``/user/NAME/``).
The token goes in the ``Authorization: token ...`` header, never in a URL, so no error detail
can carry it.

:func:`server_errors` is the boundary: whatever ``httpx``, ``websockets``, the socket or TLS
layer raises while talking to the server leaves as a
:class:`~jupyter_jcli.errors.JcliError` of the caller's class (``KernelError`` for the kernel
layer, ``NotebookError`` for a store) chained ``from`` the original; :func:`status_error`
is the same table for an answer's status::

    connection refused, DNS, TLS, timeout, lost connection   -> SERVER_UNREACHABLE
    HTTP 401 / 403 (REST or the WebSocket handshake)          -> SERVER_AUTH_FAILED
    any other unexpected status or document                  -> SERVER_ERROR
"""

from __future__ import annotations

import ssl
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlsplit

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.server._config import ServerConfig

__all__ = [
    "CONNECT_TIMEOUT",
    "REQUEST_TIMEOUT",
    "ServerClient",
    "auth_headers",
    "client_options",
    "server_errors",
    "ssl_context",
    "status_error",
    "websocket_options",
]

_Client = TypeVar("_Client", bound="ServerClient")

REQUEST_TIMEOUT = 30.0
"""Seconds one REST request may take (reading the answer included), unless the caller
bounds it otherwise."""
CONNECT_TIMEOUT = 10.0
"""Seconds to open a TCP (and TLS) connection to the server (at most the request's own
bound)."""


def ssl_context(verify: bool | str) -> ssl.SSLContext:
    """The TLS context for ``ServerConfig.verify``: the system's CAs (``True``), a CA bundle
    file (a path), or no verification (``False``)."""
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if isinstance(verify, str):
        return ssl.create_default_context(cafile=verify)
    return ssl.create_default_context()


def auth_headers(config: ServerConfig) -> dict[str, str]:
    """``Authorization: token ...`` when the config has a token, else nothing."""
    return {} if config.token is None else {"Authorization": f"token {config.token}"}


def client_options(config: ServerConfig, timeout: float = REQUEST_TIMEOUT) -> dict[str, Any]:
    """The keyword arguments of an ``httpx.Client`` or ``httpx.AsyncClient`` for ``config``:
    its base URL, token header and TLS context, every request bounded by ``timeout`` s
    (connecting by at most :data:`CONNECT_TIMEOUT`), no redirect followed (a redirect to a
    login page is a refusal, not an answer)."""
    import httpx

    return {
        "base_url": config.url,
        "headers": auth_headers(config),
        "timeout": httpx.Timeout(timeout, connect=min(CONNECT_TIMEOUT, timeout)),
        "verify": ssl_context(config.verify),
        "follow_redirects": False,
    }


def websocket_options(config: ServerConfig, url: str) -> dict[str, Any]:
    """The token header and (for ``wss:``) TLS context of ``websockets``' ``connect`` to
    ``url`` on the server of ``config``."""
    secure = url.startswith("wss:")
    return {
        "additional_headers": auth_headers(config),
        "ssl": ssl_context(config.verify) if secure else None,
    }


def _said(body: bytes | None) -> str | None:
    """The server's own explanation of an error status (``message`` or ``reason`` of its JSON
    error document, and the last line of its ``traceback`` when it sends one, as Enterprise
    Gateway does for an unexpected exception), cut to 300 characters."""
    import json

    try:
        document = json.loads(body) if body else None
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    said = str(document.get("message") or document.get("reason") or "")
    trace = document.get("traceback")
    last = (
        trace.strip().splitlines()[-1].strip() if isinstance(trace, str) and trace.strip() else ""
    )
    said = f"{said} ({last})" if said and last else said or last
    return said[:300] or None


def status_error(
    status: int,
    path: str,
    doing: str,
    body: bytes | None = None,
    *,
    error: type[JcliError] = JcliError,
    details: Mapping[str, Any] | None = None,
) -> JcliError:
    """The error for an answer of HTTP ``status`` (at least 400) to a request for ``path``
    (see the module docstring), of class ``error``; ``body`` is the answer, whose own
    explanation becomes the detail ``reason``.

    Returns:
        ``SERVER_AUTH_FAILED`` (401, 403) or ``SERVER_ERROR``, details ``status``, ``path``,
        ``reason`` (when the server gave one) and ``details``.
    """
    said = _said(body)
    facts: dict[str, Any] = {**(details or {}), "status": status, "path": path}
    if said:
        facts["reason"] = said
    if status in (401, 403):
        return error(
            ErrorCode.SERVER_AUTH_FAILED,
            f"{doing}: the Jupyter Server refused the token (HTTP {status}); pass the "
            "server's token with --token or JUPYTER_JCLI_SERVER_TOKEN (for a JupyterHub user "
            "server, an API token of that user)",
            facts,
        )
    return error(
        ErrorCode.SERVER_ERROR,
        f"{doing}: the Jupyter Server answered HTTP {status} for {path}"
        + (f" ({said})" if said else ""),
        facts,
    )


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextmanager
def server_errors(
    doing: str,
    server_url: str,
    *,
    error: type[JcliError] = JcliError,
    details: Mapping[str, Any] | None = None,
) -> Iterator[None]:
    """The one error boundary (see the module docstring): what the transport raises leaves
    as an ``error`` (details ``server_url``, ``reason`` and ``details``; for a refused
    WebSocket handshake ``status`` and ``path: "(websocket)"``). A
    :class:`~jupyter_jcli.errors.JcliError` passes unchanged.
    """
    import httpx

    try:
        yield
    except JcliError:
        raise
    except Exception as exc:
        # A websockets exception means websockets is loaded: an HTTP-only caller never
        # imports it for this boundary.
        ws = sys.modules.get("websockets.exceptions")
        if ws is not None and isinstance(exc, ws.InvalidStatus):
            status = exc.response.status_code
            facts = {"server_url": server_url}
            raise status_error(status, "(websocket)", doing, error=error, details=facts) from exc
        lost = (httpx.TransportError, OSError, TimeoutError)
        if not isinstance(exc, lost) and not (ws and isinstance(exc, ws.WebSocketException)):
            raise
        timed_out = isinstance(exc, (TimeoutError, httpx.TimeoutException))
        reason = "timed out" if timed_out else _reason(exc)
        raise error(
            ErrorCode.SERVER_UNREACHABLE,
            f"{doing}: the Jupyter Server at {server_url} could not be reached ({reason})",
            {**(details or {}), "server_url": server_url, "reason": reason},
        ) from exc


class ServerClient:
    """The REST calls of one Jupyter Server (one ``httpx.AsyncClient``, bounded timeouts).

    Every method raises :attr:`error` (``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``,
    ``SERVER_ERROR``) through :func:`server_errors`; a subclass names its layer's class
    (the kernel layer's ``ServerApi``: ``KernelError``). Close it with :meth:`aclose`.
    """

    error: ClassVar[type[JcliError]] = JcliError

    def __init__(self, config: ServerConfig) -> None:
        import httpx

        self.config = config
        self._client = httpx.AsyncClient(**client_options(config))

    async def aclose(self) -> None:
        """Close the connection pool (never raises)."""
        try:
            await self._client.aclose()
        except Exception:  # closing a pool whose server went away must not fail a shutdown
            return

    async def __aenter__(self: _Client) -> _Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def request(
        self,
        method: str,
        path: str,
        doing: str,
        *,
        body: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        missing_ok: bool = False,
    ) -> Any:
        """One REST call: the decoded JSON answer (``None`` for an empty one, or for 404 when
        ``missing_ok``).

        Raises:
            JcliError: of class :attr:`error`, as the class says; ``SERVER_ERROR`` details
                ``status``, ``path``, ``reason`` (the server's own message, when it gave one).
        """
        import httpx

        limit = httpx.Timeout(timeout, connect=CONNECT_TIMEOUT) if timeout else None
        with server_errors(doing, self.config.url, error=self.error):
            response = await self._client.request(
                method,
                path,
                json=body,
                timeout=limit if limit is not None else httpx.USE_CLIENT_DEFAULT,
            )
            if response.status_code == 404 and missing_ok:
                return None
            if response.status_code >= 400:
                raise status_error(
                    response.status_code,
                    urlsplit(str(response.url)).path,
                    doing,
                    response.content,
                    error=self.error,
                    details={"server_url": self.config.url},
                )
            if not response.content:
                return None
            try:
                return response.json()
            except ValueError as exc:
                raise self.error(
                    ErrorCode.SERVER_ERROR,
                    f"{doing}: the Jupyter Server answered with a document that is not JSON",
                    {"status": response.status_code, "path": urlsplit(str(response.url)).path},
                ) from exc
