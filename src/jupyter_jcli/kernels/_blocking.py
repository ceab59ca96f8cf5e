"""Running code on a notebook's live registered kernel from a caller without an event loop:
the ``j-cli exec`` lane, a fresh process that must not pay for ``asyncio``, ``anyio`` or
``zmq.asyncio``.

The kernel layer's coroutines (:func:`~jupyter_jcli.kernels._run.run_request`, the
:class:`~jupyter_jcli.kernels._shared_backend.SharedBackend` they read through) suspend only
where their I/O does. Over a blocking :class:`~jupyter_jcli.kernels._wire.WireClient` they
never do, so :func:`drive` runs one to its end with a single ``send``: the lane runs the very
code the asynchronous path runs (timeouts, interrupts, death detection, the registry's
records of stops asked elsewhere), not a second copy of it.

:func:`run_on_live` keeps every guarantee of a
:class:`~jupyter_jcli.kernels.SharedNotebookKernel` hold: the notebook's cross-process
execution lock (``KERNEL_BUSY`` exactly as there), the entry's ``busy`` record, the kernel's
epoch. It only joins: when the notebook has no live registered kernel (none, one that died,
one being started or stopped, one that cannot be joined) it returns ``None`` having run
nothing and changed nothing, and the caller takes the full path, which starts or replaces
the kernel and says so.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar, get_args

from jupyter_jcli.errors import KernelError
from jupyter_jcli.kernels._config import (
    DEFAULT_BUSY_WAIT,
    DEFAULT_STARTUP_TIMEOUT,
    SHUTDOWN_TIMEOUT,
    STOP_WAIT,
    execute_timeout,
)
from jupyter_jcli.kernels._evaluate import execution_result
from jupyter_jcli.kernels._flock import ExecLock
from jupyter_jcli.kernels._registry import KernelRegistry, idle_timeout
from jupyter_jcli.kernels._run import StopSignal, run_request
from jupyter_jcli.kernels._shared_backend import SharedBackend
from jupyter_jcli.kernels._shared_busy import busy_error, busy_record
from jupyter_jcli.kernels._translate import DisplayRegistry, OutputCollector
from jupyter_jcli.kernels._types import (
    LOCAL_ORIGIN,
    ExecutionResult,
    InterruptReason,
    KernelInfo,
    KernelState,
)

__all__ = ["EXEC_POLL", "drive", "run_on_live", "stop_asked", "take_exec"]

EXEC_POLL = 0.05
"""Seconds between two tries of the execution lock while another process holds it."""
_T = TypeVar("_T")


def drive(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coroutine`` to its end without an event loop (it must never suspend).

    Raises:
        RuntimeError: it suspended (it awaited something only an event loop resolves).
    """
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a coroutine driven without an event loop suspended")


async def _blocking_sleep(seconds: float) -> None:
    time.sleep(seconds)


async def take_exec(
    lock: ExecLock,
    registry: KernelRegistry,
    notebook_path: Path,
    busy_wait: float,
    sleep: Callable[[float], Awaitable[None]],
) -> None:
    """Take the notebook's execution lock within ``busy_wait`` s, polling every
    :data:`EXEC_POLL` s with ``sleep``; a kernel being stopped extends the wait by
    :data:`~jupyter_jcli.kernels.STOP_WAIT` once (its holder lets it go as it stops).

    Raises:
        KernelError: ``KERNEL_BUSY`` (its details: :func:`.busy_error`).
    """
    deadline = time.monotonic() + max(busy_wait, 0.0)
    extended = False
    while not lock.try_acquire():
        if time.monotonic() >= deadline:
            entry = registry.read(notebook_path)
            if not extended and entry is not None and entry.state == "stopping":
                extended = True
                deadline = time.monotonic() + STOP_WAIT
                continue
            raise busy_error(notebook_path, entry, busy_wait)
        await sleep(EXEC_POLL)


def stop_asked(
    registry: KernelRegistry, notebook_path: Path, epoch: str, since: float
) -> tuple[InterruptReason, str | None] | None:
    """The interrupt, restart or shutdown the registry records for the kernel of ``epoch``
    since ``since`` (``KernelRegistry.record_interrupt``): ``(reason, who)``, else None."""
    asked = registry.interrupt_since(notebook_path, epoch, since) or {}
    reason = next((r for r in get_args(InterruptReason) if r == asked.get("reason")), None)
    if reason is None:
        return None
    who = asked.get("who")
    return reason, who if isinstance(who, str) else None


