"""Registered local kernels: started by a small supervisor process so they outlive the
command that asked for them, and stopped by it when idle.

Why a supervisor rather than launching the kernel from the command: the command ends, the
kernel must not (ipykernel exits when the process named by ``JPY_PARENT_PID`` does, and a
stopped kernel must be reaped by its parent, not left a zombie under a long-lived
``jupyter-mcp``); and an idle kernel must stop after its idle timeout even when no command of
ours runs again, without a daemon the user starts. The supervisor (``python -m
jupyter_jcli.kernels._supervisor_main``, in its own session) is the kernel's parent: it launches it
with ``jupyter_client``, records its connection file and pid in the registry entry, then
watches it every :data:`WATCH_INTERVAL` s and stops it (graceful, then killed) when

- it is idle (nobody holds the execution lock) for the entry's ``idle_timeout``;
- its entry is removed, names another epoch, or asks ``stopping`` (``j-cli kernel stop``);
- the entry is not ``keep`` (a kernel started for one command), the starting process has
  ended or let it go (:func:`stop_if_unused`), and nobody else uses it (no live user, nobody
  holds the execution lock);
- it receives SIGTERM.

Whatever the reason, it first marks the entry ``stopping`` under the entry's lock (and, for
the idle and owner reasons, while holding the execution lock, so nobody is executing), so a
process that wants the kernel never joins one about to go: it waits for the entry to go and
starts its own (:func:`start_registered`).

SIGUSR1 interrupts the kernel (``KernelManager.interrupt_kernel``: SIGINT or an
``interrupt_request``, as the kernelspec says). When the kernel process ends by itself the
supervisor removes the entry and exits. The supervisor's own stdout/stderr and the kernel's
go to the starting command's stderr for a kernel started for that command (as a kernel it
launched itself would), to ``<key>.log`` beside the entry for a kept one.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import IO

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._busy import interrupt_registered
from jupyter_jcli.kernels._config import SHUTDOWN_TIMEOUT, STOP_WAIT
from jupyter_jcli.kernels._entry import own_pid, process_command
from jupyter_jcli.kernels._local import _kernel_stdout, require_kernelspec
from jupyter_jcli.kernels._registry import (
    ExecLock,
    KernelEntry,
    KernelRegistry,
    pid_alive,
    process_name,
)

__all__ = [
    "WATCH_INTERVAL",
    "interrupt_registered",
    "note_lost",
    "start_registered",
    "stop_for_everyone",
    "stop_if_unused",
    "stop_registered",
]

WATCH_INTERVAL = 0.5
"""Seconds between the supervisor's checks of its kernel and entry."""
_START_POLL = 0.05
_STOP_WAIT = SHUTDOWN_TIMEOUT + 5.0


def _log_tail(registry: KernelRegistry, notebook_path: Path, limit: int = 2000) -> str:
    try:
        data = registry.path(notebook_path, ".log").read_bytes()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def _starting_elsewhere(entry: KernelEntry, startup_timeout: float) -> bool:
    if entry.state != "starting" or time.time() - entry.started > startup_timeout + 10:
        return False
    return pid_alive(entry.supervisor_pid) or (
        entry.owner_pid != own_pid() and pid_alive(entry.owner_pid)
    )


def _mark_stopping(entry: KernelEntry) -> None:
    entry.state = "stopping"
    entry.busy = None


