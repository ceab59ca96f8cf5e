"""Serving an MCP server over streamable HTTP, for a team server or a JupyterHub user server.

``--transport streamable-http`` serves the same server object as stdio through the ``mcp``
SDK's own streamable HTTP app (``Server.streamable_http_app``: its session manager, its
DNS-rebinding checks, its bearer-token middleware) under uvicorn, at ``/mcp``
(https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#streamable-http).

- **A bearer token is required.** It comes from ``--token-file PATH`` or
  ``$JUPYTER_JCLI_MCP_TOKEN``; without either one is generated (``secrets.token_urlsafe``) and
  printed once to stderr with the URL and the ``claude mcp add`` line. A token is at least
  :data:`MIN_TOKEN_LENGTH` visible ASCII characters. The SDK's ``RequireAuthMiddleware``
  wraps the whole MCP endpoint: a request without ``Authorization: Bearer <token>``, or with
  another token (compared with ``hmac.compare_digest``), is answered ``401`` before the
  session manager sees it, so it never reaches a tool.
- **Loopback by default.** ``--host`` defaults to ``127.0.0.1``; another address must be
  given explicitly and is warned about on stderr (anyone who can reach it and holds the token
  runs code in the kernels). On a loopback host the SDK's DNS-rebinding protection accepts
  only ``127.0.0.1``, ``localhost`` and ``[::1]`` as ``Host``; ``--allow-host NAME`` adds a
  name a reverse proxy forwards (``jupyter-server-proxy`` keeps the Hub's ``Host``).
- **Roots** work as on stdio (:mod:`jupyter_jcli.mcp._roots`): the ``--root`` folders (the
  workbench's default: its working directory); the read-only server without ``--root`` asks
  the client for its roots, which over HTTP name folders of the client's machine, so give
  ``--root`` there.
- **Stopping.** On SIGTERM, SIGINT or SIGHUP the HTTP server stops (open requests get at most
  :data:`STOP_SECONDS`), then the server's cleanup runs (the workbench stops the kernels it
  started, bounded by its own timeout) and the process dies of the signal, as on stdio.

Errors at start-up are :class:`~jupyter_jcli.errors.JcliError`: ``USAGE_ERROR`` for a bad
option, a short token or an address that cannot be bound; ``FILE_NOT_FOUND`` for a missing
token file. The servers' command lines (:mod:`jupyter_jcli.mcp._commands`) refuse a bad
option, a missing one included (click's ``Path`` type checks ``--token-file`` first), as
click's usage error: exit 2.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import re
import secrets
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import click

from jupyter_jcli.errors import ErrorCode, JcliError, UsageError

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken
    from mcp.server.lowlevel import Server
    from starlette.applications import Starlette

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "MCP_PATH",
    "MIN_TOKEN_LENGTH",
    "STOP_SECONDS",
    "TOKEN_ENV",
    "HttpTransport",
    "StaticTokenVerifier",
    "http_app",
    "is_loopback",
    "serve_http",
    "transport_from_options",
    "transport_options",
]

TOKEN_ENV = "JUPYTER_JCLI_MCP_TOKEN"
"""The environment variable holding the bearer token (when no ``--token-file``)."""
MIN_TOKEN_LENGTH = 16
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
STOP_SECONDS = 10.0
"""Bound on the HTTP server's graceful stop (open requests and streams)."""