def _set_busy(
    registry: KernelRegistry, path: Path, epoch: str, busy: dict[str, Any] | None
) -> None:
    with contextlib.suppress(KernelError):
        registry.set_busy(path, epoch, busy)


def run_on_live(
    registry: KernelRegistry,
    notebook_path: Path,
    code: str,
    *,
    timeout: float | None,
    kernelspec_name: str,
    after: Callable[[ExecutionResult, KernelInfo], _T],
) -> tuple[ExecutionResult, KernelInfo, _T] | None:
    """Run ``code`` (not a cell) on the notebook's live registered kernel, holding it.

    ``after(result, info)`` is called while the kernel is still held (the caller records the
    run in the notebook's run log there, so no one's cell falls between the code and its
    record). ``kernelspec_name`` is the kernelspec the notebook would start (the info's
    ``kernelspec_name`` when the kernel is gone after the run).

    Returns:
        ``(result, info after the run, after's value)``, or ``None`` when no live kernel
        could be joined (module docstring: nothing ran, nothing changed).

    Raises:
        KernelError: ``KERNEL_BUSY`` (another process holds the kernel).
        UsageError: ``USAGE_ERROR`` for an invalid timeout.
    """
    limit = execute_timeout(timeout)
    path = notebook_path.resolve()
    lock = ExecLock(registry.path(path, ".exec"))
    drive(take_exec(lock, registry, path, DEFAULT_BUSY_WAIT, _blocking_sleep))
    try:
        entry = registry.read(path)
        if entry is None or entry.state not in ("idle", "busy") or not entry.alive():
            return None  # none, or one that died: the full path replaces it and says so
        live = registry.live(path)
        if live is None or live.epoch != entry.epoch:
            return None
        registry.take_lost(path)  # a later kernel runs: an older loss is too old to tell
        backend = SharedBackend(
            registry, keep=False, idle_timeout=idle_timeout(None), attach_only=True, blocking=True
        )
        try:
            drive(
                backend.start(
                    kernelspec_name=live.kernelspec,
                    cwd=path.parent,
                    startup_timeout=DEFAULT_STARTUP_TIMEOUT,
                    notebook_path=path,
                )
            )
        except KernelError:
            return None  # gone while joining: the full path starts another
        try:
            return _run(
                backend, code, live.epoch, registry=registry, path=path, limit=limit,
                kernelspec_name=kernelspec_name, after=after,
            )  # fmt: skip
        finally:
            _set_busy(registry, path, live.epoch, None)
            _close(backend)
    finally:
        lock.release()


def _run(
    backend: SharedBackend,
    code: str,
    epoch: str,
    *,
    registry: KernelRegistry,
    path: Path,
    limit: float,
    kernelspec_name: str,
    after: Callable[[ExecutionResult, KernelInfo], _T],
) -> tuple[ExecutionResult, KernelInfo, _T]:
    _set_busy(registry, path, epoch, busy_record(None))
    since = time.time()
    signal = StopSignal(elsewhere=lambda: stop_asked(registry, path, epoch, since))
    collector = OutputCollector(DisplayRegistry(), None)
    try:
        request = run_request(backend, code, collector=collector, timeout=limit, signal=signal)
        outcome = drive(request)
    finally:
        collector.finish()
    dead = not outcome.alive or not outcome.settled
    if dead:  # it died, or would not settle and is killed for everyone: its state is gone
        backend.stop_on_shutdown = True
        _close(backend)
        backend.stop_on_shutdown = False  # stopped: the final close only lets it go
    killed = outcome.alive and not outcome.settled
    result = execution_result(
        outcome, collector, epoch, restarted=False, killed=killed, replaced_epoch=None
    )
    alive = not dead and drive(backend.is_alive())
    state: KernelState = "busy" if alive else "dead"  # held: busy, as the full path says
    info = KernelInfo(
        notebook_path=path,
        state=state,
        epoch=epoch if alive else None,
        kernelspec_name=backend.entry.kernelspec if alive and backend.entry else kernelspec_name,
        pid=backend.pid if alive else None,
        cwd=path.parent,
        running_cell=None,
        origin=backend.origin if alive else LOCAL_ORIGIN,
    )
    return result, info, after(result, info)


def _close(backend: SharedBackend) -> None:
    """Let the kernel go; stopping the shared kernel (a kernel killed for everyone) needs an
    event loop: only then is one run."""
    if not backend.stop_on_shutdown:
        drive(backend.shutdown(now=True, timeout=SHUTDOWN_TIMEOUT))
        return
    import anyio

    async def stop() -> None:
        await backend.shutdown(now=True, timeout=SHUTDOWN_TIMEOUT)

    anyio.run(stop)
