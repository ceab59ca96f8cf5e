"""The execution log of one notebook: what ran on its live kernel, and the statuses it implies.

Statuses follow :func:`jupyter_jcli.analysis.fresh_cells` (the DAG issue's rule): a cell is
``fresh`` only if its current rev ran on the live kernel's epoch, after the last run of each
parent, every parent is fresh and its parents are the ones it ran with. A new or restarted
kernel has a new epoch, so every earlier record stops counting; no live kernel means nothing
is fresh, whatever the file's metadata says. Statuses are computed from revs at read time,
so a mutation needs no hook here: an edited cell simply has a rev no record carries.

Code run on the kernel outside the cells (``execute_code`` on a notebook: ``j-cli exec NB``)
is recorded too, as a :class:`~jupyter_jcli.analysis.StateChange` on the same sequence: the
cells whose state it overwrote since their last run are ``stale``
(:mod:`jupyter_jcli.analysis._overwrites`). So is every cell the re-run plan would run (a
replayed writer, a cell restored after it, their dependents): the statuses, an edit's stale
list and ``run_stale`` are one set (:func:`jupyter_jcli.analysis.cell_freshness`), each such
cell with its cause (:func:`stale_causes`).

A cell whose run killed the kernel (``died``) is recorded, not ok, against the dead kernel's
epoch. Statuses describe the live kernel, and that kernel is gone: until the next execution
starts a new one, and after it, the cell reads ``never_run`` like every other cell (its
namespace is lost, so it did not run on the live kernel). What it printed before dying is
not lost: the execute result carries it (status ``died``, condensed outputs) and it is
saved with the cell, with its execution count.

Runs follow the cell, not its name: a run is recorded by the cell's *record key*
(:func:`record_keys`), ``#`` and its nbformat cell ``id``, and so are the parents it ran with;
statuses read the records back under the names the cells have now (:func:`named_records`).
A rename (``--rename``, ``new_name``) or its undo therefore changes no status. A cell
without an ``id`` (nbformat < 4.5) or whose ``id`` another cell shares is recorded by its
name; once renamed, by the name it had before its first rename, which the rename stores
beside the new one (``names.FIRST_NAME_KEY``), so its runs follow it too. Runs recorded
before runs were keyed by id are keyed by name: a record whose key is a name counts for the
cell of that name, as it always did. A record whose cell is gone counts for no cell, and a
parent that is gone makes its child's parents differ (``stale``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from jupyter_jcli.analysis import (
    CellStatus,
    ExecutionRecord,
    Freshness,
    NotebookGraph,
    StateChange,
    cell_freshness,
)
from jupyter_jcli.notebook.document import CellView
from jupyter_jcli.workbench._load import Loaded

__all__ = [
    "ID_PREFIX",
    "MAX_CHANGES",
    "ExecutionLog",
    "cell_statuses",
    "named_records",
    "not_fresh",
    "record_keys",
    "stale_causes",
    "statuses",
]

ID_PREFIX = "#"
"""Starts the record key of a cell recorded by its nbformat id (a cell name never holds it)."""

MAX_CHANGES = 32
"""Runs of code outside the cells kept per epoch (older ones count through newer ones)."""


@dataclass
class ExecutionLog:
    """The latest :class:`~jupyter_jcli.analysis.ExecutionRecord` per cell on one kernel epoch.

    Only the latest run of a cell on the newest epoch matters to
    :func:`~jupyter_jcli.analysis.fresh_cells`, so the log keeps exactly those (bounded by
    the number of cell names); a record of a new epoch drops the others.

    Attributes:
        epoch: the epoch of the kept records, ``None`` before the first record.
        latest: record key (:func:`record_keys`) -> its latest record on ``epoch``.
    """

    epoch: str | None = None
    latest: dict[str, ExecutionRecord] = field(default_factory=dict)
    version: int = 0
    """Grows with every record (what statuses computed from the log are kept by)."""
    overwrites: list[StateChange] = field(default_factory=list)
    """Code run outside the cells on ``epoch`` (:meth:`record_change`), oldest first."""

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
    ) -> ExecutionRecord:
        """Record one execution (``seq`` must grow with every call in the process;
        ``interrupted``: an interrupt stopped it, see :class:`ExecutionRecord`)."""
        self._epoch_is(epoch)
        record = ExecutionRecord(
            key=key,
            rev=rev,
            epoch=epoch,
            seq=seq,
            parents=tuple(parents),
            ok=ok,
            interrupted=interrupted,
        )
        record = dataclasses.replace(record, seq=self._stored_record(record))
        self.latest[key] = record
        self.version += 1
        return record

    def _epoch_is(self, epoch: str) -> None:
        if epoch != self.epoch:
            self.epoch = epoch
            self.latest = {}
            self.overwrites = []

    def record_change(
        self, epoch: str, seq: int, names: tuple[str, ...] | None, cause: str
    ) -> StateChange:
        """Record code run on the kernel outside the cells that may have written ``names``
        (``None``: any name); ``seq`` from the same counter as :meth:`record`."""
        self._epoch_is(epoch)
        change = StateChange(seq=seq, epoch=epoch, names=names, cause=cause)
        change = dataclasses.replace(change, seq=self._stored_change(change))
        kept = [*self.overwrites, change]
        last_all = max((i for i, c in enumerate(kept) if c.names is None), default=0)
        self.overwrites = kept[last_all:][-MAX_CHANGES:]
        self.version += 1
        return change

    def _stored_record(self, record: ExecutionRecord) -> int:
        """The ``seq`` :meth:`record` keeps ``record`` by: here its own (a log shared with
        other processes stores it first and keeps the ``seq`` its store hands out)."""
        return record.seq

    def _stored_change(self, change: StateChange) -> int:
        """As :meth:`_stored_record`, for :meth:`record_change`."""
        return change.seq

    def records(self) -> list[ExecutionRecord]:
        """The kept records, oldest first."""
        return sorted(self.latest.values(), key=lambda record: record.seq)

    def changes(self) -> list[StateChange]:
        """The kept runs of code outside the cells, oldest first."""
        return list(self.overwrites)

    def stamp(self) -> str:
        """A string that changes whenever :meth:`records` may answer differently (statuses
        computed from the log are kept by it): here the local :attr:`version`."""
        return str(self.version)


def record_keys(cells: Sequence[CellView]) -> dict[str, str]:
    """``{name: record key}`` of ``cells`` (every cell of one notebook), module rule: ``#`` and
    the cell's nbformat ``id`` when no other cell has that id; for a renamed cell without an
    ``id``, the name it had before (its ``first_name``) when no other cell has that one; else
    its name, or ``=`` and its name when another cell's runs go by that name."""
    ids = Counter(view.cell_id for view in cells if view.cell_id is not None)
    firsts = Counter(view.first_name for view in cells if view.first_name is not None)
    keys: dict[str, str] = {}
    for view in cells:
        if view.cell_id is not None and ids[view.cell_id] == 1:
            keys[view.name] = ID_PREFIX + view.cell_id
        elif view.first_name is not None and firsts[view.first_name] == 1:
            keys[view.name] = view.first_name
    claimed = set(keys.values())
    for view in cells:
        if view.name not in keys:
            keys[view.name] = f"={view.name}" if view.name in claimed else view.name
    return keys