_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
_TOKEN_CHARACTERS = re.compile(r"[\x21-\x7e]+")  # visible ASCII: fits an HTTP header
_CLIENT_ID = "jupyter-jcli-token"
_F = TypeVar("_F", bound=Callable[..., Any])
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HttpTransport:
    """Where and how to serve over streamable HTTP.

    Attributes:
        host: the address to bind (``127.0.0.1`` unless given).
        port: the TCP port (0: a free one, printed at start).
        token: the bearer token every request must carry (never in ``repr``).
        token_source: where the token came from: ``"--token-file"``, ``TOKEN_ENV`` or
            ``"generated"`` (only a generated token is printed).
        allowed_hosts: extra ``Host`` header values accepted on a loopback bind.
    """

    host: str
    port: int
    token: str = field(repr=False)
    token_source: str
    allowed_hosts: tuple[str, ...] = ()


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for one shared bearer token, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._expected = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access granted to ``token``, or None when it is not the server's token."""
        from mcp.server.auth.provider import AccessToken

        if not hmac.compare_digest(token.encode(), self._expected):
            return None
        return AccessToken(token=token, client_id=_CLIENT_ID, scopes=[])


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or ``localhost``) is only reachable from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def transport_options(command: _F) -> _F:
    """Add ``--transport``, ``--host``, ``--port``, ``--token-file`` and ``--allow-host``
    (repeatable) to a command; it receives them as ``transport``, ``host``, ``port``,
    ``token_file`` and ``allow_host``, the arguments of :func:`transport_from_options`."""
    for option in reversed(
        (
            click.option(
                "--transport",
                type=click.Choice(("stdio", "streamable-http")),
                default="stdio",
                help="stdio (default: the host starts the server) or streamable-http (a server "
                "that agents reach by URL, at /mcp).",
            ),
            click.option(
                "--host",
                metavar="HOST",
                help=f"HTTP: the address to bind (default {DEFAULT_HOST}; any other address "
                "is reachable from other machines: use it only on a network you trust).",
            ),
            click.option(
                "--port",
                type=int,
                metavar="PORT",
                help=f"HTTP: the TCP port (default {DEFAULT_PORT}; 0: a free one).",
            ),
            click.option(
                "--token-file",
                type=click.Path(exists=True, dir_okay=False),  # click's usage error if not
                metavar="PATH",
                help=f"HTTP: a file holding the bearer token (default: ${TOKEN_ENV}, else a "
                "new token printed once to stderr).",
            ),
            click.option(
                "--allow-host",
                multiple=True,
                metavar="NAME",
                help="HTTP on a loopback --host: a Host header to accept besides "
                "127.0.0.1/localhost (a reverse proxy's name, e.g. the JupyterHub's; "
                "repeatable). A non-loopback --host checks no Host header.",
            ),
        )
    ):
        command = option(command)
    return command


def _check_token(token: str, source: str) -> str:
    token = token.strip()
    if len(token) < MIN_TOKEN_LENGTH or not _TOKEN_CHARACTERS.fullmatch(token):
        raise UsageError(
            f"The MCP token from {source} must be at least {MIN_TOKEN_LENGTH} visible ASCII "
            "characters with no spaces.",
            {"source": source, "min_length": MIN_TOKEN_LENGTH}
            | ({"option": "token_file"} if source == "--token-file" else {}),
        )
    return token


def _token(token_file: str | None, environ: Mapping[str, str]) -> tuple[str, str]:
    if token_file is not None:
        try:
            text = Path(token_file).expanduser().read_text(encoding="utf-8")
        except FileNotFoundError as err:
            raise JcliError(
                ErrorCode.FILE_NOT_FOUND,
                f"Token file {token_file} does not exist.",
                {"path": token_file, "option": "token_file"},
            ) from err
        except (OSError, UnicodeDecodeError) as err:
            raise UsageError(
                f"Token file {token_file} cannot be read: {type(err).__name__}.",
                {"path": token_file, "reason": type(err).__name__, "option": "token_file"},
            ) from err
        return _check_token(text, "--token-file"), "--token-file"
    if environ.get(TOKEN_ENV):
        return _check_token(environ[TOKEN_ENV], TOKEN_ENV), TOKEN_ENV
    return secrets.token_urlsafe(32), "generated"


def transport_from_options(
    *,
    transport: str = "stdio",
    host: str | None = None,
    port: int | None = None,
    token_file: str | None = None,
    allow_host: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> HttpTransport | None:
    """The HTTP transport the options (:func:`transport_options`) ask for, or None for stdio.

    Raises:
        JcliError: ``USAGE_ERROR`` (an HTTP option with stdio: details ``options``, the
            flags; a bad port or token: details ``option``, the parameter's name when an
            option is at fault), ``FILE_NOT_FOUND`` (the token file, details ``option``).
    """
    environ = os.environ if environ is None else environ
    if transport == "stdio":
        given = [
            flag
            for flag, value in (
                ("--host", host),
                ("--port", port),
                ("--token-file", token_file),
                ("--allow-host", allow_host),
            )
            if value not in (None, (), [])
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)}: only with --transport streamable-http.",
                {"options": given},
            )
        return None
    port = DEFAULT_PORT if port is None else port
    if not 0 <= port <= 65535:
        raise UsageError(
            f"--port {port} is not a TCP port (0-65535).", {"port": port, "option": "port"}
        )
    token, source = _token(token_file, environ)
    return HttpTransport(
        host=host or DEFAULT_HOST,
        port=port,
        token=token,
        token_source=source,
        allowed_hosts=tuple(allow_host),
    )


