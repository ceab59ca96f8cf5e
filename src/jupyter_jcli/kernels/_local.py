"""The local backend: a kernel process on this machine through ``jupyter_client``.

``jupyter_client`` (and ``zmq``) are imported inside the functions that need them. Every call
into them goes through one error boundary, :func:`mapped_errors`: what the library, the
socket or the process raises leaves this module as a :class:`KernelError` chained ``from`` the
original, never as a bare ``zmq`` or ``jupyter_client`` exception.
"""

from __future__ import annotations

import logging
import os
import queue
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels._channels import Channel, ExecuteRequests
from jupyter_jcli.kernels._types import LOCAL_ORIGIN, KernelMessage, KernelOrigin

if TYPE_CHECKING:
    from jupyter_client.asynchronous.client import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager

__all__ = [
    "START_ATTEMPTS",
    "LocalBackend",
    "installed_kernelspecs",
    "launch",
    "mapped_errors",
    "require_kernelspec",
]

_log = logging.getLogger(__name__)


@contextmanager
def mapped_errors(
    code: ErrorCode,
    doing: str,
    details: Mapping[str, Any] | None = None,
    *,
    errors: tuple[type[BaseException], ...] | None = None,
    timeout: float | None = None,
) -> Iterator[None]:
    """The local backend's one error boundary: an error ``jupyter_client`` or ``zmq`` raises
    while ``doing`` becomes ``KernelError(code)`` from it, details plus ``reason``.

    By default the mapped errors are the ones those libraries raise for a kernel or channel
    that went away (``zmq.ZMQError``, ``OSError``, ``RuntimeError``); :class:`KernelError` and
    anything else pass unchanged. ``errors`` widens the set (a start runs the kernelspec's
    launcher, whose errors are not known in advance); ``timeout`` is the bound a
    ``TimeoutError`` names in the reason.
    """
    import zmq

    mapped = errors if errors is not None else (zmq.ZMQError, OSError, RuntimeError)
    try:
        yield
    except KernelError:
        raise
    except mapped as exc:
        if isinstance(exc, TimeoutError):
            reason = "timed out" if timeout is None else f"not ready within {timeout:g} s"
        else:
            reason = f"{type(exc).__name__}: {exc}"
        raise KernelError(
            code, f"{doing} failed: {reason}", {**(details or {}), "reason": reason}
        ) from exc


def installed_kernelspecs() -> list[str]:
    """Names of the kernelspecs ``jupyter_client`` finds on this machine, sorted."""
    from jupyter_client.kernelspec import KernelSpecManager

    return sorted(KernelSpecManager().find_kernel_specs())


def require_kernelspec(name: str, installed: list[str] | None = None) -> None:
    """Check that kernelspec ``name`` is among ``installed`` (default: this machine's).

    Raises:
        KernelError: ``KERNELSPEC_NOT_FOUND`` (details: ``kernelspec``, ``installed``).
    """
    installed = installed_kernelspecs() if installed is None else installed
    if name not in installed:
        raise KernelError(
            ErrorCode.KERNELSPEC_NOT_FOUND,
            f"kernelspec {name!r} is not installed here; installed: "
            f"{', '.join(installed) or '(none)'}",
            {"kernelspec": name, "installed": installed},
        )


def _encrypt_if_supported(km: AsyncKernelManager) -> None:
    """Let ``jupyter_client`` (>= 8.10) provision CurveZMQ keys when the kernelspec supports
    them, so kernel traffic on the loopback TCP ports is encrypted."""
    import zmq

    if km.has_trait("transport_encryption") and zmq.has("curve"):
        km.transport_encryption = "auto"


def _kernel_stdout() -> int:
    """Where the kernel process's own stdout goes: our stderr (fd 2), never our stdout, which
    may carry a protocol (MCP JSON-RPC); ``DEVNULL`` when fd 2 is closed."""
    try:
        os.fstat(2)
    except OSError:
        return subprocess.DEVNULL
    return 2


START_ATTEMPTS = 3
"""How many times :func:`launch` starts a kernel that exits before it answers."""


