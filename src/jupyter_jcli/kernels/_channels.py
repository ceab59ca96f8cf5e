"""What the backends that talk to a kernel's channels share: the ``execute_request`` they send
(:class:`ExecuteRequests`).

Message shapes: the Jupyter messaging spec, "Execute"
(https://jupyter-client.readthedocs.io/en/latest/messaging.html#execute).
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from typing import Any, Literal

__all__ = ["Channel", "ExecuteRequests"]

Channel = Literal["shell", "control", "iopub"]
"""The kernel channels a backend receives from (stdin is never offered)."""


class ExecuteRequests(abc.ABC):
    """:meth:`send_execute` of a :class:`~jupyter_jcli.kernels.KernelBackend`, sent by the
    transport's :meth:`_send_execute_request`."""

    async def send_execute(
        self, code: str, *, silent: bool, store_history: bool, user_expressions: Mapping[str, str]
    ) -> str:
        """Send an ``execute_request``; return its ``msg_id``. Stdin is never offered
        (``allow_stdin: false``, so ``input()`` fails at once) and the kernel drops queued
        requests after an error (``stop_on_error: true``).

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` before :meth:`start` or after :meth:`shutdown`,
                and the transport's own codes (see its :meth:`_send_execute_request`).
        """
        return await self._send_execute_request(
            {
                "code": code,
                "silent": silent,
                "store_history": store_history,
                "user_expressions": dict(user_expressions),
                "allow_stdin": False,
                "stop_on_error": True,
            }
        )

    @abc.abstractmethod
    async def _send_execute_request(self, content: dict[str, Any]) -> str:
        """Send one ``execute_request`` with ``content`` on the shell channel; its
        ``msg_id``."""
