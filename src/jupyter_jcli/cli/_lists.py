"""Bounded lists of cells in ``j-cli -j`` documents.

A ``-j`` answer is one JSON document of bounded size, whatever the notebook holds. A list
that grows with the notebook (the cells an edit made stale, a run's plan, what is still
stale, the cells a stopped run skipped) holds at most :data:`CELLS_LISTED` items; beside it,
``<key>_count`` gives the whole count (always, cut or not), and when anything was cut the
document's ``notice`` says what was left out and the command that reads the rest (every
cell's status, paged: ``j-cli -j notebook overview FILE --start N``). Text mode bounds its
lists the same way, at :data:`~jupyter_jcli.cli._document_render.NAMES_SHOWN` names.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from jupyter_jcli.cli._render import counted

__all__ = ["CELLS_LISTED", "bounded_lists", "bounded_skipped", "statuses_command"]

CELLS_LISTED = 100
"""The most items one list of cells in a ``-j`` document holds (a page of the overview)."""


def statuses_command(file_arg: str, *, json: bool = True) -> str:
    """The command that pages every cell of ``file_arg`` with its run status."""
    return shlex.join(["j-cli", *(["-j"] if json else []), "notebook", "overview", file_arg])


def bounded_lists(
    document: Mapping[str, Any], keys: Sequence[str], file_arg: str
) -> dict[str, Any]:
    """``document`` with each list under ``keys`` (the ones it has) cut to its first
    :data:`CELLS_LISTED` items and ``<key>_count`` (its length) beside it, plus, when one was
    cut, a ``notice`` naming each cut list and where the rest is (:func:`statuses_command`);
    a ``notice`` already there is kept first."""
    bounded = dict(document)
    cut: list[str] = []
    for key in keys:
        items = bounded.get(key)
        if not isinstance(items, list):
            continue
        bounded[key] = items[:CELLS_LISTED]
        bounded[f"{key}_count"] = len(items)
        if len(items) > CELLS_LISTED:
            cut.append(f"{key} holds the first {CELLS_LISTED} of {counted(len(items), 'cell')}")
    return _with_notice(bounded, cut, file_arg)


def bounded_skipped(document: Mapping[str, Any], file_arg: str) -> dict[str, Any]:
    """An execution document (``execute_cells`` / ``run_stale``) whose ``cells`` keep every
    cell that ran and only the first :data:`CELLS_LISTED` of those ``skipped`` (not run
    after the stop), with ``skipped_count`` (all of them) and, when some were left out, a
    ``notice`` saying so."""
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
            f"cells holds the first {CELLS_LISTED} of the {counted(len(skipped), 'cell')} "
            "skipped after the stop"
        )
    return _with_notice(bounded, cut, file_arg)


def _with_notice(document: dict[str, Any], cut: Sequence[str], file_arg: str) -> dict[str, Any]:
    if not cut:
        return document
    notice = f"{'; '.join(cut)}; every cell's status, paged: {statuses_command(file_arg)}"
    earlier = document.get("notice")
    document["notice"] = f"{earlier} {notice}" if isinstance(earlier, str) and earlier else notice
    return document
