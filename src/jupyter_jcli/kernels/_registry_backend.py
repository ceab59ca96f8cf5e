"""The backend of a kernel shared through the registry: join the notebook's registered
kernel through its connection file, or start one through a supervisor.

See :mod:`jupyter_jcli.kernels._registry_kernel` for the kernel and pool built on it.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._busy import EXEC_POLL
from jupyter_jcli.kernels._channels import Channel
from jupyter_jcli.kernels._entry import own_pid
from jupyter_jcli.kernels._local import LocalBackend, mapped_errors
from jupyter_jcli.kernels._registry import KernelEntry, KernelRegistry, process_name
from jupyter_jcli.kernels._translate import parent_id
from jupyter_jcli.kernels._types import KernelOrigin

if TYPE_CHECKING:
    from jupyter_client.asynchronous.client import AsyncKernelClient

    from jupyter_jcli.kernels._flock import ExecLock

__all__ = ["RegistryBackend"]

_HEARTBEAT_TRIES = 5
_STATUS_GRACE = 0.5
"""Seconds after the first ``kernel_info`` reply at which a kernel that answered twice but
published no iopub status for them is taken as live (some kernels publish none for control
requests)."""
_STATUS_RETRY = 0.005
"""Seconds the join waits for the iopub status of its first ``kernel_info`` request once the
reply came, before it asks again (the status went before the subscription was live); the
wait doubles after each reply, up to :data:`_STATUS_RETRY_MAX`. A process that has just
created its ZeroMQ context (every exec) usually subscribes within a few ms."""
_STATUS_RETRY_MAX = 0.05
_POLL = 0.02
"""Seconds of one wait on a channel while joining."""
_SHELL_POLL = 0.1
"""Seconds between two checks that the kernel lives while :meth:`RegistryBackend.shell_free`
waits."""


class RegistryBackend(LocalBackend):
    """The notebook's registered kernel, joined through its connection file with
    ``jupyter_client``'s ``AsyncKernelClient``: the channels of a :class:`LocalBackend`
    (shell, iopub and control; stdin never offered), whose kernel another process runs.

    Args:
        registry: the registry.
        execution: the notebook's execution lock (this process's own: it may hold it), for
            :func:`~jupyter_jcli.kernels._supervisor.stop_if_unused`.
        keep: a kernel this backend starts outlives it (else it is stopped at shutdown).
        idle_timeout: seconds a kernel this backend starts may stay idle.
        attach_only: join a running kernel only; never start one (``KERNEL_NOT_RUNNING``).

    This process is recorded among the kernel's users while it is joined.
    """

    def __init__(
        self,
        registry: KernelRegistry,
        execution: ExecLock | None = None,
        *,
        keep: bool,
        idle_timeout: float,
        attach_only: bool = False,
    ) -> None:
        super().__init__()
        self._execution = execution
        self._registry_ = registry
        self._keep = keep
        self._idle = idle_timeout
        self._attach_only = attach_only
        self._entry: KernelEntry | None = None
        self.stop_on_shutdown = False
        """Whether :meth:`shutdown` stops the shared kernel, rather than only closing this
        process's connection to it: set for a kernel this backend started and does not
        keep, which is then stopped only when nobody else uses it (else it stays for them,
        and its supervisor stops it once they are done: :func:`~jupyter_jcli.kernels.
        _supervisor.stop_if_unused`; without ``execution``, stopped)."""
        self.stop_for_all = False
        """Whether :meth:`shutdown` stops the shared kernel for everyone, used or not (a
        restart; a kernel that died or would not settle)."""

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
        channel, which a kernel busy with a cell still serves). A kernel that goes away
        while this backend joins it (stopped by another process) is replaced, within
        ``startup_timeout`` s. A loss recorded before (``.lost``) is then told already (by
        the caller that noted it) or too old to tell: it is dropped.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` (``attach_only`` and none runs),
                ``KERNELSPEC_NOT_FOUND``, ``KERNEL_START_FAILED``.
        """
        self._registry_.take_lost(notebook_path)
        deadline = time.monotonic() + startup_timeout
        while True:
            try:
                await self._join(kernelspec_name, startup_timeout, notebook_path)
                return
            except (KernelError, OSError) as err:  # OSError: its connection file went
                if not self._join_lost(err) or time.monotonic() >= deadline:
                    raise
            await anyio.sleep(EXEC_POLL)

    async def _join(
        self, kernelspec_name: str, startup_timeout: float, notebook_path: Path
    ) -> None:
        self._entry = None  # a retry: not the last attempt's kernel
        entry = self._registry_.live(notebook_path)
        started = False
        if entry is None:
            if self._attach_only:
                raise KernelError(
                    ErrorCode.KERNEL_NOT_RUNNING,
                    "no live kernel for this notebook",
                    {"notebook_path": str(notebook_path)},
                )
            from jupyter_jcli.kernels._supervisor import start_registered

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
            self._kc = self._connect(entry, details)
            await self._heartbeat(self._kc, startup_timeout, details)
        except BaseException:
            await self.shutdown(now=True, timeout=1.0)
            raise
        self._registry_.touch_user(notebook_path, entry.epoch, process_name(), present=True)

    def _join_lost(self, err: Exception) -> bool:
        """Whether ``err`` ended a join of another process's kernel that is gone or being
        stopped now (so joining again finds, or starts, another)."""
        joined = self._entry
        if isinstance(err, KernelError) and err.code != ErrorCode.KERNEL_START_FAILED:
            return False
        if joined is None or joined.owner_pid == own_pid():
            return False  # a kernel this process started did not answer
        current = self._registry_.read(Path(joined.notebook_path))
        return current is None or current.epoch != joined.epoch or not current.joinable()

    @staticmethod
    def _connect(entry: KernelEntry, details: Mapping[str, Any]) -> AsyncKernelClient:
        import zmq
        from jupyter_client.asynchronous.client import AsyncKernelClient

        class JoiningClient(AsyncKernelClient):
            def _ip_default(self) -> str:
                # the connection file names the address; ``load_connection_info`` evaluates
                # this default anyway, and the library's own (the machine's interfaces,
                # through psutil) costs more than the rest of the join
                return "127.0.0.1"

        client: AsyncKernelClient | None = None
        try:
            if entry.connection_file is None:
                raise ValueError("the registry entry names no connection file")
            client = JoiningClient()
            client.load_connection_file(entry.connection_file)
            client.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=True)
        except (ValueError, KeyError, TypeError, OSError, zmq.ZMQError) as exc:
            if client is not None:
                client.stop_channels()  # the channels opened before the failure
            reason = f"{type(exc).__name__}: {exc}"
            raise KernelError(
                ErrorCode.KERNEL_START_FAILED,
                "the notebook's registered kernel cannot be joined",
                {**details, "reason": reason},
            ) from exc
        return client

    async def _heartbeat(
        self, client: AsyncKernelClient, timeout: float, details: dict[str, str]
    ) -> None:
        """``kernel_info`` over control until an iopub status of one of these requests
        arrives, so this client's iopub subscription is live before the first execution.

        ZeroMQ's slow joiner: a status published before the subscription took is lost, so a
        request whose reply came without its status within :data:`_STATUS_RETRY` s (doubling
        after each reply, up to :data:`_STATUS_RETRY_MAX`) is followed by another one, and the
        status of any of them ends the join. A kernel that publishes no status for control
        requests is taken as live once it answered twice and :data:`_STATUS_GRACE` s passed
        since its first reply. A kernel that does not reply is
        asked again after each try (``timeout`` / :data:`_HEARTBEAT_TRIES`, at least 0.5 s)
        while its process lives.

        Raises:
            KernelError: ``KERNEL_START_FAILED`` with no reply within ``timeout`` s or once
                the kernel is no longer the notebook's running one; ``KERNEL_NOT_RUNNING`` for
                a channel that failed.
        """
        deadline = time.monotonic() + timeout
        per_try = max(timeout / _HEARTBEAT_TRIES, 0.5)
        asked: set[object] = set()
        replies = 0
        first_reply: float | None = None
        next_ask, awaiting_reply = time.monotonic(), False
        while (now := time.monotonic()) < deadline:
            if now >= next_ask:
                if awaiting_reply and not await self.is_alive():
                    break  # a whole try without a reply, and its process is gone
                with mapped_errors(
                    ErrorCode.KERNEL_NOT_RUNNING, "asking the kernel for kernel_info"
                ):
                    asked.add(_kernel_info(client, "control"))
                next_ask, awaiting_reply = now + per_try, True
            reply = await self._receive("control", _POLL) if awaiting_reply else None
            if reply is not None and parent_id(reply) in asked:
                replies += 1
                first_reply = time.monotonic() if first_reply is None else first_reply
                retry = min(_STATUS_RETRY * 2 ** (replies - 1), _STATUS_RETRY_MAX)
                next_ask, awaiting_reply = time.monotonic() + retry, False
            wait = _POLL if awaiting_reply else min(_POLL, max(next_ask - time.monotonic(), 0.001))
            status = await self._receive("iopub", wait)
            if status is not None and parent_id(status) in asked:
                return
            answered_long = first_reply is not None and now - first_reply >= _STATUS_GRACE
            if replies >= 2 and answered_long:
                return
        raise KernelError(
            ErrorCode.KERNEL_START_FAILED,
            "the notebook's registered kernel did not answer",
            {**details, "reason": f"no kernel_info reply within {timeout:g} s"},
        )

    async def shell_free(self, timeout: float) -> bool:
        """Whether the kernel's shell channel serves a request within ``timeout`` s (a
        ``kernel_info`` request: it runs no code). The shell serves one request at a time, so
        a kernel still running another client's code answers only once that code ended;
        ``True`` as well when the kernel is gone (nothing runs on it)."""
        client = self._client()
        msg_id = _kernel_info(client, "shell")
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            reply = await self._receive("shell", min(left, _SHELL_POLL))
            if reply is not None and parent_id(reply) == msg_id:
                return True
            if reply is None and not await self.is_alive():
                return True
        return False

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
        from jupyter_jcli.kernels._busy import interrupt_registered

        interrupt_registered(self._entry)

    async def shutdown(self, *, now: bool, timeout: float) -> None:
        """Close this process's channels; stop the shared kernel too when
        :attr:`stop_on_shutdown`. Never raises."""
        entry = self._entry
        await self.close_channels()
        if entry is None:
            return
        path = Path(entry.notebook_path)
        try:
            self._registry_.touch_user(path, entry.epoch, process_name(), present=False)
            from jupyter_jcli.kernels._supervisor import stop_if_unused, stop_registered

            if self.stop_on_shutdown and not self.stop_for_all and self._execution is not None:
                with contextlib.suppress(KernelError):
                    self.stop_on_shutdown = stop_if_unused(
                        self._registry_, path, entry.epoch, execution=self._execution
                    )
            if self.stop_on_shutdown or self.stop_for_all:
                with anyio.CancelScope(shield=True):
                    await stop_registered(self._registry_, path, epoch=entry.epoch)
        except KernelError:
            pass  # a locked entry: the supervisor still stops the kernel when idle


def _kernel_info(client: AsyncKernelClient, channel: Channel) -> str:
    """Send a ``kernel_info_request`` on ``channel`` (``shell`` or ``control``); its
    ``msg_id``; a failed send is ``KERNEL_NOT_RUNNING``."""
    msg = client.session.msg("kernel_info_request")
    target = client.control_channel if channel == "control" else client.shell_channel
    with mapped_errors(ErrorCode.KERNEL_NOT_RUNNING, "asking the kernel for kernel_info"):
        target.send(msg)
    return str(msg["header"]["msg_id"])