async def launch(
    kernelspec_name: str,
    *,
    cwd: Path,
    startup_timeout: float,
    stdout: int | IO[bytes] | None = None,
) -> tuple[AsyncKernelManager, AsyncKernelClient]:
    """Start a kernel of ``kernelspec_name`` in ``cwd`` and wait until it answers
    ``kernel_info``, all within ``startup_timeout`` s (:meth:`LocalBackend.start`, in a
    command or in the registry's supervisor).

    A kernel process that exits before it answers is started again, with new ports and a new
    connection file, up to :data:`START_ATTEMPTS` times in all. ``jupyter_client`` picks each
    port by binding port 0 and releasing it, so another process's connection can take the
    port before the kernel binds it, and the kernel then exits with "Address already in use"
    (jupyter/jupyter_client#487); under load, with many kernels and clients, that happens.

    Returns the manager and a client whose shell, iopub and control channels are started;
    stdin and heartbeat are never opened.

    Raises:
        TimeoutError: not ready within ``startup_timeout`` s.
        Exception: what ``jupyter_client`` or the kernelspec's launcher raised for the last
            attempt (``RuntimeError`` "Kernel died before replying to kernel_info" when it
            exited). Nothing of a failed attempt is left running.
    """
    from jupyter_client.manager import AsyncKernelManager

    with anyio.fail_after(startup_timeout):
        attempt = 1
        while True:
            km = AsyncKernelManager(kernel_name=kernelspec_name)
            _encrypt_if_supported(km)
            kc: AsyncKernelClient | None = None
            try:
                await km.start_kernel(cwd=str(cwd), stdout=stdout)
                kc = km.client()
                kc.start_channels(shell=True, iopub=True, stdin=False, hb=False, control=True)
                await kc.wait_for_ready(timeout=startup_timeout)
                return km, kc
            except BaseException as exc:
                launched = getattr(km.provisioner, "process", None) is not None
                with anyio.CancelScope(shield=True):
                    exited = launched and not await km.is_alive()
                    await _discard(km, kc)
                if attempt >= START_ATTEMPTS or not exited or not isinstance(exc, Exception):
                    raise
                _log.info("kernel %r exited at start (%s); starting it again", kernelspec_name, exc)
                attempt += 1


async def _discard(km: AsyncKernelManager, kc: AsyncKernelClient | None) -> None:
    """Stop a kernel whose start failed (bounded), removing its connection file."""
    if kc is not None:
        try:
            kc.stop_channels()
        except Exception:
            _log.debug("stop_channels failed", exc_info=True)
    with anyio.move_on_after(_DISCARD_TIMEOUT):
        try:
            await km.shutdown_kernel(now=True)
        except Exception:
            _log.debug("discarding a failed kernel start failed", exc_info=True)


_DISCARD_TIMEOUT = 5.0
RECEIVE_DRAIN = 2.0
"""Seconds a shutdown waits for receives in progress to return before it closes the channels
(each receive is bounded by its own timeout, at most a poll interval in the execution loop).
Closing a ``zmq.asyncio`` socket cancels the future a receive awaits: the receiving task would
get a bare ``CancelledError`` that no cancel scope asked for."""


