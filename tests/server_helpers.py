"""Real Jupyter servers for tests: ``jupyter server``, ``jupyter kernelgateway`` and
``jupyter enterprisegateway`` (from its own virtual environment: ``gateway_helpers``) as child
processes on 127.0.0.1, a free port, a random token, a temporary root and runtime folder.

:func:`start_server` waits (bounded) until the server answers with the token;
:meth:`RunningServer.stop` always ends it (terminate, then kill). Imported by the server
tests as ``server_helpers`` (``tests/`` is on ``sys.path`` through ``tests/conftest.py``).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import httpx

from jupyter_jcli.kernels import ServerConfig

Kind = Literal["server", "kernelgateway", "enterprisegateway"]

START_WAIT = 60.0
"""Seconds a server may take to answer after it was started."""
STOP_WAIT = 15.0
"""Seconds a server may take to exit after SIGTERM before it is killed."""
NO_COLLABORATION = ("--ServerApp.jpserver_extensions={'jupyter_server_ydoc': False}",)
"""Options of a Jupyter Server without real-time collaboration (no rooms: the contents
API is the only way to its notebooks), the jupyter-collaboration extension being installed."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RunningServer:
    """One server child process and how to reach it."""

    kind: Kind
    url: str
    token: str
    root: Path
    runtime_dir: Path
    process: subprocess.Popen[bytes]
    log: Path
    args: list[str] = field(default_factory=list)
    cafile: Path | None = None
    """The self-signed certificate of a server started with TLS."""
    program: list[str] = field(default_factory=list)
    """The command that starts the server, before ``args`` (empty: this Python's module)."""
    env: dict[str, str] = field(default_factory=dict)
    """Variables added to the server's environment."""

    def config(self, *, token: str | None = None, root: Path | None = None) -> ServerConfig:
        """A :class:`ServerConfig` for this server (its token and root unless given; with
        TLS, its certificate as the CA bundle)."""
        return ServerConfig(
            url=self.url,
            token=self.token if token is None else token,
            verify=True if self.cafile is None else str(self.cafile),
            server_root=(root or self.root).resolve(),
        )

    def client(self) -> httpx.Client:
        """A REST client of the server with its token (for a test acting as JupyterLab)."""
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"token {self.token}"}, timeout=30.0
        )

    @property
    def port(self) -> int:
        """The server's TCP port."""
        return int(self.url.split(":")[2].split("/")[0])

    def stop(self) -> None:
        """End the server (SIGTERM, then SIGKILL after :data:`STOP_WAIT` s)."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_WAIT)

    def kill(self) -> None:
        """Kill the server at once (SIGKILL: no shutdown of its kernels, which end on their
        own when they see their parent gone), as a crash or a lost machine."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(STOP_WAIT)

    def restart(self, *, kill: bool = False) -> None:
        """Stop (or ``kill``) the server and start it again on the same port, token and
        root."""
        if kill:
            self.kill()
        else:
            self.stop()
        fresh = _launch(
            self.kind,
            self.args,
            self.log,
            self.runtime_dir,
            self.root,
            program=self.program,
            extra_env=self.env,
        )
        self.process = fresh
        _wait_ready(self)


