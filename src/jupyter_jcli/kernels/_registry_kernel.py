"""Kernels shared through the registry: one kernel per notebook for every process of ours.

- :class:`RegistryBackend` (``_registry_backend``): a backend that joins the notebook's
  registered kernel through its connection file (``jupyter_client``), starting one through
  a supervisor (:func:`~jupyter_jcli.kernels._supervisor.start_registered`) when none runs. Its
  ``origin`` names who started the kernel and carries the recorded ``epoch``, so every
  process judges freshness against the same epoch and the registry's execution log (``attached``
  stays ``False``: the kernel's history is known).
- :class:`RegistryKernel`: a :class:`~jupyter_jcli.kernels.NotebookKernel` whose hold
  also takes the notebook's cross-process execution lock (two processes never execute at
  once on one kernel: the second gets ``KERNEL_BUSY``), that follows the registry (a kernel
  restarted or started by another process is joined; one that died is seen dead) and that
  really restarts the shared kernel on :meth:`restart`. A kernel being stopped is never
  joined (the registry says ``stopping``): it waits for that kernel to go and starts its own;
  one that goes away while it joins is replaced the same way. A kernel it started for itself
  is stopped at its shutdown only when nobody else uses it (:func:`stop_if_unused`);
  otherwise its supervisor stops it once they are done.
- :class:`RegistryKernelPool`: a :class:`~jupyter_jcli.kernels.KernelPool` of those; ``keep``
  decides whether the kernels it starts outlive it (``j-cli kernel start``, ``--keep``) or
  stop when it shuts down (a kernel started for one command, or for a ``jupyter-mcp``
  session). Kernels it only joined are left running either way.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._busy import take_exec
from jupyter_jcli.kernels._config import (
    DEFAULT_BUSY_WAIT,
    DEFAULT_KERNELSPEC,
    DEFAULT_STARTUP_TIMEOUT,
    STOP_WAIT,
)
from jupyter_jcli.kernels._kernel import NotebookKernel
from jupyter_jcli.kernels._pool import KernelPool
from jupyter_jcli.kernels._registry import (
    ExecLock,
    KernelRegistry,
)
from jupyter_jcli.kernels._registry import idle_timeout as resolve_idle_timeout
from jupyter_jcli.kernels._registry_backend import RegistryBackend
from jupyter_jcli.kernels._supervisor import (
    interrupt_registered,
    note_lost,
)

if TYPE_CHECKING:
    from jupyter_jcli.kernels._backend import KernelBackend
    from jupyter_jcli.kernels._entry import KernelEntry

__all__ = ["RegistryKernel", "RegistryKernelPool"]


class RegistryKernel(NotebookKernel):
    """A notebook's kernel shared through the registry (see the module docstring).

    Args:
        notebook_path: the notebook.
        registry: the registry.
        keep: whether a kernel this object starts outlives the process.
        idle_timeout: seconds a kernel it starts may stay idle (``None``: the default).
        kernelspec_name: as for :class:`NotebookKernel`.
        startup_timeout: as for :class:`NotebookKernel`.
    """

    def __init__(
        self,
        notebook_path: str | Path,
        *,
        registry: KernelRegistry,
        keep: bool = False,
        idle_timeout: float | None = None,
        kernelspec_name: str = DEFAULT_KERNELSPEC,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    ) -> None:
        super().__init__(
            notebook_path,
            kernelspec_name=kernelspec_name,
            backend_factory=self._new_backend,
            startup_timeout=startup_timeout,
            records=registry,
            locks=registry,
        )
        self.kernel_registry = registry
        self._keep = keep
        self._idle = idle_timeout
        self._attach_only = False
        self._starts_here = True  # its supervisor starts the kernel on this machine
        self._exec_lock = self._exec = ExecLock(registry.path(self.notebook_path, ".exec"))

    def _new_backend(self) -> KernelBackend:
        return RegistryBackend(
            self.kernel_registry,
            self._exec_lock,
            keep=self._keep,
            idle_timeout=resolve_idle_timeout(self._idle),
            attach_only=self._attach_only,
        )

    async def _stop(self, *, now: bool) -> None:
        """Let the kernel go (whether it stops for everyone is its backend's call: see
        :attr:`RegistryBackend.stop_on_shutdown`)."""
        backend = self._backend
        if isinstance(backend, RegistryBackend) and backend.entry is not None:
            self._keep_if_lost(backend.entry)
        await super()._stop(now=now)

    @asynccontextmanager
    async def hold(self, *, busy_wait: float = DEFAULT_BUSY_WAIT) -> AsyncIterator[None]:
        """Hold the kernel in this process and across processes (the execution lock, see
        :meth:`NotebookKernel.hold`), joined to the registered kernel.

        Raises:
            KernelError: ``KERNEL_BUSY`` (details of :func:`busy_error`: what runs, who
                runs it, since when; ``busy_gone`` for code a killed command left running,
                see :func:`~jupyter_jcli.kernels._busy.check_leftover`).
        """
        if self._hold.owned():  # a hold within this task's hold: joined and checked
            yield
            return
        took = False
        try:
            async with super().hold(busy_wait=busy_wait):
                took = True
                yield
        finally:
            if took:
                self.kernel_registry.drop_if_unused(self.notebook_path)  # no kernel started

    async def _enter_exec(self, busy_wait: float) -> None:
        """Join the registered kernel, then check it (:meth:`NotebookKernel._enter_exec`)."""
        await self._sync(launch=True)
        await super()._enter_exec(busy_wait)

    async def _sync(self, *, launch: bool) -> None:
        """Join the registered kernel when it is not the one this object runs (another
        process started or restarted it). Never under the life lock (a start or stop in
        progress here is left alone)."""
        if self._life_lock.locked():
            return
        self._note_registered_death()
        entry = self.kernel_registry.live(self.notebook_path)
        if entry is None:
            return
        if self._backend is not None and not self._dead and self._epoch == entry.epoch:
            return
        async with self._life_lock:
            await self._stop(now=True)
            self._attach_only = not launch
            try:
                await self._start()
            except KernelError as err:
                if launch or err.code != ErrorCode.KERNEL_NOT_RUNNING:
                    raise
            finally:
                self._attach_only = False
            self._running_spec = entry.kernelspec

    def _note_registered_death(self) -> None:
        """A registered kernel this object never ran that died (killed from outside) is
        noted as this object's dead kernel: its entry still there with dead processes (then
        removed), or the ``.lost`` record its supervisor left; so the execution that
        replaces it says so (``kernel_restarted``, ``replaced_epoch``); the replacement of a
        kept kernel is kept too, with the same idle timeout."""
        if self._backend is not None or self._dead:
            return
        entry = self.kernel_registry.read(self.notebook_path)
        if entry is not None and entry.state in ("idle", "busy") and not entry.alive():
            self._dead, self._epoch = True, entry.epoch
            self._keep_like(entry.keep, entry.idle_timeout)
        elif (entry is None or self._lost_while_stopping(entry)) and (
            lost := self.kernel_registry.take_lost_record(self.notebook_path)
        ):
            self._dead, self._epoch = True, lost[0]  # its supervisor saw it die (and left)
            self._keep_like(lost[1], lost[2])
        elif entry is not None and entry.state in ("idle", "busy"):
            self.kernel_registry.take_lost(self.notebook_path)  # a later kernel runs: too old

    def _lost_while_stopping(self, entry: KernelEntry) -> bool:
        """Whether ``entry`` is ``stopping`` because its kernel died by itself: its
        supervisor notes the death (``.lost``, for its epoch) before it marks the entry
        ``stopping`` and removes it, so a command that comes in between still says the
        kernel it starts replaces that one."""
        if entry.state != "stopping":
            return False
        lost = self.kernel_registry.lost_record(self.notebook_path)
        return lost is not None and lost[0] == entry.epoch

    def _keep_if_lost(self, joined: KernelEntry) -> None:
        """A kernel this object ran (``joined``) that died by itself (its entry still there
        with dead processes, or the ``.lost`` record its supervisor left) is replaced by a
        kept kernel when it was kept, as :meth:`_note_registered_death` does for one it
        never ran."""
        if not joined.keep or self._keep:
            return
        entry = self.kernel_registry.read(self.notebook_path)
        if entry is not None and entry.epoch == joined.epoch:
            if entry.state in ("idle", "busy") and not entry.alive():
                self._keep_like(entry.keep, entry.idle_timeout)
            return
        # read, not taken: when this process ends before starting a replacement, the next
        # command must still find it (to say the kernel was replaced, and keep its successor)
        lost = self.kernel_registry.lost_record(self.notebook_path) if entry is None else None
        if lost is not None and lost[0] == joined.epoch:
            self._keep_like(lost[1], lost[2])

    def _keep_like(self, keep: bool, idle_timeout: float | None) -> None:
        """Keep the next kernel this object starts when the one it replaces was kept."""
        if keep and not self._keep:
            self._keep = True
            self._idle = idle_timeout if idle_timeout is not None else self._idle

    async def is_alive(self) -> bool:
        """Whether a kernel runs; joins the notebook's registered kernel first if this object
        is not running it (never starts one): so :meth:`interrupt` reaches it too."""
        await self._sync(launch=False)
        return await super().is_alive()

    async def restart(self) -> str:
        """Restart the shared kernel: stop it for every process (a new kernel, a new epoch).

        A cell another process runs on it is interrupted first, and the restart waits up to
        :data:`~jupyter_jcli.kernels.STOP_WAIT` s for that process to let the kernel go.

        Raises:
            KernelError: ``KERNEL_BUSY`` when it does not; the codes of
                :meth:`NotebookKernel.restart`.
        """
        await self._sync(launch=False)
        await self._require_switch()  # before another process's cell is interrupted
        entry = self.kernel_registry.live(self.notebook_path)
        if entry is not None:  # the new kernel is kept if the old one was
            self._keep = self._keep or entry.keep
            self._idle = entry.idle_timeout
        took = False
        if not self._exec_lock.held:
            if entry is not None and self._exec_lock.taken_elsewhere():
                self._record_stop(entry.epoch, "kernel_restarted")
                with contextlib.suppress(KernelError):
                    interrupt_registered(entry)
            await take_exec(self._exec_lock, self.kernel_registry, self.notebook_path, STOP_WAIT)
            took = True
        try:
            backend = self._backend
            if isinstance(backend, RegistryBackend):
                backend.stop_for_all = True
            return await super().restart()
        finally:
            if isinstance(backend, RegistryBackend):
                backend.stop_for_all = False  # the restart failed before it stopped it
            if took:
                self._exec_lock.release()
                self.kernel_registry.drop_if_unused(self.notebook_path)  # none started

    async def _after_request(self, backend: KernelBackend, *, alive: bool, settled: bool) -> bool:
        if (not alive or not settled) and isinstance(backend, RegistryBackend):
            if not alive and backend.entry is not None:  # as its supervisor notes it
                note_lost(self.kernel_registry, self.notebook_path, backend.entry.epoch)
            backend.stop_for_all = True  # it is killed for everyone: its state is gone
        return await super()._after_request(backend, alive=alive, settled=settled)


class RegistryKernelPool(KernelPool):
    """One :class:`RegistryKernel` per notebook, joined through the registry.

    Args:
        registry: the registry (default: :func:`~jupyter_jcli.kernels.registry_dir`'s).
        keep: kernels this pool starts outlive it (``j-cli kernel start``, ``--keep``);
            otherwise they are stopped when the pool shuts down. Joined kernels are never
            stopped by the pool's shutdown.
        idle_timeout: seconds a kernel the pool starts may stay idle (``None``:
            ``$JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT`` or one hour).
        busy_wait: seconds an execution waits for another process running cells on the
            kernel before ``KERNEL_BUSY`` (0: refused at once).
        startup_timeout: seconds a kernel start may take.
    """

    def __init__(
        self,
        *,
        registry: KernelRegistry | None = None,
        keep: bool = False,
        idle_timeout: float | None = None,
        busy_wait: float = 0.0,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    ) -> None:
        registry = registry if registry is not None else KernelRegistry()
        super().__init__(startup_timeout=startup_timeout, records=registry, locks=registry)
        self.registry = registry
        self.keep = keep
        self.busy_wait = busy_wait
        self.idle_timeout = resolve_idle_timeout(idle_timeout) if idle_timeout is not None else None

    def _new_kernel(self, path: Path) -> NotebookKernel:
        kernel = RegistryKernel(
            path,
            registry=self.registry,
            keep=self.keep,
            idle_timeout=self.idle_timeout,
            startup_timeout=self._startup_timeout,
        )
        kernel.process_wait = self.busy_wait
        return kernel

    def get(self, notebook_path: str | os.PathLike[str]) -> NotebookKernel | None:
        """The notebook's kernel object; created (not started) when the registry has a live
        kernel for the notebook, so reads and inspections find a kernel another process
        started."""
        kernel = super().get(notebook_path)
        if kernel is not None:
            return kernel
        entry = self.registry.live(Path(notebook_path).resolve())
        if entry is None:
            return None
        return self.kernel(notebook_path, kernelspec_name=entry.kernelspec)