async def start_registered(
    registry: KernelRegistry,
    notebook_path: Path,
    *,
    kernelspec: str,
    keep: bool,
    idle_timeout: float,
    startup_timeout: float,
) -> tuple[KernelEntry, bool]:
    """The notebook's registered kernel: the live one, or one started now (in the notebook's
    folder) through a supervisor. Waits (bounded) for a start another process began.

    A kernel being stopped (``stopping``) is never joined: the call waits for its entry to
    go (at most the stop's own bound, then what is left of it is killed) and starts a new one.

    Returns:
        ``(entry, started)``: the live entry, and whether this call started it.

    Raises:
        KernelError: ``KERNELSPEC_NOT_FOUND`` (details ``kernelspec``, ``installed``);
            ``KERNEL_START_FAILED`` (details ``reason``, and ``log``: the end of the
            supervisor's log) when the kernel did not start; ``KERNEL_BUSY`` when the entry
            stays locked.
    """
    notebook_path = notebook_path.resolve()
    entry = registry.live(notebook_path)
    if entry is not None:
        return entry, False
    require_kernelspec(kernelspec)
    epoch = uuid.uuid4().hex
    deadline = time.monotonic() + startup_timeout + 10
    stop_deadline: float | None = None
    while True:
        with registry.locked(notebook_path):
            entry = registry.read(notebook_path)
            if entry is not None and entry.joinable():
                return entry, False
            stopping = entry is not None and entry.stopping_elsewhere()
            if stopping and stop_deadline is None:
                stop_deadline = time.monotonic() + _STOP_WAIT
            waits = stopping and time.monotonic() < (stop_deadline or 0.0)
            claimed = entry is None or not (waits or _starting_elsewhere(entry, startup_timeout))
            if claimed:
                if entry is not None:
                    entry.kill()
                now = time.time()
                registry.write(
                    KernelEntry(
                        notebook_path=str(notebook_path),
                        kernelspec=kernelspec,
                        cwd=str(notebook_path.parent),
                        epoch=epoch,
                        state="starting",
                        started=now,
                        started_by=process_name(),
                        started_command=process_command(),
                        idle_since=now,
                        idle_timeout=idle_timeout,
                        keep=keep,
                        owner_pid=own_pid(),
                    )
                )
        if claimed:
            break
        if time.monotonic() > deadline:
            raise KernelError(
                ErrorCode.KERNEL_START_FAILED,
                "another process's start of this notebook's kernel did not finish",
                {"notebook_path": str(notebook_path), "reason": "start elsewhere timed out"},
            )
        await anyio.sleep(_START_POLL)
    started: KernelEntry | None = None
    try:
        with anyio.CancelScope(shield=True):
            started = await _supervised_start(registry, notebook_path, epoch, startup_timeout, keep)
    finally:
        if started is None:  # failed or cancelled: leave no half-started kernel behind
            entry = registry.read(notebook_path)
            if entry is not None and entry.epoch == epoch:
                entry.kill()
                registry.remove(notebook_path, epoch=epoch)
    assert started is not None
    return started, True


async def _supervised_start(
    registry: KernelRegistry, notebook_path: Path, epoch: str, startup_timeout: float, keep: bool
) -> KernelEntry:
    env = {k: v for k, v in os.environ.items() if k != "JPY_PARENT_PID"}
    log = open(registry.path(notebook_path, ".log"), "wb")  # noqa: SIM115 - given to the child
    out: int | IO[bytes] = log if keep else _kernel_stdout()  # a command's own: its stderr
    if out == subprocess.DEVNULL:
        out = log
    try:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "jupyter_jcli.kernels._supervisor_main",
                str(registry.root),
                str(notebook_path),
                epoch,
                repr(startup_timeout),
            ],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            cwd=str(notebook_path.parent),
            env=env,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        log.close()
    registry.update(notebook_path, lambda e: setattr(e, "supervisor_pid", proc.pid), epoch=epoch)
    details = {"notebook_path": str(notebook_path)}
    deadline = time.monotonic() + startup_timeout + 5
    while True:
        entry = registry.read(notebook_path)
        if entry is None or entry.epoch != epoch:
            raise KernelError(
                ErrorCode.KERNEL_START_FAILED,
                "the kernel's start was cancelled (its registry entry was removed)",
                {**details, "reason": "entry removed"},
            )
        if entry.state == "failed":
            error = entry.error or {}
            registry.remove(notebook_path, epoch=epoch)
            code = str(error.get("code", ErrorCode.KERNEL_START_FAILED))
            raise KernelError(
                ErrorCode(code) if code in ErrorCode.__members__ else ErrorCode.KERNEL_START_FAILED,
                str(error.get("message", "the kernel did not start")),
                {**details, **dict(error.get("details") or {})},
            )
        if entry.state in ("idle", "busy"):
            return entry
        if proc.poll() is not None or time.monotonic() > deadline:
            reason = "supervisor exited" if proc.returncode is not None else "timed out"
            raise KernelError(
                ErrorCode.KERNEL_START_FAILED,
                f"the kernel did not start ({reason})",
                {**details, "reason": reason, "log": _log_tail(registry, notebook_path)},
            )
        await anyio.sleep(_START_POLL)


