"""The Jupyter Server REST API, and the server backend's one error boundary.

REST paths (https://jupyter-server.readthedocs.io/en/latest/developers/rest-api.html) are
joined to the configured base URL (its path prefix kept, e.g. JupyterHub's ``/user/NAME/``).
The token goes in the ``Authorization: token ...`` header, never in a URL, so no error detail
can carry it.

:func:`server_errors` is the boundary: whatever ``httpx``, ``websockets``, the socket or TLS
layer raises while talking to the server leaves as a :class:`KernelError` chained ``from``
the original::

    connection refused, DNS, TLS, timeout, lost connection   -> SERVER_UNREACHABLE
    HTTP 401 / 403 (REST or the WebSocket handshake)          -> SERVER_AUTH_FAILED
    any other unexpected status or document                  -> SERVER_ERROR

:func:`start_refusals` narrows it for the request that starts a kernel, made after the token
was accepted: an error status there is the server refusing that kernel
(``KERNEL_START_REFUSED``, with the server's reason), as Enterprise Gateway does (HTTP 403)
for a ``KERNEL_USERNAME`` in ``EG_UNAUTHORIZED_USERS`` or missing from a non-empty
``EG_AUTHORIZED_USERS``, or over a kernel limit.
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
    "named_id",
    "no_sessions",
    "server_errors",
    "session_body",
    "ssl_context",
    "start_refusals",
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


@contextmanager
def start_refusals(doing: str, server_url: str, kernel_username: str | None) -> Iterator[None]:
    """Around the request that starts a kernel (``POST api/kernels`` or ``api/sessions``),
    made after the server accepted the token: its HTTP error status becomes
    ``KERNEL_START_REFUSED`` (see the module docstring); every other error passes unchanged.

    Raises:
        KernelError: ``KERNEL_START_REFUSED``, details ``status``, ``path``, ``reason`` (the
            server's own words, when it gave them), ``server_url`` and ``kernel_username``
            (the ``KERNEL_USERNAME`` sent, when one was).
    """
    try:
        yield
    except KernelError as exc:
        status = exc.details.get("status")
        if exc.code not in (ErrorCode.SERVER_ERROR, ErrorCode.SERVER_AUTH_FAILED):
            raise
        if not isinstance(status, int) or status < 400:
            raise
        said = exc.details.get("reason")
        details = {**exc.details, "server_url": server_url}
        advice = ""
        if kernel_username is not None:
            details["kernel_username"] = kernel_username
            if status in (401, 403):
                advice = (
                    f"; a gateway may refuse the kernel's user (KERNEL_USERNAME "
                    f"{kernel_username!r}): pass one it authorizes with --kernel-username "
                    "or JUPYTER_JCLI_KERNEL_USERNAME"
                )
        raise KernelError(
            ErrorCode.KERNEL_START_REFUSED,
            f"{doing}: the server refused to start the kernel (HTTP {status}"
            + (f": {said})" if said else ")")
            + advice,
            details,
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

    async def __aenter__(self) -> ServerApi:
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

    async def require_kernelspec(self, spec: str) -> None:
        """Check that the server can start kernelspec ``spec``.

        Raises:
            KernelError: ``KERNELSPEC_NOT_FOUND`` (details ``kernelspec``, ``installed``,
                ``server_url``); as the class says.
        """
        installed = await self.kernelspecs()
        if spec not in installed:
            raise KernelError(
                ErrorCode.KERNELSPEC_NOT_FOUND,
                f"the Jupyter Server has no kernelspec {spec!r}; set the notebook's "
                f"kernelspec to one of: {', '.join(installed) or '(none)'}",
                {"kernelspec": spec, "installed": installed, "server_url": self.config.url},
            )

    async def sessions(self) -> list[dict[str, Any]] | None:
        """The server's sessions; ``None`` when it has no sessions API to list (HTTP 404, or
        403 as Jupyter Kernel Gateway answers unless kernel listing is enabled).

        Jupyter Server answers 403 to a wrong or missing token too, so a 403 is taken for a
        gateway only when the server accepts the token for its kernelspecs, which every
        server and gateway lists.

        Raises:
            KernelError: ``SERVER_AUTH_FAILED`` when the token is refused; as the class says.
        """
        try:
            answer = await self.request("GET", "api/sessions", "listing sessions", missing_ok=True)
        except KernelError as exc:
            if exc.details.get("status") != 403:
                raise
            await self.kernelspecs()  # a refused token is refused here too: SERVER_AUTH_FAILED
            return None
        if answer is None:
            return None
        if not isinstance(answer, list):
            raise KernelError(
                ErrorCode.SERVER_ERROR,
                "the Jupyter Server's session list is not a JSON list",
                {"path": "api/sessions"},
            )
        return [item for item in answer if isinstance(item, dict)]

    async def create_session(
        self, body: Mapping[str, Any], timeout: float
    ) -> tuple[str, dict[str, Any]]:
        """``POST api/sessions`` (a :func:`session_body`), bounded by ``timeout`` s: the new
        session's id and model (its kernel's id: :func:`named_id` of ``model.get("kernel")``).

        Raises:
            KernelError: ``KERNEL_START_REFUSED`` (:func:`start_refusals`); as the class says.
        """
        doing = "creating the notebook's session"
        with start_refusals(doing, self.config.url, None):
            model = await self.request("POST", "api/sessions", doing, body=body, timeout=timeout)
        return named_id(model, doing), model

    async def start_kernel(self, spec: str, env: Mapping[str, str], timeout: float) -> str:
        """``POST api/kernels`` of kernelspec ``spec`` with ``env`` (a gateway passes its
        ``KERNEL_*`` variables to the kernel), bounded by ``timeout`` s: the kernel's id.

        Raises:
            KernelError: ``KERNEL_START_REFUSED`` (:func:`start_refusals`); as the class says.
        """
        doing, body = "starting a kernel", {"name": spec, "env": dict(env)}
        with start_refusals(doing, self.config.url, env.get("KERNEL_USERNAME")):
            model = await self.request("POST", "api/kernels", doing, body=body, timeout=timeout)
        return named_id(model, doing)

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


def session_body(path: str, name: str, spec: str) -> dict[str, Any]:
    """The ``POST api/sessions`` body of a notebook (server ``path``, file ``name``) on
    kernelspec ``spec``: ``type: notebook``, as JupyterLab creates it."""
    return {"path": path, "type": "notebook", "name": name, "kernel": {"name": spec}}


def no_sessions(server_url: str) -> KernelError:
    """``KERNEL_START_FAILED`` for a kernel meant to outlive us on a server without sessions."""
    return KernelError(
        ErrorCode.KERNEL_START_FAILED,
        "this server keeps no sessions (a kernel gateway): its kernels live only as long as "
        "the command that starts them",
        {"server_url": server_url, "reason": "no sessions API"},
    )


def named_id(model: object, doing: str) -> str:
    """The ``id`` of a kernel or session model the server answered with.

    Raises:
        KernelError: ``SERVER_ERROR`` when it names none.
    """
    ident = model.get("id") if isinstance(model, dict) else None
    if not isinstance(ident, str) or not ident:
        raise KernelError(
            ErrorCode.SERVER_ERROR,
            f"{doing}: the Jupyter Server's answer names no kernel id",
            {"reason": "no kernel id"},
        )
    return ident


def _said(response: httpx.Response) -> str | None:
    """The server's own explanation of an error status (``message`` or ``reason`` of its JSON
    error document, and the last line of its ``traceback`` when it sends one, as Enterprise
    Gateway does for an unexpected exception), cut to 300 characters."""
    try:
        document = response.json()
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
