"""Kernels shared through the registry: one kernel per notebook for every process of ours.

- :class:`SharedBackend`: a backend that joins the notebook's registered kernel through its
  connection file (``jupyter_client``'s async client), starting one through a supervisor
  (:func:`~jupyter_jcli.kernels._supervisor.start_registered`) when none runs. Its
  ``origin`` names who started the kernel and carries the recorded ``epoch``, so every
  process judges freshness against the same epoch and the registry's run log (``attached``
  stays ``False``: the kernel's history is known).
- :class:`SharedNotebookKernel`: a :class:`~jupyter_jcli.kernels.NotebookKernel` whose hold
  also takes the notebook's cross-process execution lock (two processes never execute at
  once on one kernel: the second gets ``KERNEL_BUSY``), that follows the registry (a kernel
  restarted or started by another process is joined; one that died is seen dead) and that
  really restarts the shared kernel on :meth:`restart`.
- :class:`SharedKernelPool`: a :class:`~jupyter_jcli.kernels.KernelPool` of those; ``keep``
  decides whether the kernels it starts outlive it (``j-cli kernel start``, ``--keep``) or
  stop when it shuts down (a kernel started for one command, or for a ``jupyter-mcp``
  session). Kernels it only joined are left running either way.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._config import (
    DEFAULT_BUSY_WAIT,
    DEFAULT_KERNELSPEC,
    DEFAULT_STARTUP_TIMEOUT,
    STOP_WAIT,
)
from jupyter_jcli.kernels._kernel import NotebookKernel
from jupyter_jcli.kernels._local import LocalBackend
from jupyter_jcli.kernels._pool import KernelPool
from jupyter_jcli.kernels._registry import (
    ExecLock,
    KernelEntry,
    KernelRegistry,
    process_name,
)
from jupyter_jcli.kernels._registry import idle_timeout as resolve_idle_timeout
from jupyter_jcli.kernels._supervisor import (
    interrupt_registered,
    start_registered,
    stop_registered,
)
from jupyter_jcli.kernels._types import (
    ExecutionResult,
    KernelOrigin,
    Output,
    OutputCallback,
)

if TYPE_CHECKING:
    from jupyter_jcli.kernels._backend import KernelBackend
    from jupyter_jcli.kernels._run import RunOutcome

__all__ = ["SharedBackend", "SharedKernelPool", "SharedNotebookKernel"]

_EXEC_POLL = 0.05
_HEARTBEAT_TRIES = 5


class SharedBackend(LocalBackend):
    """The notebook's registered kernel, joined through its connection file.

    Args:
        registry: the registry.
        keep: a kernel this backend starts outlives it (else it is stopped at shutdown).
        idle_timeout: seconds a kernel this backend starts may stay idle.
        attach_only: join a running kernel only; never start one (``KERNEL_NOT_RUNNING``).
    """

    def __init__(
        self,
        registry: KernelRegistry,
        *,
        keep: bool,
        idle_timeout: float,
        attach_only: bool = False,
    ) -> None:
        super().__init__()
        self._registry_ = registry
        self._keep = keep
        self._idle = idle_timeout
        self._attach_only = attach_only
        self._entry: KernelEntry | None = None
        self.stop_on_shutdown = False
        """Whether :meth:`shutdown` stops the shared kernel (it does for a kernel this
        backend started and does not keep, and when told to: a restart, a kill), rather
        than only closing this process's connection to it."""

    @property
    def entry(self) -> KernelEntry | None:
        """The registry entry of the joined kernel."""
        return self._entry

    @property
    def pid(self) -> int | None:
        return self._entry.pid if self._entry is not None else None

    @property
    def origin(self) -> KernelOrigin:
        entry = self._entry
        if entry is None:
            return KernelOrigin()
        return KernelOrigin(
            started_by=entry.started_by,
            kernel_id=entry.kernel_id,
            server_url=entry.server_url,
            epoch=entry.epoch,
        )

    async def start(
        self, *, kernelspec_name: str, cwd: Path, startup_timeout: float, notebook_path: Path
    ) -> None:
        """Join the notebook's registered kernel, starting one (``kernelspec_name``, in
        ``cwd``) when none runs, and check it answers (``kernel_info`` on the control
        channel, which a kernel busy with a cell still serves).

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` (``attach_only`` and none runs),
                ``KERNELSPEC_NOT_FOUND``, ``KERNEL_START_FAILED``.
        """
        from jupyter_client.asynchronous.client import AsyncKernelClient

        entry = self._registry_.live(notebook_path)
        started = False
        if entry is None:
            if self._attach_only:
                raise KernelError(
                    ErrorCode.KERNEL_NOT_RUNNING,
                    "no live kernel for this notebook",
                    {"notebook_path": str(notebook_path)},
                )
            entry, started = await start_registered(
                self._registry_,
                notebook_path,
                kernelspec=kernelspec_name,
                keep=self._keep,
                idle_timeout=self._idle,
                startup_timeout=startup_timeout,
            )
        self._entry = entry
        self.stop_on_shutdown = started and not self._keep
        details = {"notebook_path": str(notebook_path), "epoch": entry.epoch}
        try:
            kc = AsyncKernelClient()
            assert entry.connection_file is not None
            kc.load_connection_file(entry.connection_file)
            kc.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=True)
            self._kc = kc
            await self._heartbeat(kc, startup_timeout, details)
        except BaseException:
            await self.shutdown(now=True, timeout=1.0)
            raise
        self._registry_.touch_user(notebook_path, entry.epoch, process_name(), present=True)

    async def _heartbeat(self, kc: object, timeout: float, details: dict[str, str]) -> None:
        """``kernel_info`` over control until its reply arrives and its iopub status does
        too (so this client's iopub subscription is live before the first execution; a
        kernel that publishes no status for control requests passes on its second reply)."""
        from jupyter_client.asynchronous.client import AsyncKernelClient

        assert isinstance(kc, AsyncKernelClient)
        deadline = time.monotonic() + timeout
        per_try = max(timeout / _HEARTBEAT_TRIES, 0.5)
        answered = 0
        while time.monotonic() < deadline:
            msg = kc.session.msg("kernel_info_request")
            kc.control_channel.send(msg)
            msg_id = msg["header"]["msg_id"]
            replied = seen = False
            with anyio.move_on_after(per_try):
                while not (replied and seen):
                    if not replied:
                        with contextlib.suppress(Exception):
                            reply = await kc.get_control_msg(timeout=0.05)
                            replied = reply.get("parent_header", {}).get("msg_id") == msg_id
                    with contextlib.suppress(Exception):
                        status = await kc.get_iopub_msg(timeout=0.05)
                        seen = seen or status.get("parent_header", {}).get("msg_id") == msg_id
            answered += replied
            if (replied and seen) or answered >= 2:  # a kernel that publishes no status for
                return  # control requests still answered twice: it is alive
            if not await self.is_alive():
                break
        raise KernelError(
            ErrorCode.KERNEL_START_FAILED,
            "the notebook's registered kernel did not answer",
            {**details, "reason": f"no kernel_info reply within {timeout:g} s"},
        )

    async def is_alive(self) -> bool:
        """Whether the joined kernel still runs and is still the notebook's registered one."""
        entry = self._entry
        if entry is None or self._kc is None:
            return False
        current = self._registry_.read(Path(entry.notebook_path))
        if current is None or current.epoch != entry.epoch or current.state == "stopping":
            return False
        return current.alive()

    async def interrupt(self) -> None:
        """Interrupt the kernel through its supervisor (as its kernelspec says).

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when no kernel is joined or it is gone.
        """
        if self._entry is None:
            raise KernelError(ErrorCode.KERNEL_NOT_RUNNING, "no kernel is running to interrupt")
        interrupt_registered(self._entry)

    async def shutdown(self, *, now: bool, timeout: float) -> None:
        """Close this process's channels; stop the shared kernel too when
        :attr:`stop_on_shutdown`. Never raises."""
        entry = self._entry
        await super().shutdown(now=now, timeout=timeout)
        if entry is None:
            return
        path = Path(entry.notebook_path)
        with anyio.CancelScope(shield=True):
            try:
                self._registry_.touch_user(path, entry.epoch, process_name(), present=False)
                if self.stop_on_shutdown:
                    await stop_registered(self._registry_, path, epoch=entry.epoch)
            except KernelError:
                pass  # a locked entry: the supervisor still stops the kernel when idle


