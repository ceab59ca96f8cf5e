"""The transport-neutral kernel backend interface.

A backend is one kernel reached over one transport: the local backend
(:class:`~jupyter_jcli.kernels.LocalBackend`, ``jupyter_client`` over ZMQ) or a Jupyter Server
backend (REST to start and stop, a WebSocket for messages). Everything above it (the execution
loop, output translation, timeouts, locking, epochs) is shared and lives in
:class:`~jupyter_jcli.kernels.NotebookKernel`.

A backend object serves one kernel life: :meth:`KernelBackend.start` once, then
:meth:`KernelBackend.shutdown` once. A restart is a shutdown and a fresh backend object, so an
execution still waiting on the old kernel sees it end instead of waiting on a new kernel that
never received its request. :class:`~jupyter_jcli.kernels.NotebookKernel` stops its running
execution before it shuts a backend down; should a shutdown still overlap a receive, the
receive returns or raises ``KERNEL_NOT_RUNNING``, never a cancellation nobody asked for.

A backend whose kernel is shared with other clients (a Jupyter Server kernel, which
JupyterLab may show) may also implement :class:`InPlaceRestart`: then
:meth:`NotebookKernel.restart <jupyter_jcli.kernels.NotebookKernel.restart>` of a live kernel
restarts it in place (same kernel, new process, new epoch; the running execution is stopped
first) instead of a shutdown and a fresh backend, so every other client stays on it.

A backend that can tell which kernelspecs it could start implements
:class:`KernelspecCatalogue`, so a kernelspec can be checked before a live kernel is stopped
for it (:meth:`NotebookKernel.require_kernelspec
<jupyter_jcli.kernels.NotebookKernel.require_kernelspec>`).

A server backend's calls may also raise ``SERVER_UNREACHABLE``, ``SERVER_AUTH_FAILED``,
``SERVER_ERROR`` and (``start``) ``SERVER_PATH_OUTSIDE_ROOT``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from jupyter_jcli.kernels._types import KernelMessage, KernelOrigin

if TYPE_CHECKING:
    from jupyter_jcli.server import ServerConfig

__all__ = [
    "BackendFactory",
    "InPlaceRestart",
    "KernelBackend",
    "KernelspecCatalogue",
    "backend_factory",
]


@runtime_checkable
class KernelBackend(Protocol):
    """One kernel behind one transport. Every method is bounded by its arguments."""

    @property
    def pid(self) -> int | None:
        """The kernel process id when the kernel runs on this machine, else ``None``."""
        ...

    @property
    def origin(self) -> KernelOrigin:
        """Where the started kernel comes from (:class:`KernelOrigin`): a backend that joins a
        kernel it did not start (a server session, another process's kernel) says
        ``attached``; one that launched its own kernel returns the local default."""
        ...

    async def start(
        self, *, kernelspec_name: str, cwd: Path, startup_timeout: float, notebook_path: Path
    ) -> None:
        """Start the kernel (or join the notebook's running one) and wait until it answers
        ``kernel_info``.

        Args:
            kernelspec_name: the installed kernelspec to launch.
            cwd: the kernel's working directory.
            startup_timeout: seconds to wait for the kernel to be ready.
            notebook_path: the resolved notebook the kernel is for (a backend that can join a
                kernel already running for it, such as a Jupyter Server session, uses it).

        Raises:
            KernelError: ``KERNELSPEC_NOT_FOUND`` (details ``installed``: the kernelspec names
                available) or ``KERNEL_START_FAILED``.
        """
        ...

    async def is_alive(self) -> bool:
        """Whether the kernel is still running."""
        ...

    async def send_execute(
        self,
        code: str,
        *,
        silent: bool,
        store_history: bool,
        user_expressions: Mapping[str, str],
    ) -> str:
        """Send an ``execute_request`` with ``allow_stdin: false``; return its ``msg_id``.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when the backend is not started.
        """
        ...

    async def next_iopub(self, timeout: float) -> KernelMessage | None:
        """The next iopub message (any parent), or ``None`` after ``timeout`` seconds.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when the backend is not started or shut down.
        """
        ...

    async def next_shell_reply(self, timeout: float) -> KernelMessage | None:
        """The next shell reply (any parent), or ``None`` after ``timeout`` seconds.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when the backend is not started or shut down.
        """
        ...

    async def interrupt(self) -> None:
        """Interrupt the running code (SIGINT or ``interrupt_request``, per kernelspec)."""
        ...

    async def shutdown(self, *, now: bool, timeout: float) -> None:
        """Stop the kernel and release its resources; never raises. A receive in progress
        on another task returns or raises ``KERNEL_NOT_RUNNING`` (it is not cancelled).

        Args:
            now: kill at once instead of asking the kernel to shut down.
            timeout: seconds a graceful shutdown may take before the kernel is killed.
        """
        ...


@runtime_checkable
class InPlaceRestart(Protocol):
    """A backend that can restart its kernel without a new backend (see the module
    docstring)."""

    async def restart(self, *, timeout: float) -> None:
        """Restart the started kernel in place and wait (``timeout`` s) until it answers.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when not started; ``KERNEL_START_FAILED``
                when the new process does not answer in time (the kernel then counts as
                dead); a transport's own codes.
        """
        ...


@runtime_checkable
class KernelspecCatalogue(Protocol):
    """A backend that can say which kernelspecs a start could launch (see the module
    docstring)."""

    async def installed_kernelspecs(self) -> list[str] | None:
        """The kernelspec names a start could launch, sorted; ``None`` when this backend
        cannot tell before it starts (its start decides).

        Raises:
            KernelError: a transport's own codes (a server's ``SERVER_*``).
        """
        ...


BackendFactory = Callable[[], KernelBackend]
"""Makes a fresh, unstarted backend (one per kernel life)."""


def backend_factory(server: ServerConfig | None) -> BackendFactory:
    """The backend factory for ``server``: :class:`~jupyter_jcli.kernels.LocalBackend` for
    ``None`` (local kernels), else one :class:`~jupyter_jcli.kernels.ServerBackend` of that
    server per kernel life. Nothing is contacted until a kernel starts."""
    if server is None:
        from jupyter_jcli.kernels._local import LocalBackend

        return LocalBackend
    from jupyter_jcli.kernels._server import ServerBackend

    return functools.partial(ServerBackend, server)
