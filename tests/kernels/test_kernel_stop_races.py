"""A registered kernel being stopped while another process wants it (real kernels): the
joiner never joins a kernel about to go, and a kernel started for one command is not stopped
under another process's execution."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import anyio
import pytest

from jupyter_jcli.kernels import (
    ExecutionResult,
    KernelEntry,
    KernelRegistry,
    RegistryKernel,
    start_registered,
    stop_registered,
)
from jupyter_jcli.kernels._registry import pid_alive
from server_helpers import write_notebook

pytestmark = [pytest.mark.kernel, pytest.mark.anyio]

STARTUP = 60.0
"""Seconds a kernel start may take on a loaded machine."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def notebook(folder: Path) -> Path:
    return write_notebook(folder, [])


def signal_all(entry: KernelEntry, signum: signal.Signals) -> None:
    for pid in (entry.supervisor_pid, entry.pid):
        if pid is not None and pid_alive(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signum)


async def wait_until_gone(pid: int | None, seconds: float) -> bool:
    with anyio.move_on_after(seconds):
        while pid_alive(pid):
            await anyio.sleep(0.1)
    return not pid_alive(pid)


def text(result: ExecutionResult) -> str:
    return "".join(str(o.get("data", {}).get("text/plain", "")) for o in result.outputs)


async def test_a_kernel_being_stopped_is_not_joined_the_joiner_starts_its_own(
    tmp_path: Path,
) -> None:
    registry = KernelRegistry()
    path = notebook(tmp_path)
    first, _ = await start_registered(
        registry, path, kernelspec="python3", keep=False, idle_timeout=600, startup_timeout=STARTUP
    )
    # Another command's stop, held at its most delicate point: the entry says "stopping",
    # its supervisor has not acted yet, the kernel no longer answers (it is shutting down).
    # The supervisor is stopped while we hold the entry's lock, so never while it holds it.
    joiner = RegistryKernel(path, registry=registry, startup_timeout=STARTUP)

    async def let_the_stop_go_on() -> None:
        await anyio.sleep(1.0)
        signal_all(first, signal.SIGCONT)

    try:
        with registry.locked(path):
            signal_all(first, signal.SIGSTOP)
        registry.update(path, lambda e: setattr(e, "state", "stopping"), epoch=first.epoch)
        with anyio.fail_after(3 * STARTUP):
            async with anyio.create_task_group() as tg:
                tg.start_soon(let_the_stop_go_on)
                result = await joiner.execute("x = 41 + 1\nx")
        assert result.status == "ok" and text(result) == "42"
        assert result.epoch != first.epoch  # its own kernel, not the one being stopped
        entry = registry.read(path)
        assert entry is not None and entry.epoch == result.epoch and entry.pid != first.pid
        assert await wait_until_gone(first.pid, 30.0)
    finally:
        signal_all(first, signal.SIGCONT)
        await joiner.shutdown(now=True)
        await stop_registered(registry, path)


async def test_a_kernel_started_for_one_command_stays_while_another_executes_on_it(
    tmp_path: Path,
) -> None:
    registry = KernelRegistry()
    path = notebook(tmp_path)
    owner = RegistryKernel(path, registry=registry, startup_timeout=STARTUP)
    other = RegistryKernel(path, registry=registry, startup_timeout=STARTUP)
    try:
        with anyio.fail_after(3 * STARTUP):
            made = await owner.execute("a = 1")
            started = registry.read(path)
            assert made.status == "ok" and started is not None and not started.keep
            async with other.hold(busy_wait=30.0):
                await other.execute("b = 2")
                await owner.shutdown()  # the owner's command ends while `other` runs cells
                kept = registry.read(path)
                assert kept is not None and kept.epoch == made.epoch
                assert kept.state != "stopping" and pid_alive(kept.pid)
                result = await other.execute("a + b")
                assert result.status == "ok" and text(result) == "3"
                assert result.epoch == made.epoch
            # `other` is done and nobody owns the kernel now: its supervisor stops it
            assert await wait_until_gone(started.pid, 30.0), registry.read(path)
        deadline = time.monotonic() + 30.0
        while registry.read(path) is not None and time.monotonic() < deadline:
            await anyio.sleep(0.1)
        assert registry.read(path) is None
    finally:
        await other.shutdown(now=True)
        await owner.shutdown(now=True)
        await stop_registered(registry, path)


async def test_a_stopped_kernel_leaves_no_files_in_the_registry_folder(tmp_path: Path) -> None:
    registry = KernelRegistry()
    path = notebook(tmp_path)
    kernel = RegistryKernel(path, registry=registry, keep=True, startup_timeout=STARTUP)
    try:
        with anyio.fail_after(2 * STARTUP):
            assert (await kernel.execute("1")).status == "ok"
            assert registry.path(path, ".exec").exists()
            await kernel.shutdown()
            assert registry.read(path) is not None  # kept: it outlives this object
            assert await stop_registered(registry, path) is not None
    finally:
        await kernel.shutdown(now=True)
        await stop_registered(registry, path)
    assert sorted(p.name for p in registry.root.iterdir()) == []


async def test_a_stop_asked_while_the_supervisor_stops_the_kernel_does_not_orphan_it(
    tmp_path: Path,
) -> None:
    registry = KernelRegistry()
    path = notebook(tmp_path)
    first, _ = await start_registered(
        registry, path, kernelspec="python3", keep=True, idle_timeout=600, startup_timeout=STARTUP
    )
    assert first.pid is not None and first.supervisor_pid is not None
    os.kill(first.pid, signal.SIGSTOP)  # its graceful shutdown now waits: the supervisor is
    registry.update(path, lambda e: setattr(e, "state", "stopping"), epoch=first.epoch)
    try:
        await anyio.sleep(2.0)  # ... in its stopping phase (it polls every 0.5 s)
        os.kill(first.supervisor_pid, signal.SIGTERM)  # a second stop: `j-cli kernel stop`
        await anyio.sleep(0.5)
        os.kill(first.pid, signal.SIGCONT)
        with anyio.move_on_after(30.0):
            while registry.read(path) is not None:
                await anyio.sleep(0.1)
        assert registry.read(path) is None  # the supervisor finished its stop and cleaned up
        assert await wait_until_gone(first.pid, 30.0)
        assert await wait_until_gone(first.supervisor_pid, 30.0)
    finally:
        signal_all(first, signal.SIGCONT)
        await stop_registered(registry, path)