def named_records(
    records: Iterable[ExecutionRecord], cells: Sequence[CellView]
) -> list[ExecutionRecord]:
    """``records`` (keyed by record key) as the analysis reads them: keyed by the names the
    cells have now, parents too (module rule). A record of a cell that is gone is left out;
    a parent that is gone keeps its record key, which names no cell."""
    keys = record_keys(cells)
    # runs recorded by name (a name that is another cell's record key goes to that cell)
    name_of = {view.name: view.name for view in cells if keys[view.name] != f"={view.name}"}
    name_of.update((key, name) for name, key in keys.items())
    named = []
    for record in records:
        name = name_of.get(record.key)
        if name is None:
            continue
        parents = tuple(name_of.get(parent, parent) for parent in record.parents)
        named.append(dataclasses.replace(record, key=name, parents=parents))
    return named


def cell_statuses(
    graph: NotebookGraph,
    revs: Mapping[str, str],
    log: ExecutionLog | None,
    live_epoch: str | None,
    cells: Sequence[CellView] = (),
) -> dict[str, CellStatus]:
    """``{name: status}`` of every code cell, in document order (module rule).

    Args:
        graph: the notebook's graph now, keyed by cell name.
        revs: the current rev of every cell, by name.
        log: the notebook's execution log, ``None`` when nothing ran in this process.
        live_epoch: the live kernel's epoch, ``None`` when no kernel is alive.
        cells: the notebook's cells now, whose record keys the records carry
            (:func:`named_records`).
    """
    return _freshness(graph, revs, log, live_epoch, cells).statuses


def _freshness(
    graph: NotebookGraph,
    revs: Mapping[str, str],
    log: ExecutionLog | None,
    live_epoch: str | None,
    cells: Sequence[CellView],
) -> Freshness:
    records = named_records(log.records(), cells) if log is not None else []
    changes = log.changes() if log is not None else []
    return cell_freshness(graph, records, live_epoch, revs, changes)


def _loaded_freshness(loaded: Loaded, log: ExecutionLog | None, epoch: str | None) -> Freshness:
    """:func:`cell_freshness` of ``loaded``, kept with the document's version for this log
    state and epoch (treat it as read-only)."""
    key = f"freshness:{id(log)}:{log.stamp() if log is not None else 0}:{epoch}"

    def compute() -> Freshness:
        revs = {view.name: view.rev for view in loaded.cells}
        return _freshness(loaded.graph, revs, log, epoch, loaded.cells)

    return loaded.document.memo(key, compute)


def statuses(loaded: Loaded, log: ExecutionLog | None, epoch: str | None) -> dict[str, CellStatus]:
    """``{name: status}`` of every code cell of ``loaded`` (:func:`cell_statuses`), kept
    with the document's version for this log state and epoch (treat it as read-only)."""
    return _loaded_freshness(loaded, log, epoch).statuses


def stale_causes(loaded: Loaded, log: ExecutionLog | None, epoch: str | None) -> dict[str, str]:
    """``{name: cause}`` of the ``stale`` cells whose own rev and parents did not change:
    code run outside them overwrote their state, they read a name another cell rebound
    since, or the re-run plan runs them (:class:`~jupyter_jcli.analysis.Freshness`; kept
    like :func:`statuses`, treat it as read-only)."""
    return _loaded_freshness(loaded, log, epoch).causes


def not_fresh(by_name: Mapping[str, CellStatus]) -> tuple[str, ...]:
    """The cells whose status is not ``fresh``, in document order."""
    return tuple(name for name, status in by_name.items() if status != "fresh")
