"""One execute request on a backend, bounded: collect its outputs, detect timeout and death.

Protocol (https://jupyter-client.readthedocs.io/en/latest/messaging.html): the request's
outputs arrive on iopub with ``parent_header.msg_id`` equal to the request's id, ending with
``status: idle``; its ``execute_reply`` arrives on the shell channel. Messages of other
parents (left over from an earlier, interrupted request) are skipped.
"""

from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio

from jupyter_jcli.kernels._backend import KernelBackend
from jupyter_jcli.kernels._config import POLL_INTERVAL, SETTLE_TIMEOUT
from jupyter_jcli.kernels._translate import OutputCollector, message_type
from jupyter_jcli.kernels._types import KernelMessage, OutputCallback

__all__ = ["RunOutcome", "run_request"]

Ending = Literal["done", "timeout", "died", "unsettled"]


@dataclass
class RunOutcome:
    """How one request ended.

    Attributes:
        status: ``ok`` / ``error`` from the reply, or ``timeout`` / ``died``.
        reply: the ``execute_reply`` content (``{}`` when none arrived).
        settled: ``False`` when the kernel did not go idle after the timeout's interrupt
            (the caller must replace the kernel).
        alive: ``False`` when the kernel process ended.
        duration_s: seconds from sending the request to the end.
    """

    status: Literal["ok", "error", "timeout", "died"]
    reply: dict[str, Any] = field(default_factory=dict)
    settled: bool = True
    alive: bool = True
    duration_s: float = 0.0


def _parent_id(msg: KernelMessage) -> object:
    parent = msg.get("parent_header")
    return parent.get("msg_id") if isinstance(parent, dict) else None


class _Waiter:
    """Reads one request's messages until idle and reply, a deadline, or the kernel's death."""

    def __init__(
        self,
        backend: KernelBackend,
        msg_id: str,
        collector: OutputCollector,
        on_output: OutputCallback | None,
    ) -> None:
        self.backend = backend
        self.msg_id = msg_id
        self.collector = collector
        self.on_output = on_output
        self.idle = False
        self.reply: dict[str, Any] | None = None

    async def until(self, deadline: float) -> Ending:
        last_check = time.monotonic()
        while not (self.idle and self.reply is not None):
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            wait = min(POLL_INTERVAL, deadline - now)
            got = await (self._iopub(wait) if not self.idle else self._shell(wait))
            if not got or time.monotonic() - last_check >= POLL_INTERVAL:
                last_check = time.monotonic()
                if not await self.backend.is_alive():
                    return "died"
        return "done"

    async def _iopub(self, wait: float) -> bool:
        msg = await self.backend.next_iopub(wait)
        if msg is None:
            return False
        if _parent_id(msg) != self.msg_id:
            return True
        if message_type(msg) == "status":
            if (msg.get("content") or {}).get("execution_state") == "idle":
                self.idle = True
            return True
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
        if _parent_id(msg) == self.msg_id and message_type(msg) == "execute_reply":
            self.reply = dict(msg.get("content") or {})
        return True


async def _settle(waiter: _Waiter) -> Ending:
    """Interrupt the kernel and wait (bounded by SETTLE_TIMEOUT) until the request is done."""
    backend = waiter.backend
    if not await backend.is_alive():
        return "died"
    try:
        await backend.interrupt()
    except Exception:
        return "died" if not await backend.is_alive() else "unsettled"
    ending = await waiter.until(time.monotonic() + SETTLE_TIMEOUT)
    return "unsettled" if ending == "timeout" else ending


async def run_request(
    backend: KernelBackend,
    code: str,
    *,
    collector: OutputCollector,
    timeout: float,
    on_output: OutputCallback | None = None,
    silent: bool = False,
    user_expressions: dict[str, str] | None = None,
) -> RunOutcome:
    """Execute ``code`` on ``backend`` and wait, at most ``timeout`` s plus the settle time.

    On timeout the kernel is interrupted and given :data:`SETTLE_TIMEOUT` seconds to go idle.
    If the caller is cancelled or ``on_output`` raises, the kernel is interrupted the same way
    (shielded, bounded) before the exception propagates, so no request is left running.

    Args:
        backend: a started backend.
        code: the code to run.
        collector: receives every iopub message of the request.
        timeout: seconds the code may run.
        on_output: called with each output (see :data:`OutputCallback`).
        silent: ``silent: true, store_history: false`` (no execution count, no history).
        user_expressions: ``{name: expression}`` evaluated after the code.

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
    waiter = _Waiter(backend, msg_id, collector, on_output)
    try:
        ending = await waiter.until(started + timeout)
    except BaseException:
        with anyio.CancelScope(shield=True):
            waiter.on_output = None
            await _settle(waiter)
        raise
    settled = True
    if ending == "timeout":
        waiter.on_output = None
        after = await _settle(waiter)
        settled = after == "done"
        ending = "died" if after == "died" else "timeout"
    reply = waiter.reply or {}
    duration = time.monotonic() - started
    if ending == "died":
        return RunOutcome("died", reply, settled=False, alive=False, duration_s=duration)
    if ending == "timeout":
        return RunOutcome("timeout", reply, settled=settled, duration_s=duration)
    status: Literal["ok", "error"] = "ok" if reply.get("status") == "ok" else "error"
    return RunOutcome(status, reply, duration_s=duration)
