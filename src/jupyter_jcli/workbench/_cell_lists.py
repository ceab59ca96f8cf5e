"""Bounded lists of cells in the operations' documents, for every front end.

An answer of bounded size, whatever the notebook holds: a list of an operation's document
that grows with the notebook (the cells an edit or an undo made stale, a run's plan, what is
still stale, the cells a stopped run skipped) holds at most :data:`CELLS_LISTED` items;
beside it, ``<key>_count`` gives the whole count (always, cut or not), and when anything was
cut the document's ``notice`` says what was left out and where the rest is. Where the rest
is depends on the front end (``j-cli -j notebook overview FILE``; the MCP ``notebook_overview``
tool), so each passes it as ``rest``. :data:`CELL_LISTS` names, per operation, the lists
bounded; :func:`bounded_cell_lists` bounds a document by its ``operation``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

__all__ = [
    "CELLS_LISTED",
    "CELL_LISTS",
    "SKIPPED_RUNS",
    "bounded_cell_lists",
    "bounded_lists",
    "bounded_skipped",
]

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
        "restart_kernel": ("still_stale",),
        "interrupt_kernel": ("still_stale",),
    }
)
"""Per operation, the lists of cells of its document that are bounded, in document order of
their counts (a run's ``requested``, ``parents_run`` and ``not_fresh_parents`` are the
``--cell`` lists ``j-cli run`` adds)."""
SKIPPED_RUNS = frozenset({"execute_cells", "run_stale"})
"""The operations whose ``cells`` keep every cell that ran and the first skipped ones."""


def bounded_cell_lists(document: Mapping[str, Any], rest: str) -> dict[str, Any]:
    """``document`` with the lists :data:`CELL_LISTS` names for its ``operation`` bounded
    (:func:`bounded_lists`) and, for an execution, its skipped cells too
    (:func:`bounded_skipped`); a document of another operation comes back as it is.

    Args:
        document: an operation's JSON document (not modified).
        rest: where every cell's status is read, for the notice (a command or a tool call).
    """
    operation = document.get("operation")
    bounded = bounded_lists(document, CELL_LISTS.get(str(operation), ()), rest)
    return bounded_skipped(bounded, rest) if operation in SKIPPED_RUNS else bounded


def bounded_lists(document: Mapping[str, Any], keys: Sequence[str], rest: str) -> dict[str, Any]:
    """``document`` with each list under ``keys`` (the ones it has) cut to its first
    :data:`CELLS_LISTED` items and ``<key>_count`` (its length) beside it, plus, when one was
    cut, a ``notice`` naming each cut list and ``rest``; a ``notice`` already there is kept
    first."""
    bounded = dict(document)
    cut: list[str] = []
    for key in keys:
        items = bounded.get(key)
        if not isinstance(items, list):
            continue
        bounded[key] = items[:CELLS_LISTED]
        bounded[f"{key}_count"] = len(items)
        if len(items) > CELLS_LISTED:
            cut.append(f"{key} holds the first {CELLS_LISTED} of {_cells(len(items))}")
    return _with_notice(bounded, cut, rest)


def bounded_skipped(document: Mapping[str, Any], rest: str) -> dict[str, Any]:
    """An execution document (``execute_cells`` / ``run_stale``) whose ``cells`` keep every
    cell that ran and only the first :data:`CELLS_LISTED` of those ``skipped`` (not run
    after the stop), with ``skipped_count`` (all of them) and, when some were left out, a
    ``notice`` saying so and naming ``rest``."""
    cells = document.get("cells")
    if not isinstance(cells, list):
        return dict(document)
    skipped = [cell for cell in cells if cell.get("status") == "skipped"]
    kept = {id(cell) for cell in skipped[:CELLS_LISTED]}
    bounded = dict(document)
    bounded["cells"] = [c for c in cells if c.get("status") != "skipped" or id(c) in kept]
    bounded["skipped_count"] = len(skipped)
    cut = []
    if len(skipped) > CELLS_LISTED:
        cut.append(
            f"cells holds the first {CELLS_LISTED} of the {_cells(len(skipped))} "
            "skipped after the stop"
        )
    return _with_notice(bounded, cut, rest)


def _cells(count: int) -> str:
    return f"{count:,} cell" if count == 1 else f"{count:,} cells"


def _with_notice(document: dict[str, Any], cut: Sequence[str], rest: str) -> dict[str, Any]:
    if not cut:
        return document
    notice = f"{'; '.join(cut)}; every cell's status, paged: {rest}"
    earlier = document.get("notice")
    document["notice"] = f"{earlier} {notice}" if isinstance(earlier, str) and earlier else notice
    return document