def _launch(
    kind: str,
    args: list[str],
    log: Path,
    runtime_dir: Path,
    root: Path,
    *,
    program: list[str],
    extra_env: dict[str, str],
) -> subprocess.Popen[bytes]:
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(runtime_dir), "PYTHONUNBUFFERED": "1"}
    env["JUPYTER_CONFIG_DIR"] = str(runtime_dir.parent / "config")
    env.update(extra_env)
    module = "jupyter_server" if kind == "server" else "kernel_gateway"
    with log.open("ab") as sink:
        return subprocess.Popen(
            [*(program or (sys.executable, "-m", module)), *args],
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
            answer = httpx.get(
                server.url + "api/kernelspecs",
                headers=headers,
                timeout=5.0,
                verify=ssl.create_default_context(cafile=server.cafile),
            )
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
    kind: Kind = "server",
    base_url: str = "/",
    tls: bool = False,
    extra_args: Sequence[str] = (),
    program: list[str] | None = None,
    env: dict[str, str] | None = None,
    collaboration: bool = True,
) -> RunningServer:
    """Start a server whose root is ``root`` (a gateway runs in ``root``), its runtime
    and log files under ``work``; wait until it answers. ``tls``: HTTPS with a self-signed
    certificate for 127.0.0.1 (``openssl`` makes it). ``extra_args``: more command-line
    options (e.g. :data:`NO_COLLABORATION`). ``program``: the command that starts it (needed
    for ``enterprisegateway``); ``env``: variables added to its environment.
    ``collaboration=False``: without the real-time collaboration extension
    (``jupyter_server_ydoc``, on by default in this environment), as a server without
    jupyter-collaboration.

    Raises:
        RuntimeError: it exited or did not answer within :data:`START_WAIT` s.
    """
    port, token = free_port(), secrets.token_hex(16)
    runtime_dir = work / "runtime"
    runtime_dir.mkdir(parents=True, exist_ok=True)
    if not collaboration:  # the user config folder (_launch's) outranks the sys-prefix one
        config = work / "config"
        config.mkdir(parents=True, exist_ok=True)
        off = {"ServerApp": {"jpserver_extensions": {"jupyter_server_ydoc": False}}}
        (config / "jupyter_server_config.json").write_text(json.dumps(off), encoding="utf-8")
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
            # The default 1 MB/s iopub data limit drops a fast 5 MB stream for every client
            # (JupyterLab too, which shows the server's warning instead): lift it, as a
            # server meant for big outputs must.
            "--ZMQChannelsWebsocketConnection.iopub_data_rate_limit=0",
        ]
    elif kind == "enterprisegateway":  # `jupyter enterprisegateway --ip ... --port ...`
        args = [
            "--EnterpriseGatewayApp.ip=127.0.0.1",
            f"--EnterpriseGatewayApp.port={port}",
            "--EnterpriseGatewayApp.port_retries=0",
            f"--EnterpriseGatewayApp.auth_token={token}",
            f"--EnterpriseGatewayApp.base_url={base_url}",
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
    args += list(extra_args)
    cafile = self_signed_certificate(work) if tls else None
    if cafile is not None:
        args += [
            f"--ServerApp.certfile={cafile}",
            f"--ServerApp.keyfile={cafile.with_suffix('.key')}",
        ]
    log = work / f"{kind}-{port}.log"
    url = f"{'https' if tls else 'http'}://127.0.0.1:{port}{base_url}"
    program, env = program or [], env or {}
    process = _launch(kind, args, log, runtime_dir, root, program=program, extra_env=env)
    server = RunningServer(
        kind, url, token, root, runtime_dir, process, log, args, cafile, program, env
    )
    _wait_ready(server)
    return server


def self_signed_certificate(folder: Path) -> Path:
    """A self-signed certificate for 127.0.0.1 (``cert.pem``, key beside it as
    ``cert.key``), made with the ``openssl`` command."""
    cert = folder / "cert.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-keyout", str(cert.with_suffix(".key")), "-out", str(cert)),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return cert


@contextmanager
def running_server(
    root: Path,
    work: Path,
    *,
    kind: Kind = "server",
    base_url: str = "/",
    tls: bool = False,
    extra_args: Sequence[str] = (),
    program: list[str] | None = None,
    env: dict[str, str] | None = None,
    collaboration: bool = True,
) -> Iterator[RunningServer]:
    """:func:`start_server`, always stopped at the end of the block."""
    server = start_server(
        root,
        work,
        kind=kind,
        base_url=base_url,
        tls=tls,
        extra_args=extra_args,
        program=program,
        env=env,
        collaboration=collaboration,
    )
    try:
        yield server
    finally:
        server.stop()


def write_notebook(folder: Path, sources: list[str], name: str = "nb") -> Path:
    """A python3 notebook of code cells, written with nbformat."""
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    path = folder / f"{name}.ipynb"
    nbformat.write(notebook, path)
    return path


class DroppingProxy:
    """A TCP proxy on 127.0.0.1 in front of a server; :meth:`drop` cuts every connection
    through it at once (a network drop), new connections still pass."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.port = 0
        self.dropped = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> DroppingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.drop()
        assert self._server is not None
        self._server.close()

    def url(self, server: RunningServer) -> str:
        """``server``'s URL through this proxy."""
        return server.url.replace(f":{self.target_port}/", f":{self.port}/", 1)

    def drop(self) -> None:
        """Abort every open connection (no close handshake)."""
        for writer in list(self._writers):
            writer.transport.abort()
            self.dropped += 1
        self._writers.clear()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            writer.close()
            return
        self._writers.update((writer, up_writer))

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            try:
                while chunk := await source.read(65536):
                    sink.write(chunk)
                    await sink.drain()
            except (OSError, asyncio.IncompleteReadError):
                pass
            finally:
                sink.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))


LOG_TAIL = 6000
"""Characters of a server's log a failed test's report shows (its newest lines)."""


def log_tails(values: Iterable[object]) -> list[tuple[str, str]]:
    """``(title, newest log text)`` of every :class:`RunningServer` among ``values`` (a
    failed test's fixture values), for the test report: what the server said about a start
    or a handshake that timed out is otherwise lost with the temporary folder."""
    tails = []
    for value in values:
        if isinstance(value, RunningServer) and value.log.is_file():
            text = value.log.read_bytes()[-LOG_TAIL:].decode("utf-8", "replace")
            tails.append((f"{value.kind} log ({value.log.name}, newest)", text))
    return tails
