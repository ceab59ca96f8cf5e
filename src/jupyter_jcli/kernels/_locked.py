"""Kernels whose executions exclude every other process of ours: the Jupyter Server case.

A server kernel is reachable by every process that knows the server (each ``j-cli`` command,
``jupyter-mcp``), and the server itself runs whatever any client sends, interleaved. The
registry's execution lock (``<key>.exec`` under :func:`~jupyter_jcli.kernels.registry_dir`,
the one :class:`~jupyter_jcli.kernels.SharedNotebookKernel` takes for a local registry
kernel) is taken around every hold here too, so two of our processes never execute on one
notebook's kernel at once, whichever backend runs it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._backend import BackendFactory
from jupyter_jcli.kernels._config import DEFAULT_BUSY_WAIT, DEFAULT_STARTUP_TIMEOUT
from jupyter_jcli.kernels._kernel import NotebookKernel
from jupyter_jcli.kernels._pool import KernelPool
from jupyter_jcli.kernels._registry import ExecLock, KernelRegistry
from jupyter_jcli.kernels._registry_notes import asked_stop
from jupyter_jcli.kernels._types import AskedStop

if TYPE_CHECKING:
    from jupyter_jcli.kernels._server_ledger import ServerLedger

__all__ = ["LockedKernelPool", "LockedNotebookKernel"]

_POLL = 0.05
"""Seconds between two tries of a taken execution lock."""


class LockedNotebookKernel(NotebookKernel):
    """A :class:`NotebookKernel` whose :meth:`hold` also takes the notebook's execution lock
    in ``registry`` (held for the whole batch; released when the hold ends or the process
    dies)."""

    def __init__(
        self,
        notebook_path: str | Path,
        *,
        registry: KernelRegistry,
        backend_factory: BackendFactory,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        ledger: ServerLedger | None = None,
    ) -> None:
        super().__init__(
            notebook_path, backend_factory=backend_factory, startup_timeout=startup_timeout
        )
        self._exec = ExecLock(registry.path(self.notebook_path, ".exec"))
        self._exec_task: int | None = None
        self._ledger = ledger

    def _asked_elsewhere(self, epoch: str, since: float) -> AskedStop | None:
        """The interrupt, restart or stop another command noted in the server's ledger for
        the kernel of ``epoch`` since ``since`` (``ServerLedger.record_interrupt``)."""
        asked = (
            self._ledger.interrupt_since(self.notebook_path, epoch, since) if self._ledger else None
        )
        return asked_stop(asked)

    @asynccontextmanager
    async def hold(self, *, busy_wait: float = DEFAULT_BUSY_WAIT) -> AsyncIterator[None]:
        """Hold the kernel in this process and across processes.

        Raises:
            KernelError: ``KERNEL_BUSY`` (details ``notebook_path``, ``running_cell``: None,
                ``busy_by``: ``"another process"``, ``busy_wait_s``) when another process
                of ours executes on the notebook's kernel for longer than ``busy_wait`` s;
                the in-process ``KERNEL_BUSY`` of :meth:`NotebookKernel.hold`.
        """
        me = anyio.get_current_task().id
        if self._exec_task == me:
            yield
            return
        async with super().hold(busy_wait=busy_wait):
            deadline = time.monotonic() + max(busy_wait, 0.0)
            while not self._exec.try_acquire():
                if time.monotonic() >= deadline:
                    raise KernelError(
                        ErrorCode.KERNEL_BUSY,
                        "another process is running cells on this notebook's kernel; wait "
                        "for it, or interrupt it",
                        {
                            "notebook_path": str(self.notebook_path),
                            "running_cell": None,
                            "busy_by": "another process",
                            "busy_wait_s": busy_wait,
                        },
                    )
                await anyio.sleep(_POLL)
            self._exec_task = me
            try:
                yield
            finally:
                self._exec_task = None
                checkpoint = getattr(self._backend, "checkpoint", None)
                if self._ledger is not None and checkpoint is not None:
                    await checkpoint()  # a server kernel: what ran counts for the next joiner
                self._exec.release()


class LockedKernelPool(KernelPool):
    """A :class:`KernelPool` of :class:`LockedNotebookKernel` (same arguments, plus the
    ``registry`` whose lock files it uses; default: the user's)."""

    def __init__(
        self,
        *,
        backend_factory: BackendFactory,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        registry: KernelRegistry | None = None,
        ledger: ServerLedger | None = None,
    ) -> None:
        super().__init__(backend_factory=backend_factory, startup_timeout=startup_timeout)
        self.registry = registry if registry is not None else KernelRegistry()
        self.ledger = ledger

    def _new_kernel(self, path: Path) -> NotebookKernel:
        return LockedNotebookKernel(
            path,
            backend_factory=self._factory,
            startup_timeout=self._startup_timeout,
            registry=self.registry,
            ledger=self.ledger,
        )
