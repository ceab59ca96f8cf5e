"""The live-kernel operations as a long-lived workbench offers them (``jupyter-mcp``).

``list``, ``start`` and ``stop`` are :mod:`~jupyter_jcli.workbench._live_kernels`'s, on the
kernels the workbench's configuration sees (the local registry, or
:attr:`Workbench.server <jupyter_jcli.workbench.Workbench.server>`'s notebook sessions), with
two things a command line does not need:

- **The workbench's own kernels follow a stop.** The workbench's pool may hold a notebook's
  kernel (one it started for a run, or a kept one it joined). A stop is one for everyone
  (:func:`~jupyter_jcli.workbench.stop_live_kernels`: a cell running on it, this workbench's
  included, ends ``interrupted`` by ``kernel_shutdown`` and its outputs are saved), and then
  the pool lets that kernel go, so the workbench's next execution on the notebook starts a
  new kernel and says so (``kernel_started``; not ``kernel_restarted``, which is for a kernel
  that died) instead of finding a dead one.
- **Confinement.** ``within`` (the trusted roots of an MCP call) bounds which local kernels a
  listing shows and ``stop`` of every kernel stops: those of notebooks under a root. A
  server's sessions are every session its token reaches (the server confines them, as it does
  a server store's paths).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.workbench._live_kernels import (
    kernel_notebook_path,
    list_live_kernels,
    start_live_kernel,
    stop_live_kernels,
)

if TYPE_CHECKING:
    from jupyter_jcli.kernels import KernelEntry, ServerSession
    from jupyter_jcli.workbench._session import Workbench

__all__ = ["list_workbench_kernels", "start_workbench_kernel", "stop_workbench_kernels"]


def _within(kernel: KernelEntry | ServerSession, roots: Sequence[Path]) -> bool:
    """Whether ``kernel`` is one the caller may see: a server's session, or a local kernel
    whose notebook is under one of ``roots`` (none given: every kernel)."""
    from jupyter_jcli.kernels import KernelEntry

    if not roots or not isinstance(kernel, KernelEntry):
        return True
    notebook = Path(kernel.notebook_path)
    return any(notebook.is_relative_to(root) for root in roots)


async def list_workbench_kernels(
    workbench: Workbench, *, within: Sequence[Path] = ()
) -> list[KernelEntry | ServerSession]:
    """The live kernels the workbench's configuration sees (the registry's, or its server's
    notebook sessions), the local ones only under ``within``'s roots.

    Raises:
        KernelError: a server's ``SERVER_*`` codes.
    """
    kernels = await list_live_kernels(workbench.server)
    return [kernel for kernel in kernels if _within(kernel, within)]


async def start_workbench_kernel(
    workbench: Workbench,
    file: str | Path,
    *,
    kernel_name: str | None = None,
    idle_timeout: float | None = None,
) -> tuple[KernelEntry | ServerSession, bool]:
    """:func:`~jupyter_jcli.workbench.start_live_kernel` on the workbench's server (if any):
    the notebook's kernel, kept after the workbench ends; nothing when one already runs
    (its ``keep`` says whether it outlives its starter: a kernel this workbench started for
    a run stays the workbench's). The workbench's next execution joins it.

    Raises:
        The codes of :func:`~jupyter_jcli.workbench.start_live_kernel`.
    """
    return await start_live_kernel(
        file, kernel_name=kernel_name, idle_timeout=idle_timeout, server=workbench.server
    )


async def stop_workbench_kernels(
    workbench: Workbench, file: str | Path | None, *, within: Sequence[Path] = ()
) -> list[KernelEntry | ServerSession]:
    """Stop the notebook's kernel for everyone (``file`` ``None``: every kernel
    :func:`list_workbench_kernels` shows), then let the workbench's pool drop the kernels
    stopped (see the module docstring). Returns the kernels stopped.

    Raises:
        KernelError: ``KERNEL_NOT_RUNNING`` when ``file``'s notebook has none; a server's
            ``SERVER_*`` codes.
    """
    server = workbench.server
    chosen: list[str | Path] = [file] if file is not None else []
    if file is None:
        listed = await list_workbench_kernels(workbench, within=within)
        chosen = [Path(kernel.notebook_path) for kernel in listed]
    stopped: list[KernelEntry | ServerSession] = []
    for each in chosen:
        try:
            stopped.extend(await stop_live_kernels(each, server=server))
        except KernelError as err:  # stopped by someone else since the listing
            if file is not None or err.code != ErrorCode.KERNEL_NOT_RUNNING:
                raise
    for kernel in stopped:
        await _let_go(workbench, kernel)
    return stopped


async def _let_go(workbench: Workbench, stopped: KernelEntry | ServerSession) -> None:
    """Drop the pool's handle on the kernel ``stopped`` was (a local kernel: only when the
    pool still runs that epoch, not one a later call started since)."""
    from jupyter_jcli.kernels import KernelEntry

    kernel = workbench.pool.get(kernel_notebook_path(stopped.notebook_path))
    if kernel is None:
        return
    if isinstance(stopped, KernelEntry) and kernel.epoch not in (None, stopped.epoch):
        return
    await kernel.shutdown(now=True)
