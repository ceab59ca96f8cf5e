"""The workbench every process of ours shares (``j-cli`` commands, ``jupyter-mcp``), and its
execution log.

:func:`shared_workbench` is the one way a command finds the notebook's live kernel or starts
one: a :class:`~jupyter_jcli.workbench.Workbench` on a
:class:`~jupyter_jcli.kernels.RegistryKernelPool` (or on a Jupyter Server's kernels). Its run
log is kept in the pool's records (:class:`SharedExecutionLog`: the local registry's entry, a
Jupyter Server's ledger), so a cell that ran in one process is fresh in every other one on
the same kernel epoch, and a cell edited since is stale everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from jupyter_jcli.analysis import ExecutionRecord, StateChange
from jupyter_jcli.kernels import (
    KernelPool,
    KernelRecords,
    KernelRegistry,
    RegistryKernelPool,
    ServerConfig,
    ServerLedger,
)
from jupyter_jcli.workbench._execution_log import ExecutionLog
from jupyter_jcli.workbench._session import Workbench

__all__ = ["SharedExecutionLog", "execution_log_for", "shared_workbench"]

_Logged = TypeVar("_Logged", ExecutionRecord, StateChange)


def _execution_record(run: Mapping[str, Any]) -> ExecutionRecord:
    return ExecutionRecord(
        key=str(run["key"]),
        rev=str(run["rev"]),
        epoch=str(run["epoch"]),
        seq=int(run["seq"]),
        parents=tuple(str(p) for p in run["parents"]),
        ok=bool(run["ok"]),
        interrupted=run.get("interrupted") is True,
    )


def _state_change(change: Mapping[str, Any]) -> StateChange:
    names = change["names"]
    return StateChange(
        seq=int(change["seq"]),
        epoch=str(change["epoch"]),
        names=None if names is None else tuple(str(n) for n in names),
        cause=str(change["cause"]),
    )


def _in_seq_order(
    items: Iterable[Mapping[str, Any]], parse: Callable[[Mapping[str, Any]], _Logged]
) -> list[_Logged]:
    """``parse`` of each registry item, oldest (lowest ``seq``) first; an item that does not
    parse (written by another version, or damaged) is left out."""
    parsed = []
    for item in items:
        try:
            parsed.append(parse(item))
        except (KeyError, TypeError, ValueError):
            continue
    return sorted(parsed, key=lambda logged: logged.seq)


class SharedExecutionLog(ExecutionLog):
    """The execution log kept in the notebook's records (see
    :meth:`~jupyter_jcli.kernels.KernelRegistry.record_execution`): the registry entry, a Jupyter
    Server's :class:`~jupyter_jcli.kernels.ServerLedger` entry (the same shapes), or
    the tests' ``MemoryRecords``. While the records do not keep the
    notebook's runs (:meth:`~jupyter_jcli.kernels.KernelRecords.holds`: a kernel gateway's
    kernel, a backend that keeps no ledger entry) this process's runs are the log.

    Args:
        registry: the records (a pool's ``records``).
        notebook_path: the resolved notebook path.
    """

    def __init__(self, registry: KernelRecords, notebook_path: Path) -> None:
        super().__init__()
        self._registry = registry
        self._path = notebook_path

    def _kept(self) -> bool:
        return self._registry.holds(self._path)

    def _stored_record(self, record: ExecutionRecord) -> int:
        """Store ``record`` in the entry of the kernel it ran on; the ``seq`` the registry
        assigns (it grows across processes), else (a kernel no longer registered) its own,
        which orders the local copy."""
        assigned = self._registry.record_execution(
            self._path,
            {
                "key": record.key,
                "rev": record.rev,
                "epoch": record.epoch,
                "parents": list(record.parents),
                "ok": record.ok,
                "interrupted": record.interrupted,
            },
        )
        return assigned if assigned >= 0 else record.seq

    def records(self) -> list[ExecutionRecord]:
        """The records of the registered kernel's epoch, oldest first (none when the
        notebook has no registered kernel); this process's when the records keep none."""
        if not self._kept():
            return ExecutionLog.records(self)
        return _in_seq_order(self._registry.executions(self._path), _execution_record)

    def _stored_change(self, change: StateChange) -> int:
        """Store code run outside the cells in the entry of the kernel it ran on, so every
        process sees the cells it overwrote stale; the ``seq`` as for :meth:`_stored_record`."""
        names = None if change.names is None else list(change.names)
        assigned = self._registry.record_change(
            self._path, {"epoch": change.epoch, "names": names, "cause": change.cause}
        )
        return assigned if assigned >= 0 else change.seq

    def changes(self) -> list[StateChange]:
        """The registered kernel's runs of code outside the cells, oldest first."""
        if not self._kept():
            return ExecutionLog.changes(self)
        entry = self._registry.read(self._path)
        return [] if entry is None else _in_seq_order(entry.changes, _state_change)

    def stamp(self) -> str:
        """The registered kernel's epoch and last run number: another process's run (the
        registry hands out ``seq`` across processes) or a new kernel changes it, so statuses
        kept by it are never those of an older state of the shared log; this process's log
        version when the records keep none."""
        if not self._kept():
            return ExecutionLog.stamp(self)
        entry = self._registry.read(self._path)
        if entry is None:
            return f"none:{self.version}"
        return f"{entry.epoch}:{entry.seq}"


def execution_log_for(
    pool: KernelPool, notebook_path: Path, server: ServerConfig | None = None
) -> ExecutionLog:
    """The execution log of a notebook's kernels in ``pool``: kept in the pool's records (the
    registry's, a server's ledger), in the ledger of ``server`` for a pool that keeps none,
    else a log of this process's runs."""
    records = pool.records
    if records is None and server is not None:
        records = ServerLedger(server.url)
    return ExecutionLog() if records is None else SharedExecutionLog(records, notebook_path)


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
    (:class:`~jupyter_jcli.kernels.ServerBackend` with ``keep``: ``j-cli kernel list --server-url``
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
        from jupyter_jcli.kernels import ServerBackend  # the server's modules: only here

        kept = KernelPool(
            backend_factory=partial(ServerBackend, server, keep=True),
            records=ServerLedger(server.url),
            locks=KernelRegistry(),
        )
        return Workbench(cache_dir=cache_dir, server=server, pool=kept)
    if server is not None:
        return Workbench(cache_dir=cache_dir, server=server)
    pool = RegistryKernelPool(keep=keep, idle_timeout=idle_timeout, busy_wait=busy_wait)
    return Workbench(cache_dir=cache_dir, pool=pool)
