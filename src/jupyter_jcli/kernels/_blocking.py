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
execution lock (``KERNEL_BUSY`` exactly as there, and for code a killed command left running:
:func:`check_leftover`), the entry's ``busy`` record, the kernel's epoch; Ctrl-C interrupts
the kernel and the run is answered ``interrupted`` (:func:`ctrl_c_interrupts`). It only
joins: when the notebook has no live registered kernel (none, one that died, one being started
or stopped, one that cannot be joined) it returns ``None`` having run
nothing and changed nothing, and the caller takes the full path, which starts or replaces
the kernel and says so.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

from jupyter_jcli.errors import TERMINATING_SIGNALS, KernelError, Terminated, raise_terminated
from jupyter_jcli.kernels._config import (
    DEFAULT_BUSY_WAIT,
    DEFAULT_STARTUP_TIMEOUT,
    SHUTDOWN_TIMEOUT,
    STOP_WAIT,
    execute_timeout,
)
from jupyter_jcli.kernels._entry import own_pid, pid_alive
from jupyter_jcli.kernels._evaluate import execution_result
from jupyter_jcli.kernels._flock import ExecLock
from jupyter_jcli.kernels._registry import KernelRegistry, idle_timeout, process_name
from jupyter_jcli.kernels._registry_notes import asked_stop
from jupyter_jcli.kernels._run import StopSignal, run_request
from jupyter_jcli.kernels._shared_backend import SharedBackend
from jupyter_jcli.kernels._shared_busy import (
    busy_error,
    busy_facts,
    busy_record,
    interrupt_registered,
    leftover_cause,
)
from jupyter_jcli.kernels._translate import DisplayRegistry, OutputCollector
from jupyter_jcli.kernels._types import (
    LOCAL_ORIGIN,
    AskedStop,
    ExecutionResult,
    KernelInfo,
    KernelState,
)

__all__ = [
    "EXEC_POLL",
    "LEFTOVER_PROBE",
    "check_leftover",
    "ctrl_c_interrupts",
    "drive",
    "run_on_live",
    "stop_asked",
    "take_exec",
]

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


LEFTOVER_PROBE = 3.0
"""Seconds, at least, a command gives the kernel to answer on its shell when the registry
says a command that ended (killed) was running code on it (:func:`check_leftover`)."""


async def check_leftover(
    registry: KernelRegistry, notebook_path: Path, backend: SharedBackend, busy_wait: float
) -> None:
    """Refuse to queue code behind the code of a command that ended (killed, ``kill -9``)
    while it ran on the kernel: the registry still holds that command's ``busy`` record.

    Its code may have run on (a kernel outlives a command): what it did is recorded once in
    the run log as a change of any name (every cell run before reads ``stale``, never fresh,
    with that cause). Then the kernel is asked on its shell (:meth:`SharedBackend.shell_free`,
    within ``busy_wait`` s and at least :data:`LEFTOVER_PROBE` s): when it answers, that code
    has ended and its record is dropped; else ``KERNEL_BUSY`` (``busy_gone``), naming the
    command and how to stop its code, with nothing sent to the kernel but the probe.
    """
    entry = registry.read(notebook_path)
    busy = entry.busy if entry is not None else None
    pid = (busy or {}).get("pid")
    if entry is None or busy is None or not isinstance(pid, int):
        return
    if pid == own_pid() or pid_alive(pid):
        return
    if not busy.get("noted"):
        facts = busy_facts(entry)
        if facts is None:  # not reached: ``busy`` is a record with a pid
            return
        cause = leftover_cause(facts)
        with contextlib.suppress(KernelError):
            registry.record_change(
                notebook_path, {"epoch": entry.epoch, "names": None, "cause": cause}
            )
            registry.set_busy(notebook_path, entry.epoch, {**busy, "noted": True})
    if await backend.shell_free(max(busy_wait, LEFTOVER_PROBE)):
        _set_busy(registry, notebook_path, entry.epoch, None, of=pid)
        return
    raise busy_error(notebook_path, entry, busy_wait, gone=True)


