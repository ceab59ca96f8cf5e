"""Who holds one kernel, and the restarts and shutdowns waiting to take it from the holder.

Executions never overlap: each holds the kernel (an ``anyio`` lock, re-entrant within the
holding task). A restart or shutdown that finds the kernel held asks the running execution to
stop (through the execution's :class:`~jupyter_jcli.kernels._request.StopSignal`) and, while it
waits for the holder to let go, names itself in :attr:`KernelHold.stop_requested` so the
holder runs nothing more.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._config import STOP_WAIT
from jupyter_jcli.kernels._request import StopSignal
from jupyter_jcli.kernels._types import InterruptReason

__all__ = ["KernelHold"]


class KernelHold:
    """The hold on one notebook's kernel.

    Args:
        notebook_path: the notebook (named in ``KERNEL_BUSY`` details).
    """

    def __init__(self, notebook_path: Path) -> None:
        self._path = notebook_path
        self._lock = anyio.Lock()
        self._owner: int | None = None
        self._busy_since = 0.0
        self._signal: StopSignal | None = None
        self._stops: list[InterruptReason] = []
        self.running_cell: str | None = None
        """The cell key of the execution running under the hold, if any."""

    def locked(self) -> bool:
        """Whether someone holds the kernel."""
        return self._lock.locked()

    def owned(self) -> bool:
        """Whether the current task holds the kernel."""
        return self._owner == anyio.get_current_task().id

    @property
    def stop_requested(self) -> InterruptReason | None:
        """The restart or shutdown waiting for the kernel, if any."""
        return self._stops[0] if self._stops else None

    @asynccontextmanager
    async def hold(self, *, busy_wait: float) -> AsyncIterator[None]:
        """Hold the kernel (re-entrant within the task).

        Raises:
            KernelError: ``KERNEL_BUSY`` (details: ``notebook_path``, ``running_cell``,
                ``busy_for_s``, ``busy_wait_s``) when the kernel stays held.
        """
        if self.owned():
            yield
            return
        acquired = False
        if busy_wait > 0:
            with anyio.move_on_after(busy_wait):
                await self._lock.acquire()
                acquired = True
        else:
            try:
                self._lock.acquire_nowait()
                acquired = True
            except anyio.WouldBlock:
                pass
        if not acquired:
            raise KernelError(
                ErrorCode.KERNEL_BUSY,
                "the kernel is running another execution; wait for it, or interrupt it",
                {
                    "notebook_path": str(self._path),
                    "running_cell": self.running_cell,
                    "busy_for_s": round(time.monotonic() - self._busy_since, 3),
                    "busy_wait_s": busy_wait,
                },
            )
        self._owner = anyio.get_current_task().id
        self._busy_since = time.monotonic()
        try:
            yield
        finally:
            self._owner = None
            self.running_cell = None
            self._lock.release()

    @asynccontextmanager
    async def stopping(self, reason: InterruptReason) -> AsyncIterator[None]:
        """Hold the kernel after asking the running execution (if any) to stop.

        Raises:
            KernelError: ``KERNEL_BUSY`` when the holder keeps the kernel past
                :data:`~jupyter_jcli.kernels.STOP_WAIT` s.
        """
        if self.owned():
            yield  # this task holds the kernel: nothing of its own is running now
            return
        self._stops.append(reason)
        signal = self._signal
        if signal is not None and signal.stop is None:
            signal.stop = reason
        try:
            async with self.hold(busy_wait=STOP_WAIT):
                yield
        finally:
            self._stops.remove(reason)

    @contextmanager
    def request(self) -> Iterator[StopSignal]:
        """The :class:`StopSignal` of the request about to run, reachable while it runs."""
        signal = self._signal = StopSignal()
        try:
            yield signal
        finally:
            self._signal = None

    def note_interrupt(self) -> None:
        """An interrupt request is being sent: the running request, if any, ends
        ``interrupted`` rather than ``error``."""
        if self._signal is not None:
            self._signal.interrupted = True

    def refuse_if_stopping(self) -> None:
        """Refuse to start a request while a restart or shutdown waits for the kernel.

        Raises:
            KernelError: ``KERNEL_BUSY`` (details ``stop_requested``).
        """
        reason = self.stop_requested
        if reason is not None:
            raise KernelError(
                ErrorCode.KERNEL_BUSY,
                "the kernel is being restarted or shut down; run the cell again afterwards",
                {"notebook_path": str(self._path), "running_cell": None, "stop_requested": reason},
            )
