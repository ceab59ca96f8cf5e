"""The supervisor process of a registered kernel (see ``_supervisor``): it launches the kernel,
records it in the registry entry, watches it and stops it.

Run as ``python -m jupyter_jcli.kernels._supervisor_main``: a module the package does not
import, so ``runpy`` finds it fresh.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

import anyio

from jupyter_jcli.errors import KernelError
from jupyter_jcli.kernels._config import SHUTDOWN_TIMEOUT
from jupyter_jcli.kernels._local import LocalBackend
from jupyter_jcli.kernels._registry import ExecLock, KernelEntry, KernelRegistry, pid_alive
from jupyter_jcli.kernels._supervisor import WATCH_INTERVAL, _mark_stopping, note_lost

__all__ = ["main"]


async def _supervise(
    registry: KernelRegistry, notebook_path: Path, epoch: str, startup: float
) -> int:
    entry = registry.read(notebook_path)
    if entry is None or entry.epoch != epoch:
        return 2
    kernel = LocalBackend()
    try:
        await kernel.start(
            kernelspec_name=entry.kernelspec,
            cwd=Path(entry.cwd),
            startup_timeout=startup,
            notebook_path=notebook_path,
        )
    except KernelError as err:
        error = {"code": err.code.value, "message": err.message, "details": err.details}

        def failed(e: KernelEntry) -> None:
            e.state, e.error = "failed", error

        registry.update(notebook_path, failed, epoch=epoch)  # the start left nothing running
        return 1
    await kernel.close_channels()  # the supervisor only watches, interrupts and stops it

    def ready(e: KernelEntry) -> None:
        e.state = "idle"
        e.connection_file = kernel.connection_file
        e.pid = kernel.pid
        e.supervisor_pid = os.getpid()
        e.idle_since = time.time()

    if registry.update(notebook_path, ready, epoch=epoch) is not None:
        execution = ExecLock(registry.path(notebook_path, ".exec"))
        try:
            await _watch(registry, notebook_path, epoch, kernel, execution)
            for signum in (signal.SIGTERM, signal.SIGHUP):  # a stop asked now must not kill
                signal.signal(signum, signal.SIG_IGN)  # us before we stopped the kernel
            with contextlib.suppress(Exception):
                if not await kernel.is_alive():  # it died by itself, unless a stop was asked
                    note_lost(registry, notebook_path, epoch)
            with anyio.CancelScope(shield=True):  # visible before the kernel goes
                registry.update(notebook_path, _mark_stopping, epoch=epoch)
        finally:
            execution.release()  # a waiter now sees ``stopping`` and waits for the entry
    with anyio.CancelScope(shield=True):
        await kernel.shutdown(now=False, timeout=SHUTDOWN_TIMEOUT)
        registry.remove(notebook_path, epoch=epoch)
    return 0


def _unused(entry: KernelEntry) -> bool:
    """Whether the kernel should stop when nobody executes on it: idle for its timeout, or
    not kept and neither its starter nor any other process uses it."""
    if time.time() - entry.idle_since >= entry.idle_timeout:
        return True
    return not entry.keep and not pid_alive(entry.owner_pid) and not entry.live_users()


async def _watch(
    registry: KernelRegistry,
    notebook_path: Path,
    epoch: str,
    kernel: LocalBackend,
    execution: ExecLock,
) -> None:
    """Return when the kernel must stop (or stopped by itself), holding ``execution`` when
    it stops for being unused; see the module docstring."""

    async def should_stop() -> bool:
        if not await kernel.is_alive():
            return True
        entry = registry.read(notebook_path)
        if entry is None or entry.epoch != epoch or entry.state == "stopping":
            return True
        if not _unused(entry) or not execution.try_acquire():
            return False
        again = registry.read(notebook_path)  # a run may have ended while we took the lock
        if again is not None and again.epoch == epoch and not _unused(again):
            execution.release()
            return False
        return True

    async def poll(scope: anyio.CancelScope) -> None:
        while not await should_stop():
            await anyio.sleep(WATCH_INTERVAL)
        scope.cancel()

    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGUSR1, signal.SIGHUP) as signals:
        async with anyio.create_task_group() as tg:
            tg.start_soon(poll, tg.cancel_scope)
            async for signum in signals:
                if signum == signal.SIGUSR1:
                    with contextlib.suppress(Exception):
                        await kernel.interrupt()
                else:
                    tg.cancel_scope.cancel()
                    break


def main(argv: list[str] | None = None) -> int:
    """The supervisor process: ``ROOT NOTEBOOK EPOCH STARTUP_TIMEOUT`` (run as ``python -m
    jupyter_jcli.kernels._supervisor_main``, a module the package does not import, so
    ``runpy`` finds it fresh)."""
    args = sys.argv[1:] if argv is None else argv
    root, notebook, epoch, startup = args
    registry = KernelRegistry(Path(root))
    return anyio.run(_supervise, registry, Path(notebook), epoch, float(startup))


if __name__ == "__main__":
    sys.exit(main())
