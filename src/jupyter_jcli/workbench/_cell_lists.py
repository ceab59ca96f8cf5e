"""Bounded lists of cells in the operations' documents, for every front end.

An answer of bounded size, whatever the notebook holds: a list of an operation's document
that grows with the notebook (the cells an edit or an undo made stale, a run's plan, what is
still stale, the cells a run ran or skipped, the cells a read left out) holds at most
:data:`CELLS_LISTED` items; beside it, ``<key>_count`` gives the whole count (always, cut or
not), and when anything was cut the document's ``notice`` says what was left out and where
the rest is. Where the rest is depends on the front end (``j-cli -j notebook overview
FILE``; the MCP ``notebook_overview`` tool), so each passes it as ``rest``.
:data:`CELL_LISTS` names, per operation, the lists bounded; :func:`bounded_cell_lists`
bounds a document by its ``operation``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["CELLS_LISTED", "CELL_LISTS", "SKIPPED_RUNS", "bounded_cell_lists"]

CELLS_LISTED = 100
"""The most items one list of cells in a document holds (a page of the overview)."""

_EDIT = ("stale", "changed")
_RUN = ("plan", "still_stale", "written", "requested", "parents_run", "not_fresh_parents")
CELL_LISTS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "add_cell": _EDIT,
        "update_cell": _EDIT,
        "remove_cell": _EDIT,
        "move_cell": _EDIT,
        "undo_last": ("stale", "changed", "conflicts"),
        "execute_cells": _RUN,
        "run_stale": _RUN,
        "read_cells": ("omitted_cells",),
        "restart_kernel": ("still_stale",),
        "interrupt_kernel": ("still_stale",),
    }
)
"""Per operation, the lists of cells of its document that are bounded, in document order of
their counts (a run's ``requested``, ``parents_run`` and ``not_fresh_parents`` are the
``--cell`` lists ``j-cli run`` adds)."""
SKIPPED_RUNS = frozenset({"execute_cells", "run_stale"})
"""The operations whose ``cells`` are bounded too (the cells run, the cells skipped)."""


def bounded_cell_lists(document: Mapping[str, Any], rest: str) -> dict[str, Any]:
    """``document`` with the lists :data:`CELL_LISTS` names for its ``operation`` bounded
    (each cut to its first :data:`CELLS_LISTED` items, ``<key>_count`` beside it) and, for an
    execution, its ``cells`` too (:func:`_bounded_cells`); a document of another operation
    comes back as it is. When anything was cut, one ``notice`` names each cut list, then
    ``rest`` once (a ``notice`` already there is kept first).

    Args:
        document: an operation's JSON document (not modified).
        rest: where every cell's status is read, for the notice (a command or a tool call).
    """
    operation = document.get("operation")
    bounded = dict(document)
    cut: list[str] = []
    for key in CELL_LISTS.get(str(operation), ()):
        items = bounded.get(key)
        if not isinstance(items, list):
            continue
        bounded[key] = items[:CELLS_LISTED]
        bounded[f"{key}_count"] = len(items)
        if len(items) > CELLS_LISTED:
            cut.append(f"{key} holds the first {CELLS_LISTED} of {_cells(len(items))}")
    if operation in SKIPPED_RUNS and isinstance(bounded.get("cells"), list):
        cut.extend(_bounded_cells(bounded))
    if cut:
        notice = f"{'; '.join(cut)}; every cell's status, paged: {rest}"
        earlier = bounded.get("notice")
        if isinstance(earlier, str) and earlier.strip():
            earlier = earlier.rstrip()
            notice = f"{earlier}{'' if earlier.endswith(('.', ';')) else '.'} {notice}"
        bounded["notice"] = notice
    return bounded


def _bounded_cells(document: dict[str, Any]) -> list[str]:
    """Bound an execution's ``cells`` in place: the first :data:`CELLS_LISTED` cells that
    ran and every one of them that did not end ``ok`` (the error or interrupt that stopped
    the run), then the first :data:`CELLS_LISTED` of those ``skipped`` after the stop;
    ``ran_count`` and ``skipped_count`` give the whole counts. Returns what was cut, for the
    notice."""
    cells: list[dict[str, Any]] = document["cells"]
    ran = [cell for cell in cells if cell.get("status") != "skipped"]
    skipped = [cell for cell in cells if cell.get("status") == "skipped"]
    kept = {id(cell) for cell in skipped[:CELLS_LISTED]}
    kept.update(id(cell) for cell in ran[:CELLS_LISTED])
    kept.update(id(cell) for cell in ran[CELLS_LISTED:] if cell.get("status") != "ok")
    document["cells"] = [cell for cell in cells if id(cell) in kept]
    document["ran_count"] = len(ran)
    document["skipped_count"] = len(skipped)
    cut = []
    if len(ran) > CELLS_LISTED:
        cut.append(
            f"cells holds the first {CELLS_LISTED} of the {_cells(len(ran))} run "
            "(and any that did not end ok)"
        )
    if len(skipped) > CELLS_LISTED:
        cut.append(
            f"cells holds the first {CELLS_LISTED} of the {_cells(len(skipped))} "
            "skipped after the stop"
        )
    return cut


def _cells(count: int) -> str:
    return f"{count:,} cell" if count == 1 else f"{count:,} cells"
