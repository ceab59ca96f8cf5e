"""The kernel-aware forms of the overview and of ``read_cells``: each cell's run status.

Statuses come from the notebook's execution log and the live kernel's epoch
(``_execution_log``); while code a command that ended (killed) left running on the kernel
still runs, every cell run before it reads ``stale`` (its ``stale_cause`` names that
command), as an execution would record (``kernels._busy.check_leftover``) but without
writing: the overview reads only. Tldrs come from the summary cache in the cell's metadata
when it still describes the cell, else from the deterministic fallback (marked ``*``). The
overview never calls a model.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from jupyter_jcli.analysis import CellStatus, ExecutionRecord, StateChange
from jupyter_jcli.kernels import KernelInfo
from jupyter_jcli.workbench._execution_log import ExecutionLog, stale_causes, statuses
from jupyter_jcli.workbench._load import Loaded
from jupyter_jcli.workbench._overview import CellOverview, Overview, overview_of
from jupyter_jcli.workbench._read import ReadCell, ReadCellsResult

__all__ = [
    "SessionCellOverview",
    "SessionOverview",
    "SessionReadCell",
    "SessionReadCellsResult",
    "cell_tldrs",
    "judged_log",
    "overview_with_statuses",
    "session_overview",
    "session_read",
]

_OVERVIEW_TLDR_DETAIL = "the overview never calls a model; summarize_cells writes model summaries"


@dataclass(frozen=True)
class SessionCellOverview(CellOverview):
    """A :class:`CellOverview` with the cell's run status and tldr.

    Attributes:
        status: ``fresh``, ``stale``, ``error``, ``interrupted`` or ``never_run`` for a code
            cell (see :data:`jupyter_jcli.analysis.CellStatus`), ``None`` for Markdown and
            raw cells.
        tldr: one line about the cell: the cached model summary's, else a fallback
            starting with ``*``.
        stale_cause: for a cell ``stale`` because code run on the kernel outside the cells
            overwrote its state (``j-cli exec``), what ran and what it wrote; else ``None``
            (the key is then left out of :meth:`to_dict`).
    """

    status: CellStatus | None
    tldr: str
    stale_cause: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The :class:`CellOverview` form plus ``status``, ``tldr`` (and ``stale_cause``)."""
        return _with_status(super().to_dict(), self.status, self.stale_cause, tldr=self.tldr)


@dataclass(frozen=True)
class SessionOverview(Overview):
    """An :class:`Overview` whose cells are :class:`SessionCellOverview`, with the kernel.

    Attributes:
        kernel: the notebook's kernel (state ``not_started`` when none runs).
        status_summary: code cells per status over the whole notebook (every page).
        kernel_busy: when the registry records code running on the kernel, what runs and
            who runs it, as ``KERNEL_BUSY`` tells it (``busy_facts``: ``running``,
            ``busy_pid``, ``busy_command``, ``busy_gone``...); in :meth:`to_dict` it is the
            kernel's ``busy``.
    """

    kernel: KernelInfo
    status_summary: dict[str, int]
    kernel_busy: Mapping[str, Any] | None = None

    @property
    def statuses(self) -> dict[str, CellStatus]:
        """``{name: status}`` of every code cell of the page, in document order."""
        return {
            cell.name: cell.status
            for cell in self.cells
            if isinstance(cell, SessionCellOverview) and cell.status is not None
        }

    def to_dict(self) -> dict[str, Any]:
        """The :class:`Overview` document plus ``kernel`` (with ``busy`` when the registry
        records code running on it) and ``status_summary``."""
        document = super().to_dict()
        document["kernel"] = self.kernel.to_dict()
        if self.kernel_busy is not None:
            document["kernel"]["busy"] = dict(self.kernel_busy)
        document["status_summary"] = dict(self.status_summary)
        return document


@dataclass(frozen=True)
class SessionReadCell(ReadCell):
    """A :class:`ReadCell` with the cell's run status (``None`` for Markdown and raw) and,
    as in :class:`SessionCellOverview`, its ``stale_cause`` when code run outside the cells
    made it stale."""

    status: CellStatus | None
    stale_cause: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The :class:`ReadCell` form plus ``status`` (and ``stale_cause``)."""
        return _with_status(super().to_dict(), self.status, self.stale_cause)


@dataclass(frozen=True)
class SessionReadCellsResult(ReadCellsResult):
    """A :class:`ReadCellsResult` whose cells are :class:`SessionReadCell`.

    Attributes:
        epoch: the live kernel's epoch the statuses were judged against (``None``: no kernel).
    """

    epoch: str | None

    def to_dict(self) -> dict[str, Any]:
        """The :class:`ReadCellsResult` document plus ``epoch``."""
        document = super().to_dict()
        document["epoch"] = self.epoch
        return document


def cell_tldrs(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each cell's tldr: the cached model summary's if valid, else the fallback's."""
    from jupyter_jcli.summaries import cached_summary, fallback_summary

    tldrs = []
    for cell in cells:
        summary = cached_summary(cell) or fallback_summary(
            cell, reason="request_limit", detail=_OVERVIEW_TLDR_DETAIL
        )
        tldrs.append(summary.tldr)
    return tldrs


