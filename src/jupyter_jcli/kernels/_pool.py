"""The kernels of a process: one :class:`NotebookKernel` per notebook path."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from anyio.abc import AsyncResource

from jupyter_jcli.kernels._backend import BackendFactory
from jupyter_jcli.kernels._config import DEFAULT_STARTUP_TIMEOUT
from jupyter_jcli.kernels._kernel import NotebookKernel
from jupyter_jcli.kernels._local import LocalBackend

if TYPE_CHECKING:
    from jupyter_jcli.kernels._records import KernelRecords
    from jupyter_jcli.kernels._registry import KernelRegistry

__all__ = ["KernelPool"]


class KernelPool(AsyncResource):
    """One kernel per notebook, keyed by the resolved notebook path; nothing starts until a
    kernel's first execution.

    Use as ``async with KernelPool() as pool:`` so every kernel is shut down on exit, or call
    :meth:`shutdown_all` yourself (server exit, SIGTERM, stdin closed).

    Args:
        backend_factory: makes one backend per kernel life (default: :class:`LocalBackend`).
        startup_timeout: seconds a kernel start may take.
        records: the records its kernels share with other processes
            (:class:`~jupyter_jcli.kernels.KernelRecords`: a Jupyter Server's
            :class:`~jupyter_jcli.kernels.ServerLedger`, the registry, or a
            test's in memory); the workbench keeps the
            notebooks' execution logs there. ``None``: kernels of this process alone.
        locks: the registry whose execution lock each kernel's hold takes (two of our
            processes never execute on one notebook's kernel at once: a server kernel is
            reachable by every process that knows the server); ``None``: none.
    """

    def __init__(
        self,
        *,
        backend_factory: BackendFactory = LocalBackend,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        records: KernelRecords | None = None,
        locks: KernelRegistry | None = None,
    ) -> None:
        self._factory = backend_factory
        self._startup_timeout = startup_timeout
        self.records = records
        self.locks = locks
        self._kernels: dict[Path, NotebookKernel] = {}

    def kernel(
        self, notebook_path: str | os.PathLike[str], *, kernelspec_name: str | None = None
    ) -> NotebookKernel:
        """The notebook's kernel object, created (not started) on first use.

        Args:
            notebook_path: the notebook; resolved, so every spelling of a path is one kernel.
            kernelspec_name: the kernelspec the notebook asks for (see
                :func:`~jupyter_jcli.kernels.kernelspec_name_from_metadata`); ``None`` keeps
                the current one (``python3`` for a new kernel). A change applies at the next
                start or restart; a running kernel is kept.
        """
        path = Path(notebook_path).resolve()
        kernel = self._kernels.get(path)
        if kernel is None:
            kernel = self._kernels[path] = self._new_kernel(path)
        if kernelspec_name is not None:
            kernel.kernelspec_name = kernelspec_name
        return kernel

    def _new_kernel(self, path: Path) -> NotebookKernel:
        """A new (unstarted) kernel object for the resolved ``path`` (subclasses make
        other kinds)."""
        return NotebookKernel(
            path,
            backend_factory=self._factory,
            startup_timeout=self._startup_timeout,
            records=self.records,
            locks=self.locks,
        )

    def get(self, notebook_path: str | os.PathLike[str]) -> NotebookKernel | None:
        """The notebook's kernel object if one was created, else ``None`` (creates nothing)."""
        return self._kernels.get(Path(notebook_path).resolve())

    def kernels(self) -> list[NotebookKernel]:
        """Every kernel object created so far (started or not)."""
        return list(self._kernels.values())

    async def shutdown_all(self, *, now: bool = False) -> None:
        """Shut every kernel down, concurrently; each bounded (graceful up to 5 s, then
        killed). Shielded from cancellation, so it completes during a server's exit."""
        kernels = list(self._kernels.values())
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for kernel in kernels:
                    tg.start_soon(partial(kernel.shutdown, now=now))

    async def aclose(self) -> None:
        """:meth:`shutdown_all` (graceful first), as ``async with`` does on exit."""
        await self.shutdown_all()