def http_app(server: Server[Any], transport: HttpTransport) -> Starlette:
    """The SDK's streamable HTTP app for ``server``, behind the bearer token.

    Args:
        server: the low-level server (tools, roots) built for stdio.
        transport: the host (its DNS-rebinding rules) and token.
    """
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.transport_security import TransportSecuritySettings
    from pydantic import AnyHttpUrl

    security = None
    if is_loopback(transport.host):
        names = ["127.0.0.1", "localhost", "[::1]", *transport.allowed_hosts]
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[*names, *(f"{name}:*" for name in names)],
            allowed_origins=[
                f"{scheme}://{name}{port}"
                for name in names
                for scheme in ("http", "https")
                for port in ("", ":*")
            ],
        )
    return server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=transport.host,
        transport_security=security,
        auth=AuthSettings(
            # required by the model, unused: no OAuth server, no protected-resource metadata
            issuer_url=AnyHttpUrl(f"http://{DEFAULT_HOST}"),
            resource_server_url=None,
        ),
        token_verifier=StaticTokenVerifier(transport.token),
    )


def _bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port``.

    Raises:
        JcliError: ``USAGE_ERROR`` when the address cannot be bound (details ``host``,
            ``port``, ``reason``).
    """
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as err:
        raise UsageError(
            f"Cannot serve on {host}:{port}: {err.strerror or err}.",
            {"host": host, "port": port, "reason": type(err).__name__},
        ) from err
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as err:
        sock.close()
        raise UsageError(
            f"Cannot serve on {host}:{port}: {err.strerror or err}.",
            {"host": host, "port": port, "reason": type(err).__name__},
        ) from err
    return sock


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}{MCP_PATH}"


def _announce(name: str, transport: HttpTransport, port: int) -> None:
    """Tell the person on stderr where the server is and how to add it (the token only when
    it was generated: it is printed this once)."""
    url = _url(transport.host, port)
    lines = [f"{name}: serving MCP over streamable HTTP at {url}"]
    if not is_loopback(transport.host):
        lines.append(
            f"WARNING: {transport.host} is not a loopback address: anyone who can reach it and "
            "holds the token runs code in the kernels. Prefer 127.0.0.1 behind an HTTPS proxy."
        )
    if transport.token_source == "generated":
        lines += [
            f"Bearer token (shown once; pass --token-file or ${TOKEN_ENV} to choose it): "
            f"{transport.token}",
            f'Add it: claude mcp add --transport http {name} {url} --header "Authorization: '
            f'Bearer {transport.token}"',
        ]
    else:
        lines.append(
            f'Add it: claude mcp add --transport http {name} {url} --header "Authorization: '
            f'Bearer <the token from {transport.token_source}>"'
        )
    print("\n".join(lines), file=sys.stderr, flush=True)


async def serve_http(
    server: Server[Any],
    transport: HttpTransport,
    cleanup: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Serve ``server`` over streamable HTTP until a signal arrives.

    On SIGTERM, SIGINT or SIGHUP: stop the HTTP server (bounded by :data:`STOP_SECONDS`),
    run ``cleanup``, then die of the signal (its default action), as the stdio server does.

    Args:
        server: the low-level server.
        transport: host, port and token.
        cleanup: run on exit, already bounded by the caller; None: nothing to clean up.

    Raises:
        JcliError: ``USAGE_ERROR`` when the address cannot be bound.
    """
    import uvicorn

    class _Uvicorn(uvicorn.Server):
        def capture_signals(self) -> Any:  # signals are ours (below), not uvicorn's
            from contextlib import nullcontext

            return nullcontext()

    app = http_app(server, transport)
    sock = _bind(transport.host, transport.port)
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        lifespan="on",
        server_header=False,
        timeout_graceful_shutdown=int(STOP_SECONDS),
    )
    web = _Uvicorn(config)
    stopped = anyio.Event()
    received: list[int] = []

    async def stop_on_signal() -> None:
        with anyio.open_signal_receiver(*_SIGNALS) as signals:
            async for caught in signals:
                received.append(caught)
                break
        signum = received[0]
        _log.warning("received %s: stopping", signal.Signals(signum).name)
        web.should_exit = True
        with anyio.move_on_after(STOP_SECONDS + 5):
            await stopped.wait()
        if cleanup is not None:
            await cleanup()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    _announce(server.name, transport, int(sock.getsockname()[1]))
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(stop_on_signal)
            try:
                await web.serve(sockets=[sock])
            finally:
                stopped.set()
            if not received:
                group.cancel_scope.cancel()
    finally:
        sock.close()
        if cleanup is not None and not received:
            await cleanup()
