"""The Jupyter Server REST API, and the server backend's one error boundary.

REST paths (https://jupyter-server.readthedocs.io/en/latest/developers/rest-api.html), all
joined to the configured base URL (its path prefix kept, e.g. JupyterHub's ``/user/NAME/``):
``api/kernelspecs``, ``api/kernels`` (start, get, ``interrupt``, ``restart``, delete) and
``api/sessions`` (list, create, delete). The token goes in the ``Authorization: token ...``
header, never in a URL, so no error detail can carry it.

:func:`server_errors` is the boundary: whatever ``httpx``, ``websockets``, the socket or TLS
layer raises while talking to the server leaves the server modules as a :class:`KernelError`
chained ``from`` the original::

    connection refused, DNS, TLS, timeout, lost connection   -> SERVER_UNREACHABLE
    HTTP 401 / 403 (REST or the WebSocket handshake)          -> SERVER_AUTH_FAILED
    any other unexpected status or document                  -> SERVER_ERROR

``httpx`` and ``websockets`` are imported inside the functions that use them.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._server_config import ServerConfig

if TYPE_CHECKING:
    import httpx

__all__ = [
    "CONNECT_TIMEOUT",
    "REQUEST_TIMEOUT",
    "ServerApi",
    "auth_headers",
    "kernel_path",
    "server_errors",
    "ssl_context",
]

REQUEST_TIMEOUT = 30.0
"""Seconds one REST request may take (reading the answer included); starting and restarting
a kernel are bounded by the caller's startup timeout instead."""
CONNECT_TIMEOUT = 10.0
"""Seconds to open a TCP (and TLS) connection to the server."""


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _status_error(status: int, path: str, doing: str, said: str | None) -> KernelError:
    details: dict[str, Any] = {"status": status, "path": path}
    if said:
        details["reason"] = said
    if status in (401, 403):
        return KernelError(
            ErrorCode.SERVER_AUTH_FAILED,
            f"{doing}: the Jupyter Server refused the token (HTTP {status}); pass the "
            "server's token with --token or JUPYTER_JCLI_SERVER_TOKEN",
            details,
        )
    return KernelError(
        ErrorCode.SERVER_ERROR,
        f"{doing}: the Jupyter Server answered HTTP {status} for {path}"
        + (f" ({said})" if said else ""),
        details,
    )


@contextmanager
def server_errors(doing: str, server_url: str) -> Iterator[None]:
    """The server backend's one error boundary (see the module docstring).

    :class:`KernelError` passes unchanged; details name ``server_url`` and ``reason`` (the
    HTTP status and URL path for a refused WebSocket handshake).
    """
    import httpx
    from websockets.exceptions import InvalidStatus, WebSocketException

    try:
        yield
    except KernelError:
        raise
    except InvalidStatus as exc:
        status = exc.response.status_code
        raise _status_error(status, "(websocket)", doing, None) from exc
    except (httpx.TransportError, WebSocketException, OSError, TimeoutError) as exc:
        reason = "timed out" if isinstance(exc, (TimeoutError, httpx.TimeoutException)) else None
        reason = reason or _reason(exc)
        raise KernelError(
            ErrorCode.SERVER_UNREACHABLE,
            f"{doing}: the Jupyter Server at {server_url} could not be reached ({reason})",
            {"server_url": server_url, "reason": reason},
        ) from exc


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


