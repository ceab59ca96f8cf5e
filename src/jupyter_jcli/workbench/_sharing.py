"""The workbench on kernels shared through the registry (``j-cli`` commands, ``jupyter-mcp``).

:func:`shared_workbench` is the one way a command finds the notebook's live kernel or starts
one: a :class:`~jupyter_jcli.workbench.Workbench` on a
:class:`~jupyter_jcli.kernels.SharedKernelPool`. Its run logs are the registry's
(:class:`SharedRunLog`), so a cell that ran in one process is fresh in every other one on the
same kernel epoch, and a cell edited since is stale everywhere.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from jupyter_jcli.analysis import RunRecord, StateChange
from jupyter_jcli.kernels import (
    KernelPool,
    LockedKernelPool,
    ServerConfig,
    ServerLedger,
    SharedKernelPool,
)
from jupyter_jcli.workbench._run_log import RunLog
from jupyter_jcli.workbench._session import Workbench
from jupyter_jcli.workbench._shared_log import SharedRunLog

__all__ = ["ServerRunLog", "SharedRunLog", "run_log_for", "shared_workbench"]


class ServerRunLog(SharedRunLog):
    """The run log of a Jupyter Server kernel: its :class:`~jupyter_jcli.kernels.ServerLedger`
    entry when the notebook has one (a server session, found by every command), else this
    process's runs (a kernel gateway's kernel, or a backend that keeps no ledger: the kernel
    lives only as long as this process).

    Args:
        ledger: the server's ledger.
        notebook_path: the resolved notebook path.
    """

    def __init__(self, ledger: ServerLedger, notebook_path: Path) -> None:
        super().__init__(ledger, notebook_path)
        self._ledger = ledger

    def _kept(self) -> bool:
        return self._ledger.read(self._path) is not None

    def records(self) -> list[RunRecord]:
        """The ledger's records, else this process's."""
        return super().records() if self._kept() else RunLog.records(self)

    def changes(self) -> list[StateChange]:
        """The ledger's runs of code outside the cells, else this process's."""
        return super().changes() if self._kept() else RunLog.changes(self)

    def stamp(self) -> str:
        """As :meth:`SharedRunLog.stamp`, or this process's log version."""
        return super().stamp() if self._kept() else RunLog.stamp(self)


def run_log_for(
    pool: KernelPool, notebook_path: Path, server: ServerConfig | None = None
) -> RunLog:
    """The run log of a notebook's kernels in ``pool``: the registry's for a shared pool,
    the server's ledger for kernels on ``server``, else a log of this process's runs."""
    if isinstance(pool, SharedKernelPool):
        return SharedRunLog(pool.registry, notebook_path)
    if server is not None:
        return ServerRunLog(ServerLedger(server.url), notebook_path)
    return RunLog()


def shared_workbench(
    *,
    keep: bool = False,
    idle_timeout: float | None = None,
    busy_wait: float = 0.0,
    cache_dir: Path | None = None,
    server: ServerConfig | None = None,
) -> Workbench:
    """A workbench on the registry's kernels: it joins the notebook's live kernel when one
    runs, else starts one, which it stops at its shutdown unless ``keep``.

    With ``server`` the kernels are that Jupyter Server's instead (``Workbench(server=...)``):
    the server's sessions are then the place every process finds a notebook's kernel;
    ``keep`` leaves the notebook's session on the server
    (:class:`~jupyter_jcli.kernels.KeptServerBackend`: ``j-cli kernel list --server-url``
    shows it), and ``idle_timeout`` and ``busy_wait`` (settings of the local registry) do
    not apply.

    Args:
        keep: kernels it starts outlive it (until ``j-cli kernel stop`` or the idle timeout).
        idle_timeout: seconds a kernel it starts may stay idle (default one hour, or
            ``$JUPYTER_JCLI_KERNEL_IDLE_TIMEOUT``).
        busy_wait: seconds an execution waits while another process runs cells on the
            notebook's kernel, before ``KERNEL_BUSY`` (0: refused at once).
        cache_dir: as for :class:`~jupyter_jcli.workbench.Workbench`.
        server: the Jupyter Server to run kernels on (``None``: local registry kernels).

    Raises:
        UsageError: ``USAGE_ERROR`` for an idle timeout that is not a number > 0.
    """
    if server is not None and keep:
        from jupyter_jcli.kernels import KeptServerBackend  # the server's modules: only here

        ledger = ServerLedger(server.url)
        kept = LockedKernelPool(backend_factory=partial(KeptServerBackend, server), ledger=ledger)
        return Workbench(cache_dir=cache_dir, server=server, pool=kept)
    if server is not None:
        return Workbench(cache_dir=cache_dir, server=server)
    pool = SharedKernelPool(keep=keep, idle_timeout=idle_timeout, busy_wait=busy_wait)
    return Workbench(cache_dir=cache_dir, pool=pool)