def stop_asked(
    registry: KernelRegistry, notebook_path: Path, epoch: str, since: float
) -> AskedStop | None:
    """The interrupt, restart or shutdown the registry records for the kernel of ``epoch``
    since ``since`` (``KernelRegistry.record_interrupt``), else None."""
    return asked_stop(registry.interrupt_since(notebook_path, epoch, since))


def _set_busy(
    registry: KernelRegistry,
    path: Path,
    epoch: str,
    busy: dict[str, Any] | None,
    *,
    of: int | None = None,
    user: str | None = None,
) -> None:
    with contextlib.suppress(KernelError):
        registry.set_busy(path, epoch, busy, of=of, user=user)


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
            registry, keep=False, idle_timeout=idle_timeout(None), attach_only=True,
            blocking=True, record_use=False,
        )  # fmt: skip
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
        who = process_name()
        try:
            drive(check_leftover(registry, path, backend, DEFAULT_BUSY_WAIT))
            try:  # this process's use and busy record, in one write
                registry.set_busy(path, live.epoch, busy_record(None), user=who)
            except KernelError:
                return None  # the entry stayed locked: nothing ran, the full path waits
            return _run(
                backend, code, live.epoch, registry=registry, path=path, limit=limit,
                kernelspec_name=kernelspec_name, after=after,
            )  # fmt: skip
        finally:
            _set_busy(registry, path, live.epoch, None, user=who)  # idle, and let go
            _close(backend)
    finally:
        lock.release()
        registry.drop_if_unused(path)  # no kernel: the lock file is not left behind


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
    since = time.time()
    signal = StopSignal(elsewhere=lambda: stop_asked(registry, path, epoch, since))
    collector = OutputCollector(DisplayRegistry(), None)
    try:
        request = run_request(backend, code, collector=collector, timeout=limit, signal=signal)
        with ctrl_c_interrupts(backend, signal):
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
    state: KernelState = "dead" if not alive else (result.kernel_state or "idle")
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


@contextlib.contextmanager
def ctrl_c_interrupts(backend: SharedBackend, stop: StopSignal) -> Iterator[None]:
    """While the block runs, this process's first SIGINT (Ctrl-C) interrupts the kernel, as
    ``j-cli kernel interrupt`` would: the request goes on to its reply (bounded by its
    timeout) and ends ``interrupted`` (``kernel_interrupted``) with what it printed. A second
    SIGINT raises ``KeyboardInterrupt`` (the request then settles, bounded, and the command
    is cancelled); SIGTERM (and SIGHUP alike) interrupts the kernel (unless a Ctrl-C did) and raises
    :class:`~jupyter_jcli.errors.Terminated` at once, as a second Ctrl-C would. Outside the
    main thread, or when SIGINT is not Python's default handler
    (ignored, or handled by the caller), nothing changes."""
    import signal
    import threading

    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return

    def interrupt() -> bool:
        entry = backend.entry
        if stop.interrupted or entry is None:
            return False
        stop.interrupted = True
        with contextlib.suppress(KernelError):
            interrupt_registered(entry)
        return True

    def on_sigint(signum: int, frame: object) -> None:
        if not interrupt():
            raise KeyboardInterrupt

    def on_sigterm(signum: int, frame: object) -> None:
        interrupt()
        raise Terminated(signum)

    previous = signal.signal(signal.SIGINT, on_sigint)
    previous_term = {  # SIGHUP as SIGTERM, unless ignored (nohup) or handled by the caller
        signum: signal.signal(signum, on_sigterm)
        for signum in TERMINATING_SIGNALS
        if signal.getsignal(signum) in (signal.SIG_DFL, raise_terminated)
    }
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        for signum, handler in previous_term.items():
            signal.signal(signum, handler)


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
