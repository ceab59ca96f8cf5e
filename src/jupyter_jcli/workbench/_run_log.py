"""The run log of one notebook: what ran on its live kernel, and the statuses it implies.

Statuses follow :func:`jupyter_jcli.analysis.fresh_cells` (the DAG issue's rule): a cell is
``fresh`` only if its current rev ran on the live kernel's epoch, after the last run of each
parent, every parent is fresh and its parents are the ones it ran with. A new or restarted
kernel has a new epoch, so every earlier record stops counting; no live kernel means nothing
is fresh, whatever the file's metadata says. Statuses are computed from revs at read time,
so a mutation needs no hook here: an edited cell simply has a rev no record carries.

A cell whose run killed the kernel (``died``) is recorded, not ok, against the dead kernel's
epoch. Statuses describe the live kernel, and that kernel is gone: until the next execution
starts a new one, and after it, the cell reads ``never_run`` like every other cell (its
namespace is lost, so it did not run on the live kernel). What it printed before dying is
not lost: the execute result carries it (status ``died``, condensed outputs) and it is
saved with the cell, with its execution count.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from jupyter_jcli.analysis import CellStatus, NotebookGraph, RunRecord, fresh_cells
from jupyter_jcli.workbench._load import Loaded

__all__ = ["RunLog", "cell_statuses", "not_fresh", "statuses"]


@dataclass
class RunLog:
    """The latest :class:`~jupyter_jcli.analysis.RunRecord` per cell on one kernel epoch.

    Only the latest run of a cell on the newest epoch matters to
    :func:`~jupyter_jcli.analysis.fresh_cells`, so the log keeps exactly those (bounded by
    the number of cell names); a record of a new epoch drops the others.

    Attributes:
        epoch: the epoch of the kept records, ``None`` before the first record.
        latest: cell name -> its latest record on ``epoch``.
    """

    epoch: str | None = None
    latest: dict[str, RunRecord] = field(default_factory=dict)
    version: int = 0
    """Grows with every record (what statuses computed from the log are kept by)."""

    def record(
        self, key: str, rev: str, epoch: str, seq: int, parents: Collection[str], *, ok: bool
    ) -> RunRecord:
        """Record one execution (``seq`` must grow with every call in the process)."""
        if epoch != self.epoch:
            self.epoch = epoch
            self.latest = {}
        record = RunRecord(key=key, rev=rev, epoch=epoch, seq=seq, parents=tuple(parents), ok=ok)
        self.latest[key] = record
        self.version += 1
        return record

    def records(self) -> list[RunRecord]:
        """The kept records, oldest first."""
        return sorted(self.latest.values(), key=lambda record: record.seq)

    def stamp(self) -> str:
        """A string that changes whenever :meth:`records` may answer differently (statuses
        computed from the log are kept by it): here the local :attr:`version`."""
        return str(self.version)


def cell_statuses(
    graph: NotebookGraph,
    revs: Mapping[str, str],
    log: RunLog | None,
    live_epoch: str | None,
) -> dict[str, CellStatus]:
    """``{name: status}`` of every code cell, in document order (module rule).

    Args:
        graph: the notebook's graph now, keyed by cell name.
        revs: the current rev of every cell, by name.
        log: the notebook's run log, ``None`` when nothing ran in this process.
        live_epoch: the live kernel's epoch, ``None`` when no kernel is alive.
    """
    records = log.records() if log is not None else []
    return fresh_cells(graph, records, live_epoch, revs)


def statuses(loaded: Loaded, log: RunLog | None, epoch: str | None) -> dict[str, CellStatus]:
    """``{name: status}`` of every code cell of ``loaded`` (:func:`cell_statuses`), kept
    with the document's version for this log state and epoch (treat it as read-only)."""
    document = loaded.document
    key = f"statuses:{id(log)}:{log.stamp() if log is not None else 0}:{epoch}"

    def compute() -> dict[str, CellStatus]:
        revs = {view.name: view.rev for view in loaded.cells}
        return cell_statuses(loaded.graph, revs, log, epoch)

    return document.memo(key, compute)


def not_fresh(by_name: Mapping[str, CellStatus]) -> tuple[str, ...]:
    """The cells whose status is not ``fresh``, in document order."""
    return tuple(name for name, status in by_name.items() if status != "fresh")
