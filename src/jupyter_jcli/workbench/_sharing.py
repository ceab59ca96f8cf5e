"""The workbench on kernels shared through the registry (``j-cli`` commands, ``jupyter-mcp``).

:func:`shared_workbench` is the one way a command finds the notebook's live kernel or starts
one: a :class:`~jupyter_jcli.workbench.Workbench` on a
:class:`~jupyter_jcli.kernels.SharedKernelPool`. Its run logs are the registry's
(:class:`SharedRunLog`), so a cell that ran in one process is fresh in every other one on the
same kernel epoch, and a cell edited since is stale everywhere.
"""

from __future__ import annotations

from collections.abc import Collection
from functools import partial
from pathlib import Path

from jupyter_jcli.analysis import RunRecord, StateChange
from jupyter_jcli.kernels import (
    KernelPool,
    KernelRegistry,
    LockedKernelPool,
    ServerConfig,
    SharedKernelPool,
)
from jupyter_jcli.workbench._run_log import RunLog
from jupyter_jcli.workbench._session import Workbench

__all__ = ["SharedRunLog", "run_log_for", "shared_workbench"]


class SharedRunLog(RunLog):
    """The run log kept in the notebook's registry entry (see
    :meth:`~jupyter_jcli.kernels.KernelRegistry.record_run`).

    Args:
        registry: the registry.
        notebook_path: the resolved notebook path.
    """

    def __init__(self, registry: KernelRegistry, notebook_path: Path) -> None:
        super().__init__()
        self._registry = registry
        self._path = notebook_path

    def record(
        self,
        key: str,
        rev: str,
        epoch: str,
        seq: int,
        parents: Collection[str],
        *,
        ok: bool,
        interrupted: bool = False,
    ) -> RunRecord:
        """Record one execution in the entry of the kernel it ran on. ``seq`` is assigned
        by the registry (it grows across processes); the given one orders the local copy,
        kept for a kernel that is no longer registered."""
        assigned = self._registry.record_run(
            self._path,
            {
                "key": key,
                "rev": rev,
                "epoch": epoch,
                "parents": list(parents),
                "ok": ok,
                "interrupted": interrupted,
            },
        )
        seq = assigned if assigned >= 0 else seq
        return super().record(key, rev, epoch, seq, parents, ok=ok, interrupted=interrupted)

    def records(self) -> list[RunRecord]:
        """The records of the registered kernel's epoch, oldest first (none when the
        notebook has no registered kernel)."""
        entry = self._registry.read(self._path)
        if entry is None:
            return []
        records = []
        for run in entry.runs:
            try:
                records.append(
                    RunRecord(
                        key=str(run["key"]),
                        rev=str(run["rev"]),
                        epoch=str(run["epoch"]),
                        seq=int(run["seq"]),
                        parents=tuple(str(p) for p in run["parents"]),
                        ok=bool(run["ok"]),
                        interrupted=run.get("interrupted") is True,
                    )
                )
            except (KeyError, TypeError, ValueError):
                continue
        return sorted(records, key=lambda record: record.seq)

    def record_change(
        self, epoch: str, seq: int, names: tuple[str, ...] | None, cause: str
    ) -> StateChange:
        """Record code run outside the cells in the entry of the kernel it ran on, so every
        process sees the cells it overwrote stale; ``seq`` is assigned by the registry, the
        given one orders the local copy (kept for a kernel no longer registered)."""
        assigned = self._registry.record_change(
            self._path,
            {"epoch": epoch, "names": None if names is None else list(names), "cause": cause},
        )
        return super().record_change(epoch, assigned if assigned >= 0 else seq, names, cause)

    def changes(self) -> list[StateChange]:
        """The registered kernel's runs of code outside the cells, oldest first."""
        entry = self._registry.read(self._path)
        if entry is None:
            return []
        found = []
        for change in entry.changes:
            try:
                names = change["names"]
                found.append(
                    StateChange(
                        seq=int(change["seq"]),
                        epoch=str(change["epoch"]),
                        names=None if names is None else tuple(str(n) for n in names),
                        cause=str(change["cause"]),
                    )
                )
            except (KeyError, TypeError, ValueError):
                continue
        return sorted(found, key=lambda change: change.seq)

    def stamp(self) -> str:
        """The registered kernel's epoch and last run number: another process's run (the
        registry hands out ``seq`` across processes) or a new kernel changes it, so statuses
        kept by it are never those of an older state of the shared log."""
        entry = self._registry.read(self._path)
        if entry is None:
            return f"none:{self.version}"
        return f"{entry.epoch}:{entry.seq}:{len(entry.runs)}"


def run_log_for(pool: KernelPool, notebook_path: Path) -> RunLog:
    """The run log of a notebook's kernels in ``pool``: the registry's for a shared pool,
    else a log of this process's runs."""
    if isinstance(pool, SharedKernelPool):
        return SharedRunLog(pool.registry, notebook_path)
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

        kept = LockedKernelPool(backend_factory=partial(KeptServerBackend, server))
        return Workbench(cache_dir=cache_dir, server=server, pool=kept)
    if server is not None:
        return Workbench(cache_dir=cache_dir, server=server)
    pool = SharedKernelPool(keep=keep, idle_timeout=idle_timeout, busy_wait=busy_wait)
    return Workbench(cache_dir=cache_dir, pool=pool)