class LocalBackend(ExecuteRequests):
    """A local kernel process (``AsyncKernelManager`` + ``AsyncKernelClient``).

    Implements :class:`~jupyter_jcli.kernels.KernelBackend`. The client opens the shell,
    iopub and control channels only: stdin is never offered, so ``input()`` fails at once.
    A shutdown never closes a channel under a receive in progress: every receive goes
    through :meth:`_receive`, which counts them; receives started after the shutdown began
    raise ``KERNEL_NOT_RUNNING``, those in progress are waited for (bounded).
    """

    def __init__(self) -> None:
        self._receiving = 0
        self._km: AsyncKernelManager | None = None
        self._kc: AsyncKernelClient | None = None

    @property
    def pid(self) -> int | None:
        """The kernel process id while started, else ``None``."""
        if self._km is None or self._km.provisioner is None:
            return None
        pid = getattr(self._km.provisioner, "pid", None)
        return pid if isinstance(pid, int) else None

    @property
    def origin(self) -> KernelOrigin:
        return LOCAL_ORIGIN

    @property
    def connection_file(self) -> str | None:
        """The started kernel's connection file."""
        return self._km.connection_file if self._km is not None else None

    async def installed_kernelspecs(self) -> list[str] | None:
        """:func:`installed_kernelspecs` (:class:`~jupyter_jcli.kernels.KernelspecCatalogue`)."""
        return await anyio.to_thread.run_sync(installed_kernelspecs)

    async def start(
        self, *, kernelspec_name: str, cwd: Path, startup_timeout: float, notebook_path: Path
    ) -> None:
        """Launch the kernel in ``cwd`` and wait (bounded) until it answers ``kernel_info``.

        Raises:
            KernelError: ``KERNELSPEC_NOT_FOUND`` (details: ``kernelspec``, ``installed``) or
                ``KERNEL_START_FAILED`` (details: ``kernelspec``, ``cwd``, ``reason``).
        """
        require_kernelspec(kernelspec_name)
        details = {"kernelspec": kernelspec_name, "cwd": str(cwd)}
        with mapped_errors(
            ErrorCode.KERNEL_START_FAILED,
            f"starting kernel {kernelspec_name!r}",
            details,
            errors=(Exception,),
            timeout=startup_timeout,
        ):
            self._km, self._kc = await launch(
                kernelspec_name, cwd=cwd, startup_timeout=startup_timeout, stdout=_kernel_stdout()
            )

    async def is_alive(self) -> bool:
        """Whether the kernel process is running.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when the process cannot be polled.
        """
        if self._km is None:
            return False
        with mapped_errors(ErrorCode.KERNEL_NOT_RUNNING, "checking the kernel process"):
            return bool(await self._km.is_alive())

    async def _send_execute_request(self, content: dict[str, Any]) -> str:
        kc = self._client()
        with mapped_errors(ErrorCode.KERNEL_NOT_RUNNING, "sending an execute_request"):
            return str(kc.execute(**content))

    async def next_iopub(self, timeout: float) -> KernelMessage | None:
        return await self._receive("iopub", timeout)

    async def next_shell_reply(self, timeout: float) -> KernelMessage | None:
        return await self._receive("shell", timeout)

    async def _receive(self, channel: Channel, timeout: float) -> KernelMessage | None:
        """The next message on ``channel`` or ``None`` after ``timeout`` s, counted among
        the receives in progress.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when the channel is closed or fails.
        """
        self._receiving += 1
        try:
            return await self._take(channel, timeout)
        finally:
            self._receiving -= 1

    async def _take(self, channel: Channel, timeout: float) -> KernelMessage | None:
        kc = self._client()
        get = {"iopub": kc.get_iopub_msg, "shell": kc.get_shell_msg, "control": kc.get_control_msg}
        doing = f"receiving from the {channel} channel"
        try:
            with mapped_errors(ErrorCode.KERNEL_NOT_RUNNING, doing):
                msg: dict[str, Any] = await get[channel](timeout=max(timeout, 0.0))
        except queue.Empty:
            return None
        return msg

    async def interrupt(self) -> None:
        """Interrupt the kernel as its kernelspec says (SIGINT for ipykernel).

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when there is no kernel process.
        """
        if self._km is None or not await self.is_alive():
            raise KernelError(ErrorCode.KERNEL_NOT_RUNNING, "no kernel is running to interrupt")
        with mapped_errors(ErrorCode.KERNEL_NOT_RUNNING, "interrupting the kernel"):
            await self._km.interrupt_kernel()

    async def shutdown(self, *, now: bool, timeout: float) -> None:
        """Stop channels (after the receives in progress returned, bounded), then the kernel
        (graceful up to ``timeout`` s, then killed)."""
        km, self._km = self._km, None
        with anyio.CancelScope(shield=True):
            await self.close_channels()
            if km is None:
                return
            graceful = False
            if not now:
                with anyio.move_on_after(timeout):
                    try:
                        await km.shutdown_kernel(now=False)
                        graceful = True
                    except Exception:
                        _log.debug("graceful kernel shutdown failed", exc_info=True)
            if not graceful:
                with anyio.move_on_after(max(timeout, 1.0)):
                    try:
                        await km.shutdown_kernel(now=True)
                    except Exception:
                        _log.debug("kernel kill failed", exc_info=True)

    async def close_channels(self) -> None:
        """Stop the client's channels, after the receives in progress returned (at most
        :data:`RECEIVE_DRAIN` s, shielded)."""
        kc, self._kc = self._kc, None
        if kc is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(RECEIVE_DRAIN):
                while self._receiving:
                    await anyio.sleep(0.01)
            try:
                kc.stop_channels()
            except Exception:  # a half-open channel must not keep the kernel alive
                _log.debug("stop_channels failed", exc_info=True)

    def _client(self) -> AsyncKernelClient:
        if self._kc is None:
            raise KernelError(ErrorCode.KERNEL_NOT_RUNNING, "the kernel is not started")
        return self._kc
