"""The backend of a kernel shared through the registry: join the notebook's registered
kernel through its connection file, or start one through a supervisor.

See :mod:`jupyter_jcli.kernels._shared` for the kernel and pool built on it.
"""

from __future__ import annotations

import contextlib
import functools
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._local import LocalBackend
from jupyter_jcli.kernels._registry import KernelEntry, KernelRegistry, process_name
from jupyter_jcli.kernels._supervisor import (
    interrupt_registered,
    start_registered,
    stop_registered,
)
from jupyter_jcli.kernels._types import KernelOrigin

if TYPE_CHECKING:
    from jupyter_client.asynchronous.client import AsyncKernelClient

__all__ = ["SharedBackend"]

_HEARTBEAT_TRIES = 5


@functools.cache
def _joining_client_class() -> type[AsyncKernelClient]:
    """``jupyter_client``'s async client, reading a connection file that names its address
    without first computing a default one: ``load_connection_info`` evaluates the default
    address eagerly, which for TCP lists this machine's interfaces (importing ``psutil``),
    a cost on every join that the answer throws away."""
    from jupyter_client.asynchronous.client import AsyncKernelClient

    class JoiningClient(AsyncKernelClient):
        _file_ip: str | None = None

        def load_connection_info(self, info: Any) -> None:
            ip = info.get("ip")
            self._file_ip = ip if isinstance(ip, str) and ip else None
            super().load_connection_info(info)

        def _ip_default(self) -> str:
            return self._file_ip if self._file_ip is not None else super()._ip_default()

    return JoiningClient


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
            assert entry.connection_file is not None
            kc = _joining_client_class()()
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
