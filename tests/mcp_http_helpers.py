"""The real MCP console scripts served over streamable HTTP, for tests.

:func:`running_http_server` starts ``jupyter-mcp`` (or ``jcli-notebook-output``) with
``--transport streamable-http --host 127.0.0.1 --port 0`` (the server binds a free port and
names its URL on stderr: no port another process can take between a probe and the bind), the
bearer token in ``$JUPYTER_JCLI_MCP_TOKEN``, waits (bounded) until ``/mcp`` answers ``401`` to a
request without the token, and always ends the process (SIGTERM, then SIGKILL). :func:`http_session`
is the Python SDK's own streamable HTTP client with the token, initialized.
Imported as ``mcp_http_helpers`` (``tests/`` is on ``sys.path``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from server_helpers import START_WAIT, STOP_WAIT

SCRIPTS = Path(sys.executable).parent
"""Where the venv's console scripts (``jupyter-mcp``, ``jcli-notebook-output``) are."""
HANDSHAKE_VERSION = "2025-11-25"


@dataclass
class HttpServer:
    """One MCP server process served over HTTP."""

    process: subprocess.Popen[bytes]
    url: str
    token: str
    log: Path

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig``; wait (bounded) for the exit; return the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=STOP_WAIT + 60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=STOP_WAIT)
        return self.process.returncode

    def stderr(self) -> str:
        """What the server wrote on stderr so far."""
        return self.log.read_text(errors="replace")


@contextmanager
def running_http_server(
    script: str, root: Path, tmp_path: Path, *extra: str, token: str | None = None
) -> Iterator[HttpServer]:
    """``script --transport streamable-http --host 127.0.0.1 --port 0 --root ROOT EXTRA``,
    running until the block ends."""
    token = token or secrets.token_urlsafe(24)
    log = tmp_path / f"{script}-{secrets.token_hex(4)}.log"
    args = [str(SCRIPTS / script), "--transport", "streamable-http", "--host", "127.0.0.1"]
    args += ["--port", "0", "--root", str(root), *extra]
    env = dict(os.environ)  # the cache in tmp_path; no summaries (no API calls)
    env.update(
        JUPYTER_JCLI_CACHE_DIR=str(tmp_path / "cache"),
        JUPYTER_MCP_DISABLE_SUMMARIES="1",
        JUPYTER_JCLI_MCP_TOKEN=token,
    )
    with log.open("wb") as err:
        process = subprocess.Popen(
            args, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=err, stderr=err
        )
    server = HttpServer(process, "", token, log)
    try:
        _wait_until_up(server)
        yield server
    finally:
        server.stop()


def _wait_until_up(server: HttpServer) -> None:
    """Wait (bounded) for the line naming the server's URL, then for ``/mcp`` to answer."""
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"the server exited: {server.stderr()}")
        if not server.url:
            named = re.search(r"streamable HTTP at (http://\S+/mcp)", server.stderr())
            server.url = named.group(1) if named else ""
            time.sleep(0 if named else 0.2)
            continue
        try:
            if httpx.post(server.url, json={}, timeout=5).status_code == 401:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"the server did not answer within {START_WAIT} s: {server.stderr()}")


@asynccontextmanager
async def http_session(url: str, token: str) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` over the SDK's streamable HTTP client with the token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as client,
        streamable_http_client(url, http_client=client) as (read_stream, write_stream),
        ClientSession(read_stream, write_stream) as session,
    ):
        await session.initialize()
        yield session


def rpc(method: str, params: dict[str, Any], message_id: int | None = 1) -> dict[str, Any]:
    """A JSON-RPC message (a notification when ``message_id`` is None)."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if message_id is not None:
        message["id"] = message_id
    return message


def post(
    server: HttpServer,
    message: dict[str, Any],
    *,
    authorization: str | None,
    session_id: str | None = None,
    host: str | None = None,
) -> httpx.Response:
    """POST one JSON-RPC message as a plain HTTP client, with the given ``Authorization``."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": HANDSHAKE_VERSION,
    }
    if authorization is not None:
        headers["Authorization"] = authorization
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    if host is not None:
        headers["Host"] = host
    return httpx.post(server.url, json=message, headers=headers, timeout=60)


def answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC answer of a 200 response (a JSON body or the SSE ``data:`` line)."""
    if response.headers["content-type"].startswith("application/json"):
        document: dict[str, Any] = response.json()
        return document
    for line in response.text.splitlines():
        if line.startswith("data: "):
            found: dict[str, Any] = json.loads(line.removeprefix("data: "))
            if "id" in found:
                return found
    raise AssertionError(f"no JSON-RPC answer in {response.text!r}")


def open_raw_session(server: HttpServer) -> str:
    """Initialize a session with the right token as a plain HTTP client; its id."""
    params = {
        "protocolVersion": HANDSHAKE_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "raw-http", "version": "0"},
    }
    bearer = f"Bearer {server.token}"
    response = post(server, rpc("initialize", params), authorization=bearer)
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    done = post(
        server,
        rpc("notifications/initialized", {}, None),
        authorization=bearer,
        session_id=session_id,
    )
    assert done.status_code == 202, done.text
    return session_id