class SharedNotebookKernel(NotebookKernel):
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
        )
        self.shared_registry = registry
        self._keep = keep
        self._idle = idle_timeout
        self._attach_only = False
        self._exec = ExecLock(registry.path(self.notebook_path, ".exec"))
        self._exec_task: int | None = None
        self.listeners: list[OutputCallback] = []
        """Also given every output of every execution, as it arrives (a front end's live
        view of a run: ``j-cli run`` on a terminal)."""

    def _new_backend(self) -> KernelBackend:
        return SharedBackend(
            self.shared_registry,
            keep=self._keep,
            idle_timeout=resolve_idle_timeout(self._idle),
            attach_only=self._attach_only,
        )

    @asynccontextmanager
    async def hold(self, *, busy_wait: float = DEFAULT_BUSY_WAIT) -> AsyncIterator[None]:
        """Hold the kernel in this process and across processes (the execution lock).

        Raises:
            KernelError: ``KERNEL_BUSY`` (details ``notebook_path``, ``running_cell``,
                ``busy_by``: who holds it, ``busy_wait_s``).
        """
        me = anyio.get_current_task().id
        if self._exec_task == me:
            yield
            return
        async with super().hold(busy_wait=busy_wait):
            await self._take_exec(busy_wait)
            self._exec_task = me
            try:
                await self._sync(launch=True)
                yield
            finally:
                self._exec_task = None
                epoch = self._epoch
                with anyio.CancelScope(shield=True), contextlib.suppress(KernelError):
                    if epoch is not None:
                        self.shared_registry.set_busy(self.notebook_path, epoch, None)
                self._exec.release()

    async def _take_exec(self, busy_wait: float) -> None:
        deadline = time.monotonic() + max(busy_wait, 0.0)
        while not self._exec.try_acquire():
            if time.monotonic() >= deadline:
                entry = self.shared_registry.read(self.notebook_path)
                busy = (entry.busy if entry is not None else None) or {}
                raise KernelError(
                    ErrorCode.KERNEL_BUSY,
                    "another process is running cells on this notebook's kernel; wait for "
                    "it, or interrupt it (j-cli kernel interrupt)",
                    {
                        "notebook_path": str(self.notebook_path),
                        "running_cell": busy.get("cell"),
                        "busy_by": busy.get("who"),
                        "busy_wait_s": busy_wait,
                    },
                )
            await anyio.sleep(_EXEC_POLL)

    async def _sync(self, *, launch: bool) -> None:
        """Join the registered kernel when it is not the one this object runs (another
        process started or restarted it). Never under the life lock (a start or stop in
        progress here is left alone)."""
        if self._life_lock.locked():
            return
        entry = self.shared_registry.live(self.notebook_path)
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

    async def is_alive(self) -> bool:
        """Whether a kernel runs; joins the notebook's registered kernel first if this object
        is not running it (never starts one)."""
        await self._sync(launch=False)
        return await super().is_alive()

    async def execute(
        self,
        code: str,
        *,
        cell_key: str | None = None,
        timeout: float | None = None,
        on_output: OutputCallback | None = None,
        busy_wait: float = DEFAULT_BUSY_WAIT,
    ) -> ExecutionResult:
        """:meth:`NotebookKernel.execute`, its outputs also given to :attr:`listeners`."""
        listeners = [*self.listeners, *([on_output] if on_output is not None else [])]

        async def each(output: Output) -> None:
            for listener in listeners:
                result = listener(output)
                if result is not None:
                    await result

        return await super().execute(
            code,
            cell_key=cell_key,
            timeout=timeout,
            on_output=each if listeners else None,
            busy_wait=busy_wait,
        )

    async def _request(self, backend: KernelBackend, code: str, **kwargs: Any) -> RunOutcome:
        """Record the running cell in the entry (``busy``: who and which cell), then run."""
        if self._epoch is not None:
            busy = {"who": process_name(), "cell": self._hold.running_cell, "since": time.time()}
            with contextlib.suppress(KernelError):
                self.shared_registry.set_busy(self.notebook_path, self._epoch, busy)
        return await super()._request(backend, code, **kwargs)

    async def restart(self) -> str:
        """Restart the shared kernel: stop it for every process (a new kernel, a new epoch).

        A cell another process runs on it is interrupted first, and the restart waits up to
        :data:`~jupyter_jcli.kernels.STOP_WAIT` s for that process to let the kernel go.

        Raises:
            KernelError: ``KERNEL_BUSY`` when it does not; the codes of
                :meth:`NotebookKernel.restart`.
        """
        await self._sync(launch=False)
        entry = self.shared_registry.live(self.notebook_path)
        if entry is not None:  # the new kernel is kept if the old one was
            self._keep = self._keep or entry.keep
            self._idle = entry.idle_timeout
        took = False
        if not self._exec.held:
            if entry is not None and self._exec.taken_elsewhere():
                with contextlib.suppress(KernelError):
                    interrupt_registered(entry)
            await self._take_exec(STOP_WAIT)
            took = True
        try:
            backend = self._backend
            if isinstance(backend, SharedBackend):
                backend.stop_on_shutdown = True
            return await super().restart()
        finally:
            if took:
                self._exec.release()

    async def _after_run(self, backend: KernelBackend, *, alive: bool, settled: bool) -> bool:
        if (not alive or not settled) and isinstance(backend, SharedBackend):
            backend.stop_on_shutdown = True  # it is killed for everyone: its state is gone
        return await super()._after_run(backend, alive=alive, settled=settled)


class SharedKernelPool(KernelPool):
    """One :class:`SharedNotebookKernel` per notebook, joined through the registry.

    Args:
        registry: the registry (default: :func:`~jupyter_jcli.kernels.registry_dir`'s).
        keep: kernels this pool starts outlive it (``j-cli kernel start``, ``--keep``);
            otherwise they are stopped when the pool shuts down. Joined kernels are never
            stopped by the pool's shutdown.
        idle_timeout: seconds a kernel the pool starts may stay idle (``None``:
            ``$JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT`` or one hour).
        startup_timeout: seconds a kernel start may take.
    """

    def __init__(
        self,
        *,
        registry: KernelRegistry | None = None,
        keep: bool = False,
        idle_timeout: float | None = None,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
    ) -> None:
        super().__init__(startup_timeout=startup_timeout)
        self.registry = registry if registry is not None else KernelRegistry()
        self.keep = keep
        self.idle_timeout = resolve_idle_timeout(idle_timeout) if idle_timeout is not None else None

    def _new_kernel(self, path: Path) -> NotebookKernel:
        return SharedNotebookKernel(
            path,
            registry=self.registry,
            keep=self.keep,
            idle_timeout=self.idle_timeout,
            startup_timeout=self._startup_timeout,
        )

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
