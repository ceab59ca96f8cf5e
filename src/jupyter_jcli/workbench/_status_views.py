"""The kernel-aware forms of the overview and of ``read_cells``: each cell's run status.

Statuses come from the notebook's run log and the live kernel's epoch (``_run_log``); tldrs
come from the summary cache in the cell's metadata when it still describes the cell, else
from the deterministic fallback (marked ``*``). The overview never calls a model.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from jupyter_jcli.analysis import CellStatus
from jupyter_jcli.kernels import KernelInfo
from jupyter_jcli.workbench._overview import CellOverview, Overview
from jupyter_jcli.workbench._read import ReadCell, ReadCellsResult

__all__ = [
    "SessionCellOverview",
    "SessionOverview",
    "SessionReadCell",
    "SessionReadCellsResult",
    "cell_tldrs",
    "session_overview",
    "session_read",
]

_OVERVIEW_TLDR_DETAIL = "the overview never calls a model; summarize_cells writes model summaries"


@dataclass(frozen=True)
class SessionCellOverview(CellOverview):
    """A :class:`CellOverview` with the cell's run status and tldr.

    Attributes:
        status: ``fresh``, ``stale``, ``error`` or ``never_run`` for a code cell (see
            :data:`jupyter_jcli.analysis.CellStatus`), ``None`` for Markdown and raw cells.
        tldr: one line about the cell: the cached model summary's, else a fallback
            starting with ``*``.
    """

    status: CellStatus | None
    tldr: str

    def to_dict(self) -> dict[str, Any]:
        """The :class:`CellOverview` form plus ``status`` and ``tldr``."""
        document = super().to_dict()
        document["status"] = self.status
        document["tldr"] = self.tldr
        return document


@dataclass(frozen=True)
class SessionOverview(Overview):
    """An :class:`Overview` whose cells are :class:`SessionCellOverview`, with the kernel.

    Attributes:
        kernel: the notebook's kernel (state ``not_started`` when none runs).
        status_summary: code cells per status over the whole notebook (every page).
    """

    kernel: KernelInfo
    status_summary: dict[str, int]

    @property
    def statuses(self) -> dict[str, CellStatus]:
        """``{name: status}`` of every code cell of the page, in document order."""
        return {
            cell.name: cell.status
            for cell in self.cells
            if isinstance(cell, SessionCellOverview) and cell.status is not None
        }

    def to_dict(self) -> dict[str, Any]:
        """The :class:`Overview` document plus ``kernel`` and ``status_summary``."""
        document = super().to_dict()
        document["kernel"] = self.kernel.to_dict()
        document["status_summary"] = dict(self.status_summary)
        return document


@dataclass(frozen=True)
class SessionReadCell(ReadCell):
    """A :class:`ReadCell` with the cell's run status (``None`` for Markdown and raw)."""

    status: CellStatus | None

    def to_dict(self) -> dict[str, Any]:
        """The :class:`ReadCell` form plus ``status``."""
        document = super().to_dict()
        document["status"] = self.status
        return document


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


def _base_fields(obj: Any, base: type) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(base)}


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


def session_overview(
    overview: Overview,
    cells: Sequence[Mapping[str, Any]],
    statuses: Mapping[str, CellStatus],
    kernel: KernelInfo,
) -> SessionOverview:
    """``overview`` with statuses, tldrs (from ``cells``, every cell dict of the notebook, in
    order; only the page's are summarized) and the kernel."""
    page = cells[overview.start : overview.start + len(overview.cells)]
    tldrs = cell_tldrs(page)
    views = tuple(
        SessionCellOverview(
            **_base_fields(cell, CellOverview), status=statuses.get(cell.name), tldr=tldr
        )
        for cell, tldr in zip(overview.cells, tldrs, strict=True)
    )
    base = _base_fields(overview, Overview)
    base["cells"] = views
    summary = {str(status): n for status, n in sorted(Counter(statuses.values()).items())}
    return SessionOverview(**base, kernel=kernel, status_summary=summary)


def session_read(
    result: ReadCellsResult, statuses: Mapping[str, CellStatus], epoch: str | None
) -> SessionReadCellsResult:
    """``result`` with each cell's status."""
    views = tuple(
        SessionReadCell(**_base_fields(cell, ReadCell), status=statuses.get(cell.name))
        for cell in result.cells
    )
    base = _base_fields(result, ReadCellsResult)
    base["cells"] = views
    return SessionReadCellsResult(**base, epoch=epoch)
