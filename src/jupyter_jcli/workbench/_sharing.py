"""The workbench on kernels shared through the registry (``j-cli`` commands, ``jupyter-mcp``).

:func:`shared_workbench` is the one way a command finds the notebook's live kernel or starts
one: a :class:`~jupyter_jcli.workbench.Workbench` on a
:class:`~jupyter_jcli.kernels.RegistryKernelPool`. Its run logs are the registry's
(:class:`SharedRunLog`), so a cell that ran in one process is fresh in every other one on the
same kernel epoch, and a cell edited since is stale everywhere.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from jupyter_jcli.kernels import (
    KernelPool,
    KernelRegistry,
    RegistryKernelPool,
    ServerConfig,
    ServerLedger,
)
from jupyter_jcli.workbench._run_log import RunLog
from jupyter_jcli.workbench._session import Workbench
from jupyter_jcli.workbench._shared_log import SharedRunLog

__all__ = ["SharedRunLog", "run_log_for", "shared_workbench"]


def run_log_for(
    pool: KernelPool, notebook_path: Path, server: ServerConfig | None = None
) -> RunLog:
    """The run log of a notebook's kernels in ``pool``: kept in the pool's records (the
    registry's, a server's ledger), in the ledger of ``server`` for a pool that keeps none,
    else a log of this process's runs."""
    records = pool.records
    if records is None and server is not None:
        records = ServerLedger(server.url)
    return RunLog() if records is None else SharedRunLog(records, notebook_path)


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

        kept = KernelPool(
            backend_factory=partial(KeptServerBackend, server),
            records=ServerLedger(server.url),
            locks=KernelRegistry(),
        )
        return Workbench(cache_dir=cache_dir, server=server, pool=kept)
    if server is not None:
        return Workbench(cache_dir=cache_dir, server=server)
    pool = RegistryKernelPool(keep=keep, idle_timeout=idle_timeout, busy_wait=busy_wait)
    return Workbench(cache_dir=cache_dir, pool=pool)