async def stop_registered(
    registry: KernelRegistry, notebook_path: Path, *, epoch: str | None = None
) -> KernelEntry | None:
    """Stop the notebook's registered kernel (graceful, then killed; bounded) and remove its
    entry. Returns the entry that was stopped, ``None`` when there was none (or, with
    ``epoch``, it named another kernel)."""
    notebook_path = notebook_path.resolve()
    entry = registry.update(notebook_path, _mark_stopping, epoch=epoch)
    if entry is None:
        return None
    if entry.supervisor_pid is not None and pid_alive(entry.supervisor_pid):
        with contextlib.suppress(OSError):
            os.kill(entry.supervisor_pid, signal.SIGTERM)
    deadline = time.monotonic() + _STOP_WAIT
    while time.monotonic() < deadline:
        current = registry.read(notebook_path)
        if current is None or current.epoch != entry.epoch:
            break
        if not pid_alive(entry.pid) and not pid_alive(entry.supervisor_pid):
            break
        await anyio.sleep(_START_POLL)
    entry.kill()
    registry.remove(notebook_path, epoch=entry.epoch)
    return entry


async def stop_for_everyone(registry: KernelRegistry, notebook_path: Path) -> KernelEntry | None:
    """A stop asked by a person or an agent (``j-cli kernel stop``): as
    :func:`stop_registered`, but a cell another process runs on the kernel is interrupted
    first, recorded as this process's ``kernel_shutdown`` (so that process reports it
    ``interrupted``, naming who asked, and saves what it printed, as for a restart), and
    that process is given up to :data:`~jupyter_jcli.kernels.STOP_WAIT` s to let the kernel
    go before it is stopped anyway."""
    notebook_path = notebook_path.resolve()
    entry = registry.live(notebook_path)
    if entry is not None:
        execution = ExecLock(registry.path(notebook_path, ".exec"))
        if execution.taken_elsewhere():
            registry.record_interrupt(notebook_path, entry.epoch, process_name(), "kernel_shutdown")
            with contextlib.suppress(KernelError):
                interrupt_registered(entry)
            with anyio.move_on_after(STOP_WAIT):
                while execution.taken_elsewhere():
                    await anyio.sleep(_START_POLL)
    return await stop_registered(registry, notebook_path)


def note_lost(registry: KernelRegistry, notebook_path: Path, epoch: str) -> None:
    """Note the kernel of ``epoch`` lost (``.lost``: it died by itself) while its entry is
    still there and not being stopped, so the command that starts the next kernel says it
    replaces this one (and keeps it when this one was kept), whoever sees the death first:
    its supervisor, or a command that ran code on it."""
    entry = registry.read(notebook_path)
    if entry is not None and entry.epoch == epoch and entry.state in ("idle", "busy"):
        keep, idle = entry.keep, entry.idle_timeout
        registry.record_lost(notebook_path, epoch, keep=keep, idle_timeout=idle)


def stop_if_unused(
    registry: KernelRegistry, notebook_path: Path, epoch: str, *, execution: ExecLock
) -> bool:
    """Let go of a kernel this process started for itself (not ``keep``): mark it
    ``stopping`` when nobody else uses it (no other process holds its execution lock,
    ``execution``, which this process may hold; no other live user), so the caller then
    stops it (:func:`stop_registered`). Otherwise it stays for whoever uses it: this process
    is no longer its owner, and its supervisor stops it once they are done.

    Returns:
        Whether the caller should stop it (``True`` also when the entry is already gone or
        another kernel's).
    """
    notebook_path = notebook_path.resolve()
    took = not execution.held
    free = execution.try_acquire()
    try:
        with registry.locked(notebook_path):
            entry = registry.read(notebook_path)
            if entry is None or entry.epoch != epoch:
                return True
            if free and not entry.live_users(besides=process_name()):
                _mark_stopping(entry)
                registry.write(entry)
                return True
            entry.owner_pid = None  # nobody owns it now: the supervisor stops it when unused
            registry.write(entry)
            return False
    finally:
        if took and free:
            execution.release()
