"""Driving our MCP servers in-process through the MCP SDK's own client (no subprocess).

:func:`open_in_process` connects ``mcp.client.Client`` to a server object in the handshake
era (``mode="legacy"``: the SDK's in-memory transport runs the same JSON-RPC stream loop as
stdio), so the tests of tools, schemas and errors exercise the SDK's real client and the
server's real dispatcher. The stdio transport itself is covered by the process tests.
:func:`workbench_in_process` builds ``jupyter-mcp``'s server on a Workbench whose kernels are
the in-process fake (:func:`kernel_fakes.python_backend`) unless told otherwise;
:func:`shared_in_process` builds it on real kernels shared through the registry
(the server's default); :func:`readonly_in_process` builds ``jcli-notebook-output``'s.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import Client
from mcp.client.session import ClientSession, ListRootsFnT
from mcp.server.lowlevel import Server
from workbench_client import server_env

from jupyter_jcli.kernels import BackendFactory, KernelPool, ServerConfig
from jupyter_jcli.mcp import readonly as readonly_server
from jupyter_jcli.mcp import workbench as workbench_server
from jupyter_jcli.mcp._roots import roots_from_paths
from jupyter_jcli.workbench import Workbench, shared_workbench
from kernel_fakes import python_backend

WAIT_SECONDS = 60
"""Bound on one whole in-process session (handshake, calls, fake kernels, shutdown)."""


@asynccontextmanager
async def open_in_process(
    server: Server[Any],
    *,
    list_roots_callback: ListRootsFnT | None = None,
    seconds: float = WAIT_SECONDS,
) -> AsyncIterator[ClientSession]:
    """An initialized ``ClientSession`` on ``server``, served in this process, bounded."""
    with anyio.fail_after(seconds):
        async with Client(server, mode="legacy", list_roots_callback=list_roots_callback) as client:
            yield client.session


def in_process_env(monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
    """The environment :func:`workbench_client.server_env` gives a spawned server, set in
    this process: the snapshot cache in ``cache``, summaries off, a 1 s progress heartbeat."""
    for name, value in server_env(cache).items():
        if name.startswith(("JUPYTER_JCLI_", "JUPYTER_MCP_")):
            monkeypatch.setenv(name, value)


@asynccontextmanager
async def workbench_in_process(
    root: Path,
    cache: Path,
    *,
    seconds: float = WAIT_SECONDS,
    backend_factory: BackendFactory = python_backend,
    server: ServerConfig | None = None,
) -> AsyncIterator[ClientSession]:
    """A session on ``jupyter-mcp`` confined to ``root``, its kernels the in-process fake (or
    ``backend_factory``'s: ``LocalBackend`` for real kernels, where a test must change a
    kernel setting such as ``SETTLE_TIMEOUT``; with ``server`` the workbench runs in server
    mode on that pool), its snapshot cache ``cache`` (call :func:`in_process_env` with the
    same folder first)."""
    pool = KernelPool(backend_factory=backend_factory)
    async with (
        Workbench(cache_dir=cache, pool=pool, server=server) as workbench,
        workbench.background,
    ):
        server = workbench_server.build_server(roots_from_paths([root]), workbench)
        async with open_in_process(server, seconds=seconds) as session:
            yield session


@asynccontextmanager
async def shared_in_process(
    root: Path, cache: Path, *, seconds: float = WAIT_SECONDS
) -> AsyncIterator[ClientSession]:
    """A session on ``jupyter-mcp`` confined to ``root`` on real kernels shared through the
    test's registry, as the server runs by default (:func:`shared_workbench`: what it
    starts for a run stops with it, kernels it joined keep running)."""
    async with shared_workbench(cache_dir=cache) as workbench, workbench.background:
        server = workbench_server.build_server(roots_from_paths([root]), workbench)
        async with open_in_process(server, seconds=seconds) as session:
            yield session


def readonly_in_process(root: Path, *, seconds: float = WAIT_SECONDS) -> Any:
    """A session context on ``jcli-notebook-output`` confined to ``root``, in this process."""
    return open_in_process(readonly_server.build_server(roots_from_paths([root])), seconds=seconds)
