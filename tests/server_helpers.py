"""Real Jupyter servers for tests: ``jupyter server`` and ``jupyter kernelgateway`` as child
processes on 127.0.0.1, a free port, a random token, a temporary root and runtime folder.

:func:`start_server` waits (bounded) until the server answers with the token;
:meth:`RunningServer.stop` always ends it (terminate, then kill). Imported by the server
tests as ``server_helpers`` (``tests/`` is on ``sys.path`` through ``tests/conftest.py``).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx

from jupyter_jcli.kernels import ServerConfig

START_WAIT = 60.0
"""Seconds a server may take to answer after it was started."""
STOP_WAIT = 15.0
"""Seconds a server may take to exit after SIGTERM before it is killed."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RunningServer:
    """One server child process and how to reach it."""

    kind: Literal["server", "kernelgateway"]
    url: str
    token: str
    root: Path
    runtime_dir: Path
    process: subprocess.Popen[bytes]
    log: Path
    args: list[str] = field(default_factory=list)

    def config(self, *, token: str | None = None, root: Path | None = None) -> ServerConfig:
        """A :class:`ServerConfig` for this server (its token and root unless given)."""
        return ServerConfig(
            url=self.url,
            token=self.token if token is None else token,
            server_root=(root or self.root).resolve(),
        )

    def client(self) -> httpx.Client:
        """A REST client of the server with its token (for a test acting as JupyterLab)."""
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"token {self.token}"}, timeout=30.0
        )

    def stop(self) -> None:
        """End the server (SIGTERM, then SIGKILL after :data:`STOP_WAIT` s)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_WAIT)

    def restart(self) -> None:
        """Stop the server and start it again on the same port, token and root."""
        self.stop()
        fresh = _launch(self.kind, self.args, self.log, self.runtime_dir, self.root)
        self.process = fresh
        _wait_ready(self)


def _launch(
    kind: str, args: list[str], log: Path, runtime_dir: Path, root: Path
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime_dir), "PYTHONUNBUFFERED": "1"}
    env["JUPYTER_CONFIG_DIR"] = str(runtime_dir.parent / "config")
    module = "jupyter_server" if kind == "server" else "kernel_gateway"
    with log.open("ab") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            cwd=root,
        )


def _wait_ready(server: RunningServer) -> None:
    deadline = time.monotonic() + START_WAIT
    headers = {"Authorization": f"token {server.token}"}
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the {server.kind} exited: {server.log.read_text()[-3000:]}")
        try:
            answer = httpx.get(server.url + "api/kernelspecs", headers=headers, timeout=5.0)
        except httpx.TransportError:
            answer = None
        if answer is not None and answer.status_code == 200:
            return
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"the {server.kind} did not answer within {START_WAIT:g} s")


def start_server(
    root: Path,
    work: Path,
    *,
    kind: Literal["server", "kernelgateway"] = "server",
    base_url: str = "/",
) -> RunningServer:
    """Start a server whose root is ``root`` (a kernel gateway runs in ``root``), its runtime
    and log files under ``work``; wait until it answers.

    Raises:
        RuntimeError: it exited or did not answer within :data:`START_WAIT` s.
    """
    port, token = free_port(), secrets.token_hex(16)
    runtime_dir = work / "runtime"
    runtime_dir.mkdir(parents=True, exist_ok=True)
    if kind == "server":
        args = [
            "--ServerApp.ip=127.0.0.1",
            f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}",
            f"--ServerApp.base_url={base_url}",
            "--ServerApp.open_browser=False",
            "--ServerApp.disable_check_xsrf=True",
            "--ServerApp.allow_root=True",
        ]
    else:
        args = [
            "--KernelGatewayApp.ip=127.0.0.1",
            f"--KernelGatewayApp.port={port}",
            "--KernelGatewayApp.port_retries=0",
            f"--KernelGatewayApp.auth_token={token}",
            f"--KernelGatewayApp.base_url={base_url}",
            "--KernelGatewayApp.api=kernel_gateway.jupyter_websocket",
        ]
    log = work / f"{kind}-{port}.log"
    url = f"http://127.0.0.1:{port}{base_url}"
    process = _launch(kind, args, log, runtime_dir, root)
    server = RunningServer(kind, url, token, root, runtime_dir, process, log, args)
    _wait_ready(server)
    return server