def overview_with_statuses(
    loaded: Loaded,
    log: ExecutionLog | None,
    kernel: KernelInfo,
    *,
    start: int = 0,
    limit: int | None = None,
    busy: Mapping[str, Any] | None = None,
) -> SessionOverview:
    """The :class:`SessionOverview` page of an already loaded notebook: its overview,
    statuses against the kernel's epoch and the execution log, tldrs (kept with the document's
    version); ``start`` and ``limit`` as :func:`~jupyter_jcli.workbench.notebook_overview`;
    ``busy``: what the registry says runs on the kernel (``busy_facts``), its code judged
    an unknown change of every name when the command running it is gone (module doc)."""
    log = judged_log(log, kernel.epoch, busy)
    document = loaded.document
    tldrs = document.memo("tldrs", lambda: cell_tldrs(document.cell_dicts()))
    by_name = statuses(loaded, log, kernel.epoch)
    overview = overview_of(loaded, start=start, limit=limit)
    page = tldrs[overview.start : overview.start + len(overview.cells)]
    causes = stale_causes(loaded, log, kernel.epoch)
    found = session_overview(overview, page, by_name, kernel, causes=causes)
    return dataclasses.replace(found, kernel_busy=busy) if busy is not None else found


def judged_log(
    log: ExecutionLog | None, epoch: str | None, busy: Mapping[str, Any] | None
) -> ExecutionLog | None:
    """``log`` as statuses must read it while the registry records code running on the
    kernel of ``epoch`` (``busy``: ``busy_facts``) for a command that is gone: with that
    code as a change of every name after every run (module doc); else ``log`` itself."""
    if busy is None or not busy.get("busy_gone") or log is None or epoch is None:
        return log
    return _LeftoverLog(log, epoch, busy)


class _LeftoverLog(ExecutionLog):
    """``log`` read as if the leftover code of a gone command (``busy``) had been recorded
    as changing any name after every run (what ``check_leftover`` records); writes
    nothing."""

    def __init__(self, log: ExecutionLog, epoch: str, busy: Mapping[str, Any]) -> None:
        super().__init__()
        self._log = log
        self._epoch_of = epoch
        self._busy = busy

    def records(self) -> list[ExecutionRecord]:
        return self._log.records()

    def changes(self) -> list[StateChange]:
        from jupyter_jcli.kernels import leftover_cause

        changes = self._log.changes()
        seqs = [record.seq for record in self._log.records()] + [c.seq for c in changes]
        last = max(seqs, default=0)
        cause = leftover_cause(dict(self._busy))
        return [*changes, StateChange(seq=last + 1, epoch=self._epoch_of, names=None, cause=cause)]

    def stamp(self) -> str:
        return f"{self._log.stamp()}:leftover:{self._busy.get('busy_pid')}"


def session_overview(
    overview: Overview,
    tldrs: Sequence[str],
    statuses: Mapping[str, CellStatus],
    kernel: KernelInfo,
    *,
    causes: Mapping[str, str] | None = None,
) -> SessionOverview:
    """``overview`` with each cell's status and tldr (``tldrs``: one per cell of the page, in
    order, see :func:`cell_tldrs`) and the kernel; ``statuses`` covers every code cell of the
    notebook, so ``status_summary`` counts all pages; ``causes``: the ``stale_cause`` of
    cells inline code made stale (:func:`~jupyter_jcli.workbench._execution_log.stale_causes`)."""
    cells = tuple(
        _status_cell(cell, SessionCellOverview, statuses, causes, tldr=tldr)
        for cell, tldr in zip(overview.cells, tldrs, strict=True)
    )
    summary = {str(status): n for status, n in sorted(Counter(statuses.values()).items())}
    return _extended(overview, SessionOverview, cells=cells, kernel=kernel, status_summary=summary)


def session_read(
    result: ReadCellsResult,
    statuses: Mapping[str, CellStatus],
    epoch: str | None,
    *,
    causes: Mapping[str, str] | None = None,
) -> SessionReadCellsResult:
    """``result`` with each cell's status (and ``stale_cause``, from ``causes``)."""
    cells = tuple(_status_cell(cell, SessionReadCell, statuses, causes) for cell in result.cells)
    return _extended(result, SessionReadCellsResult, cells=cells, epoch=epoch)


def _status_cell(
    cell: CellOverview | ReadCell,
    kind: type[_Extended],
    statuses: Mapping[str, CellStatus],
    causes: Mapping[str, str] | None,
    **fields: Any,
) -> _Extended:
    """``cell`` as ``kind`` with its ``status`` and, when it is stale, its ``stale_cause``
    from ``causes``; ``fields``: the others ``kind`` adds."""
    status = statuses.get(cell.name)
    cause = (causes or {}).get(cell.name) if status == "stale" else None
    return _extended(cell, kind, status=status, stale_cause=cause, **fields)


_Extended = TypeVar("_Extended")


def _extended(base: Any, kind: type[_Extended], **fields: Any) -> _Extended:
    """``base`` (a dataclass) as ``kind``, a dataclass extending its class: every field of
    ``base``, then ``fields`` (those ``kind`` adds, or new values)."""
    values = {field.name: getattr(base, field.name) for field in dataclasses.fields(base)}
    return kind(**{**values, **fields})


def _with_status(
    document: dict[str, Any], status: CellStatus | None, stale_cause: str | None, **between: Any
) -> dict[str, Any]:
    """``document`` (a cell's JSON form) with its ``status``, then ``between`` (in order),
    then its ``stale_cause`` when it has one."""
    document["status"] = status
    document.update(between)
    if stale_cause is not None:
        document["stale_cause"] = stale_cause
    return document