class ServerApi:
    """The REST calls of one Jupyter Server (one ``httpx.AsyncClient``, bounded timeouts).

    Every method raises :class:`KernelError` (``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``,
    ``SERVER_ERROR``) through :func:`server_errors`. Close it with :meth:`aclose`.
    """

    def __init__(self, config: ServerConfig) -> None:
        import httpx

        self.config = config
        self._client = httpx.AsyncClient(
            base_url=config.url,
            headers=auth_headers(config),
            timeout=httpx.Timeout(REQUEST_TIMEOUT, connect=CONNECT_TIMEOUT),
            verify=ssl_context(config.verify),
            follow_redirects=False,
        )

    async def aclose(self) -> None:
        """Close the connection pool (never raises)."""
        try:
            await self._client.aclose()
        except Exception:  # closing a pool whose server went away must not fail a shutdown
            return

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
            KernelError: as the class says; ``SERVER_ERROR`` details ``status``, ``path``,
                ``reason`` (the server's own message, when it gave one).
        """
        import httpx

        limit = httpx.Timeout(timeout, connect=CONNECT_TIMEOUT) if timeout else None
        with server_errors(doing, self.config.url):
            response = await self._client.request(
                method,
                path,
                json=body,
                timeout=limit if limit is not None else httpx.USE_CLIENT_DEFAULT,
            )
            if response.status_code == 404 and missing_ok:
                return None
            if response.status_code >= 400:
                raise _status_error(
                    response.status_code, urlsplit(str(response.url)).path, doing, _said(response)
                )
            if not response.content:
                return None
            try:
                return response.json()
            except ValueError as exc:
                raise KernelError(
                    ErrorCode.SERVER_ERROR,
                    f"{doing}: the Jupyter Server answered with a document that is not JSON",
                    {"status": response.status_code, "path": urlsplit(str(response.url)).path},
                ) from exc

    async def kernelspecs(self) -> list[str]:
        """The kernelspec names the server can start, sorted."""
        answer = await self.request("GET", "api/kernelspecs", "listing the server's kernelspecs")
        specs = answer.get("kernelspecs") if isinstance(answer, dict) else None
        if not isinstance(specs, dict):
            raise KernelError(
                ErrorCode.SERVER_ERROR,
                "the Jupyter Server's kernelspec list has no 'kernelspecs' mapping",
                {"path": "api/kernelspecs"},
            )
        return sorted(specs)

    async def sessions(self) -> list[dict[str, Any]] | None:
        """The server's sessions; ``None`` when it has no sessions API to list (HTTP 404, or
        403 as Jupyter Kernel Gateway answers unless kernel listing is enabled).

        Jupyter Server answers 403 to a wrong or missing token too, so a 403 is taken for a
        gateway only when the server accepts the token for its kernelspecs, which every
        server and gateway lists.

        Raises:
            KernelError: ``SERVER_AUTH_FAILED`` when the token is refused; as the class says.
        """
        with server_errors("listing the server's sessions", self.config.url):
            response = await self._client.get("api/sessions")
        if response.status_code == 403:
            await self.kernelspecs()  # a refused token is refused here too: SERVER_AUTH_FAILED
        if response.status_code in (403, 404):
            return None
        if response.status_code >= 400:
            raise _status_error(
                response.status_code, "api/sessions", "listing sessions", _said(response)
            )
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, list):
            raise KernelError(
                ErrorCode.SERVER_ERROR,
                "the Jupyter Server's session list is not a JSON list",
                {"path": "api/sessions"},
            )
        return [item for item in answer if isinstance(item, dict)]

    async def kernel(self, kernel_id: str) -> dict[str, Any] | None:
        """The kernel's model, or ``None`` when the server has no such kernel (404)."""
        answer = await self.request(
            "GET", kernel_path(kernel_id), "checking the kernel", missing_ok=True
        )
        return answer if isinstance(answer, dict) else None


def kernel_path(kernel_id: str, action: str | None = None) -> str:
    """``api/kernels/{id}`` (or ``.../{action}``), the id URL-escaped."""
    path = f"api/kernels/{quote(kernel_id, safe='')}"
    return f"{path}/{action}" if action else path


def _said(response: httpx.Response) -> str | None:
    """The server's own explanation of an error status (``message`` or ``reason`` of its JSON
    error document), cut to 300 characters."""
    try:
        document = response.json()
    except ValueError:
        return None
    if not isinstance(document, dict):
        return None
    said = document.get("message") or document.get("reason")
    return str(said)[:300] if said else None
