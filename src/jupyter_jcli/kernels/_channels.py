"""What the backends that talk to a kernel's channels share: the ``execute_request`` they send
(:class:`ExecuteRequests`) and, for those that receive from the sockets themselves, the count
of receives in progress that a shutdown waits out (:class:`CountedReceives`).

Message shapes: the Jupyter messaging spec, "Execute"
(https://jupyter-client.readthedocs.io/en/latest/messaging.html#execute).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from jupyter_jcli.kernels._types import KernelMessage

__all__ = [
    "RECEIVE_DRAIN",
    "Channel",
    "CountedReceives",
    "ExecuteRequests",
    "execute_request_content",
]

Channel = Literal["shell", "control", "iopub"]
"""The kernel channels a backend receives from (stdin is never offered)."""

RECEIVE_DRAIN = 2.0
"""Seconds a shutdown waits for receives in progress to return before it closes the channels
(each receive is bounded by its own timeout, at most a poll interval in the execution loop).
Closing a ``zmq.asyncio`` socket cancels the future a receive awaits: the receiving task would
get a bare ``CancelledError`` that no cancel scope asked for."""


def execute_request_content(
    code: str, *, silent: bool, store_history: bool, user_expressions: Mapping[str, str]
) -> dict[str, Any]:
    """The content of an ``execute_request``: stdin is never offered (``allow_stdin: false``,
    so ``input()`` fails at once) and the kernel drops queued requests after an error
    (``stop_on_error: true``)."""
    return {
        "code": code,
        "silent": silent,
        "store_history": store_history,
        "user_expressions": dict(user_expressions),
        "allow_stdin": False,
        "stop_on_error": True,
    }


class ExecuteRequests(abc.ABC):
    """:meth:`send_execute` of a :class:`~jupyter_jcli.kernels.KernelBackend`: the content
    of :func:`execute_request_content`, sent by the transport's :meth:`_send_execute_request`.
    """

    async def send_execute(
        self, code: str, *, silent: bool, store_history: bool, user_expressions: Mapping[str, str]
    ) -> str:
        """Send an ``execute_request`` (``allow_stdin: false``); return its ``msg_id``.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` before :meth:`start` or after :meth:`shutdown`,
                and the transport's own codes (see its :meth:`_send_execute_request`).
        """
        content = execute_request_content(
            code, silent=silent, store_history=store_history, user_expressions=user_expressions
        )
        return await self._send_execute_request(content)

    @abc.abstractmethod
    async def _send_execute_request(self, content: dict[str, Any]) -> str:
        """Send one ``execute_request`` with ``content`` on the shell channel; its
        ``msg_id``."""


class CountedReceives(ExecuteRequests):
    """A backend that receives from the kernel's sockets itself: every receive goes through
    :meth:`_receive`, which counts the receives in progress, so that a shutdown can wait them
    out (:meth:`_receives_drained`) before it closes a channel under one."""

    def __init__(self) -> None:
        self._receiving = 0

    async def next_iopub(self, timeout: float) -> KernelMessage | None:
        """The next iopub message (any parent), or ``None`` after ``timeout`` seconds.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` before :meth:`start` or once :meth:`shutdown`
                has begun.
        """
        return await self._receive("iopub", timeout)

    async def next_shell_reply(self, timeout: float) -> KernelMessage | None:
        """The next shell reply (any parent), or ``None`` after ``timeout`` seconds.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` before :meth:`start` or once :meth:`shutdown`
                has begun.
        """
        return await self._receive("shell", timeout)

    async def _receive(self, channel: Channel, timeout: float) -> KernelMessage | None:
        """:meth:`_take`, counted among the receives in progress."""
        self._receiving += 1
        try:
            return await self._take(channel, timeout)
        finally:
            self._receiving -= 1

    @abc.abstractmethod
    async def _take(self, channel: Channel, timeout: float) -> KernelMessage | None:
        """The next message on ``channel``, or ``None`` after ``timeout`` seconds.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when the channel is closed or fails.
        """

    async def _receives_drained(self) -> None:
        """Wait (at most :data:`RECEIVE_DRAIN` s, shielded) until no receive is in
        progress."""
        if not self._receiving:
            return
        import anyio

        with anyio.CancelScope(shield=True), anyio.move_on_after(RECEIVE_DRAIN):
            while self._receiving:
                await anyio.sleep(0.01)
