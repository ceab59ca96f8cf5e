"""One execute request on a backend, bounded: collect its outputs, detect timeout and death.

Protocol (https://jupyter-client.readthedocs.io/en/latest/messaging.html): the request's
outputs arrive on iopub with ``parent_header.msg_id`` equal to the request's id, ending with
``status: idle``; its ``execute_reply`` arrives on the shell channel. Messages of other
parents (left over from an earlier, interrupted request) are skipped.

Requests from outside the execution reach the loop through its :class:`StopSignal`: an
interrupt request is noted (a cell it stops ends ``interrupted``, not ``error``; one from
another process is found through ``StopSignal.elsewhere``, the registry's record); a restart or
shutdown makes the loop interrupt the kernel, collect what is still queued (bounded by
:data:`~jupyter_jcli.kernels.STOP_GRACE`) and return ``interrupted`` *before* the kernel's
channels are closed, so no receive is ever left waiting on a closed socket.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict

import anyio

from jupyter_jcli.errors import KernelError
from jupyter_jcli.kernels._backend import KernelBackend
from jupyter_jcli.kernels._config import POLL_INTERVAL, SETTLE_TIMEOUT, STOP_GRACE
from jupyter_jcli.kernels._translate import OutputCollector, message_type, parent_id
from jupyter_jcli.kernels._types import (
    AskedStop,
    ExecutionStatus,
    InterruptReason,
    MessageCallback,
    OutputCallback,
)

__all__ = [
    "DRAIN_TIMEOUT",
    "INTERRUPT_RETRY",
    "REPLY_GRACE",
    "RequestOptions",
    "RequestOutcome",
    "StopSignal",
    "request_execution",
]

INTERRUPT_RETRY = 2.0
"""Seconds between interrupts while a timed-out or abandoned request settles."""

REPLY_GRACE = 2.0
"""Seconds to wait for the ``execute_reply`` once the request's ``idle`` status arrived. The
reply is sent before ``idle``; ipykernel sends none when an interrupt lands in its own code
after the user's code (it logs "KeyboardInterrupt caught in kernel"), and the request is then
over without one."""

DRAIN_TIMEOUT = 1.0
"""Seconds spent, at most, reading the iopub messages a dead kernel sent before it died
(what the cell printed up to its death: it is kept, saved and shown with the ``died`` cell)."""
_DRAIN_QUIET = 0.1
"""Seconds without a new message that end the drain early."""

Ending = Literal["done", "timeout", "died", "unsettled", "stopped"]


@dataclass
class StopSignal:
    """What was asked of one running request from outside it; read at every poll.

    Attributes:
        interrupted: an interrupt request was sent to the kernel while the request ran.
        stop: set by a restart or shutdown: stop waiting, interrupt, return ``interrupted``.
        elsewhere: asks whether another process asked the kernel to stop while the request
            ran (a shared kernel's registry records ``j-cli kernel interrupt`` and restarts):
            an :class:`~jupyter_jcli.kernels.AskedStop` or ``None``; called only once the
            request ended ``error`` or ``died``, to tell such a stop from the code's own
            failure.
    """

    interrupted: bool = False
    stop: InterruptReason | None = None
    elsewhere: Callable[[], AskedStop | None] | None = None


@dataclass
class RequestOutcome:
    """How one request ended.

    Attributes:
        status: ``ok`` / ``error`` from the reply, or ``timeout`` / ``died`` /
            ``interrupted``.
        reply: the ``execute_reply`` content; when none arrived, a stand-in built from the
            outputs (see :data:`REPLY_GRACE`).
        settled: ``False`` when the kernel did not go idle after the interrupt of a timeout
            or stop (the caller must replace the kernel).
        alive: ``False`` when the kernel process ended.
        duration_s: seconds from sending the request to the end.
        interrupted_by: why the request ended ``interrupted``.
        interrupt_requested_by: who asked for that stop when another process did (its
            :func:`~jupyter_jcli.kernels.process_name`), else ``None``.
        interrupt_requested_command: that process's command line, when recorded.
        kernel_state: the kernel's execution state as its last iopub ``status`` message
            read said (``idle`` once the request ended; ``None`` when none was read).
    """

    status: ExecutionStatus
    reply: dict[str, Any] = field(default_factory=dict)
    settled: bool = True
    alive: bool = True
    duration_s: float = 0.0
    interrupted_by: InterruptReason | None = None
    interrupt_requested_by: str | None = None
    interrupt_requested_command: str | None = None
    kernel_state: Literal["idle", "busy"] | None = None


@dataclass(eq=False)
class _Waiter:
    """Reads one request's messages until idle and reply, a deadline, or the kernel's death."""

    backend: KernelBackend
    msg_id: str
    collector: OutputCollector
    on_output: OutputCallback | None
    signal: StopSignal
    on_message: MessageCallback | None = None
    idle: bool = field(default=False, init=False)
    idle_at: float = field(default=0.0, init=False)
    reply: dict[str, Any] | None = field(default=None, init=False)
    state: Literal["idle", "busy"] | None = field(default=None, init=False)
    """The execution state of the last ``status`` message read (whoever's request)."""

    async def until(self, deadline: float, *, stoppable: bool = True) -> Ending:
        last_check = time.monotonic()
        while not (self.idle and self.reply is not None):
            now = time.monotonic()
            if self.idle and now >= self.idle_at + REPLY_GRACE:
                return "done"  # idle without a reply: the kernel's handler was interrupted
            if stoppable and self.signal.stop is not None:
                return "stopped"
            if now >= deadline:
                return "timeout"
            wait = min(POLL_INTERVAL, deadline - now)
            try:
                got = await (self._iopub(wait) if not self.idle else self._shell(wait))
            except KernelError:  # the backend was shut down: the kernel is gone
                return "died"
            if not got or time.monotonic() - last_check >= POLL_INTERVAL:
                last_check = time.monotonic()
                if not await self.backend.is_alive():
                    return "died"
        return "done"

    async def drain(self) -> None:
        """Collect the request's messages still queued after the kernel died, within
        :data:`DRAIN_TIMEOUT` s: the kernel's last outputs often arrive after the death is
        noticed (ipykernel sends from its own I/O thread)."""
        deadline = time.monotonic() + DRAIN_TIMEOUT
        while (now := time.monotonic()) < deadline:
            try:
                got = await self._iopub(min(_DRAIN_QUIET, deadline - now))
            except KernelError:  # the dead kernel's channels may be closed under us
                return
            if not got:
                return

    async def _iopub(self, wait: float) -> bool:
        msg = await self.backend.next_iopub(wait)
        if msg is None:
            return False
        if message_type(msg) == "status":
            state = (msg.get("content") or {}).get("execution_state")
            if state in ("idle", "busy"):
                self.state = state
            if state == "idle" and parent_id(msg) == self.msg_id:
                self.idle = True
                self.idle_at = time.monotonic()
            return True
        if parent_id(msg) != self.msg_id:
            return True
        if self.on_message is not None:
            self.on_message(message_type(msg), dict(msg.get("content") or {}))
        out = self.collector.handle(msg)
        if out is not None and self.on_output is not None:
            result = self.on_output(out)
            if inspect.isawaitable(result):
                await result
        return True

    async def _shell(self, wait: float) -> bool:
        msg = await self.backend.next_shell_reply(wait)
        if msg is None:
            return False
        if parent_id(msg) == self.msg_id and message_type(msg) == "execute_reply":
            self.reply = dict(msg.get("content") or {})
        return True


async def _settle(waiter: _Waiter, limit: float) -> Ending:
    """Interrupt the kernel until the request is done, for at most ``limit`` s.

    The interrupt is re-sent every :data:`INTERRUPT_RETRY` seconds: ipykernel can lose a
    SIGINT that lands while the cell is flushing its output.
    """
    backend = waiter.backend
    settle_deadline = time.monotonic() + limit
    while True:
        if not await backend.is_alive():
            return "died"
        try:
            await backend.interrupt()
        except KernelError:
            return "died" if not await backend.is_alive() else "unsettled"
        now = time.monotonic()
        ending = await waiter.until(min(now + INTERRUPT_RETRY, settle_deadline), stoppable=False)
        if ending != "timeout":
            return ending
        if time.monotonic() >= settle_deadline:
            return "unsettled"


class _RequestRequired(TypedDict):
    collector: OutputCollector
    timeout: float


class RequestOptions(_RequestRequired, total=False):
    """The keywords of :func:`request_execution` other than ``signal`` (meanings there), for the
    layers that forward them unchanged (``**options: Unpack[RequestOptions]``)."""

    on_output: OutputCallback | None
    on_message: MessageCallback | None
    silent: bool
    user_expressions: dict[str, str] | None


async def request_execution(
    backend: KernelBackend,
    code: str,
    *,
    collector: OutputCollector,
    timeout: float,
    on_output: OutputCallback | None = None,
    on_message: MessageCallback | None = None,
    silent: bool = False,
    user_expressions: dict[str, str] | None = None,
    signal: StopSignal | None = None,
) -> RequestOutcome:
    """Execute ``code`` on ``backend`` and wait, at most ``timeout`` s plus the settle time.

    On timeout the kernel is interrupted and given :data:`SETTLE_TIMEOUT` seconds to go idle.
    If the caller is cancelled or ``on_output`` raises, the kernel is interrupted the same way
    (shielded, bounded) before the exception propagates, so no request is left running.
    When ``signal.stop`` is set (a restart or shutdown), the kernel is interrupted and given
    :data:`~jupyter_jcli.kernels.STOP_GRACE` seconds; the outcome is ``interrupted`` with
    what the request produced so far. A request that ends ``error`` after ``signal`` noted an
    interrupt request is ``interrupted`` (``kernel_interrupted``); so is one that ends
    ``error`` (or ``died``, for a restart or shutdown) after another process asked for that
    stop (``signal.elsewhere``: the reason it gave, and ``interrupt_requested_by``).

    Args:
        backend: a started backend.
        code: the code to run.
        collector: receives every iopub message of the request.
        timeout: seconds the code may run.
        on_output: called with each output (see :data:`OutputCallback`).
        on_message: called with each iopub message (see :data:`MessageCallback`).
        silent: ``silent: true, store_history: false`` (no execution count, no history).
        user_expressions: ``{name: expression}`` evaluated after the code.
        signal: requests from outside the execution (see :class:`StopSignal`).

    Raises:
        KernelError: ``KERNEL_NOT_RUNNING`` when the backend cannot send the request.
    """
    started = time.monotonic()
    msg_id = await backend.send_execute(
        code,
        silent=silent,
        store_history=not silent,
        user_expressions=user_expressions or {},
    )
    signal = signal if signal is not None else StopSignal()
    waiter = _Waiter(backend, msg_id, collector, on_output, signal, on_message)
    try:
        ending = await waiter.until(started + timeout)
    except BaseException:
        with anyio.CancelScope(shield=True):  # the interrupt of an abandoned request
            waiter.on_output = waiter.on_message = None
            await _settle(waiter, SETTLE_TIMEOUT)
        raise
    settled = alive = True
    if ending in ("timeout", "stopped"):
        waiter.on_output = None
        after = await _settle(waiter, STOP_GRACE if ending == "stopped" else SETTLE_TIMEOUT)
        settled, alive = after == "done", after != "died"
        if ending == "timeout" and not alive:
            ending = "died"
    elif ending == "died":
        settled = alive = False
    duration = time.monotonic() - started
    if not alive:
        await waiter.drain()
    reply = waiter.reply if waiter.reply is not None else _reply_from_outputs(collector)
    outcome = _ended(signal, ending, reply, settled=settled, alive=alive, duration=duration)
    return replace(outcome, kernel_state=waiter.state if alive else None)


def _ended(
    signal: StopSignal,
    ending: Ending,
    reply: dict[str, Any],
    *,
    settled: bool,
    alive: bool,
    duration: float,
) -> RequestOutcome:
    """How the request ended, from how its wait ended and what it was asked."""
    stop = signal.stop
    if stop is not None and ending in ("stopped", "died"):
        return RequestOutcome("interrupted", reply, settled, alive, duration, interrupted_by=stop)
    if ending == "timeout":
        return RequestOutcome("timeout", reply, settled=settled, duration_s=duration)
    if ending != "died" and reply.get("status") == "ok":
        return RequestOutcome("ok", reply, duration_s=duration)
    if ending != "died" and signal.interrupted:
        return RequestOutcome(
            "interrupted", reply, duration_s=duration, interrupted_by="kernel_interrupted"
        )
    asked = signal.elsewhere() if signal.elsewhere is not None else None
    if asked is not None and (ending != "died" or asked.reason != "kernel_interrupted"):
        # a stop another process asked for: an interrupt (the kernel kept), or a restart or
        # shutdown that interrupted the cell or took the kernel under it
        return RequestOutcome(
            "interrupted", reply, settled, alive, duration,
            interrupted_by=asked.reason, interrupt_requested_by=asked.who,
            interrupt_requested_command=asked.command,
        )  # fmt: skip
    if ending == "died":
        return RequestOutcome("died", reply, settled=False, alive=False, duration_s=duration)
    return RequestOutcome("error", reply, duration_s=duration)


def _reply_from_outputs(collector: OutputCollector) -> dict[str, Any]:
    """A stand-in reply when none arrived: ``error`` with the last error output's name and
    value if the request showed one, else ``ok``; the count from ``execute_input``."""
    reply: dict[str, Any] = {"status": "ok", "execution_count": collector.execution_count}
    if collector.last_error is not None:
        ename, evalue = collector.last_error
        reply.update(status="error", ename=ename, evalue=evalue)
    return reply
