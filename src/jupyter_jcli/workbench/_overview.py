"""``notebook_overview``: one line of facts per cell, the DAG's edges and the lint, paged.

A page is ``limit`` cells from ``start`` (default: the first :data:`DEFAULT_OVERVIEW_LIMIT`);
the analysis always covers the whole notebook (parents and children may be on other pages,
``lint_summary`` counts every cell's findings), and the result gives the notebook's
``cell_count`` and the ``next_call`` that shows the next page.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from jupyter_jcli._json import json_fields
from jupyter_jcli.analysis import Finding
from jupyter_jcli.errors import UsageError
from jupyter_jcli.notebook import address_fields
from jupyter_jcli.workbench._envelope import result_document
from jupyter_jcli.workbench._load import Loaded, first_line, load, outputs_of

__all__ = [
    "DEFAULT_OVERVIEW_LIMIT",
    "CellOverview",
    "Overview",
    "check_page",
    "check_start",
    "notebook_overview",
    "overview_next_call",
    "overview_of",
]

DEFAULT_OVERVIEW_LIMIT = 100
"""Cells an overview shows by default (about 150 characters each as the model reads them)."""


@dataclass(frozen=True)
class CellOverview:
    """One cell in an :class:`Overview`.

    Attributes:
        index: physical zero-based position.
        name: the cell's name (its address for every other operation).
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        rev: the cell's rev (pass it as ``expected_rev`` to edit the cell).
        first_line: first non-blank source line, at most 80 characters.
        defines: names the cell binds at module level, sorted.
        uses: names it reads (builtins no cell rebinds left out), sorted.
        mutates: names it changes in place, sorted.
        parents: names of the cells it depends on, in document order.
        children: names of the cells that depend on it, in document order.
        output_count: saved outputs in the file.
        findings: lint findings about this cell.
        name_stored: whether the name is already in the file (else computed on read and
            stored by the first mutation or run; until then a cell inserted above may take
            it).
    """

    index: int
    name: str
    cell_type: str
    rev: str
    first_line: str
    defines: tuple[str, ...]
    uses: tuple[str, ...]
    mutates: tuple[str, ...]
    parents: tuple[str, ...]
    children: tuple[str, ...]
    output_count: int
    findings: tuple[Finding, ...]
    name_stored: bool

    JSON_KEYS: ClassVar[str] = (
        "index name cell_type rev first_line defines uses mutates parents children"
        " output_count findings name_stored"
    )
    """The keys of :meth:`to_dict`, in order."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (findings as ``Finding.to_dict``; the keys named: a
        :class:`~jupyter_jcli.workbench._status_views.SessionCellOverview` adds its own)."""
        return json_fields(self, self.JSON_KEYS)


@dataclass(frozen=True)
class Overview:
    """What :func:`notebook_overview` returns.

    Attributes:
        path: the file read (absolute).
        notebook_path: the ``.ipynb`` holding the outputs (the pair's, for a ``.py``).
        structure_rev: the notebook's structure rev (pass it as ``expected_rev`` to add a
            cell at the start or end only if nothing changed).
        cells: one :class:`CellOverview` per cell of the page, in order.
        lint_summary: number of findings per kind (``syntax_error``, ``unresolved_name``, ...)
            over the whole notebook.
        cell_count: cells in the notebook (all pages).
        start: index of the page's first cell.
        next_call: the ``notebook_overview`` call that shows the next page, or ``None``
            (this page reaches the last cell).
        pair_out_of_sync: ``None``, or for a pair whose two sides hold different cell
            inputs, which side is shown and what a write does
            (``Document.pair_out_of_sync``); in :meth:`to_dict` only when set.
    """

    path: Path
    notebook_path: Path
    structure_rev: str
    cells: tuple[CellOverview, ...]
    lint_summary: dict[str, int]
    cell_count: int
    start: int
    next_call: str | None
    pair_out_of_sync: Mapping[str, Any] | None = field(default=None, kw_only=True)

    JSON_KEYS: ClassVar[str] = (
        "notebook_path structure_rev cell_count start next_call lint_summary"
        " pair_out_of_sync? cells"
    )
    """The keys of :meth:`to_dict`, in order."""

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every lint finding of the page's cells, in document order."""
        return tuple(finding for cell in self.cells for finding in cell.findings)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: ``schema_version``, ``status``, ``operation``, the fields."""
        return result_document("notebook_overview", self, self.JSON_KEYS)


def check_page(start: int, limit: int | None) -> None:
    """Check an overview page's bounds.

    Raises:
        UsageError: ``USAGE_ERROR`` when ``start`` is not an integer >= 0 or ``limit`` is
            neither None nor an integer >= 1.
    """
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise UsageError(f"start must be an integer >= 0, got {start!r}.", {"start": start})
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise UsageError(f"limit must be an integer >= 1, got {limit!r}.", {"limit": limit})


def check_start(start: int, cell_count: int, *, label: str = "start") -> None:
    """Check that a page's first cell is in the file: ``start`` may equal ``cell_count`` (an
    empty last page, as a text window may start at the text's end) but not pass it.

    Raises:
        UsageError: ``USAGE_ERROR`` (details ``start``, ``cell_count``) past the end;
            ``label`` names the parameter in the message (``--start`` for the command line).
    """
    if start > cell_count:
        raise UsageError(
            f"{label} {start} is past the last cell (the file has {cell_count} cells).",
            {"start": start, "cell_count": cell_count},
        )


def overview_next_call(start: int, shown: int, total: int, limit: int | None) -> str | None:
    """The ``notebook_overview`` call of the page after ``shown`` cells from ``start``."""
    after = start + shown
    if after >= total:
        return None
    same_limit = "" if limit in (None, DEFAULT_OVERVIEW_LIMIT) else f" limit={limit}"
    return f"notebook_overview start={after}{same_limit} (cells {after}-{total - 1} of {total})"


def notebook_overview(
    path: str | os.PathLike[str],
    *,
    start: int = 0,
    limit: int | None = DEFAULT_OVERVIEW_LIMIT,
    cache_dir: Path | None = None,
) -> Overview:
    """Every cell's name, type, rev, first line, static effects, DAG neighbours and lint.

    Reads only: no file or folder is created or changed (names not yet stored are computed).
    The effects and edges follow :mod:`jupyter_jcli.analysis` (last writer above wins,
    call-time reads, wildcard fallback).

    Args:
        path: an ``.ipynb``, or a py:percent ``.py`` paired with one (jupytext rules).
        start: index of the first cell shown (>= 0, at most the cell count: then no cells).
        limit: the most cells shown (>= 1), or None for every cell from ``start``.
        cache_dir: snapshot cache base folder (unused by reads; accepted for symmetry).

    Returns:
        The :class:`Overview` of the page.

    Raises:
        UsageError: ``USAGE_ERROR`` for a bad ``start`` (past the last cell too) or ``limit``.
        NotebookError: the read codes of :meth:`Document.load
            <jupyter_jcli.notebook.document.Document.load>`.
    """
    check_page(start, limit)
    return overview_of(load(path, cache_dir=cache_dir), start=start, limit=limit)


def overview_of(loaded: Loaded, *, start: int = 0, limit: int | None = None) -> Overview:
    """The :class:`Overview` page of an already loaded notebook (pure: reads ``loaded``
    only; ``start`` and ``limit`` as :func:`notebook_overview` takes them, checked there).

    Raises:
        UsageError: ``USAGE_ERROR`` when ``start`` is past the last cell (:func:`check_start`).
    """
    check_start(start, len(loaded.cells))
    graph = loaded.graph
    cell_dicts = loaded.document.cell_dicts()
    by_cell: dict[int, list[Finding]] = {}
    for finding in graph.findings:
        by_cell.setdefault(finding.index, []).append(finding)
    cells = []
    stop = None if limit is None else start + limit
    pairs = list(zip(loaded.cells, graph.cells, strict=True))
    for view, node in pairs[start:stop]:
        effects = node.effects
        cells.append(
            CellOverview(
                **address_fields(view),
                first_line=first_line(view.source),
                defines=tuple(sorted(effects.defines)),
                uses=tuple(sorted(node.uses)),
                mutates=tuple(sorted(effects.mutates & node.writes)),
                parents=tuple(graph.cells[p].key for p in node.parents),
                children=tuple(graph.cells[c].key for c in node.children),
                output_count=len(outputs_of(cell_dicts[view.index])),
                findings=tuple(by_cell.get(view.index, ())),
                name_stored=view.name_stored,
            )
        )
    summary = Counter(finding.kind for finding in graph.findings)
    return Overview(
        path=loaded.document.path,
        notebook_path=loaded.document.notebook_path,
        structure_rev=loaded.document.structure_rev,
        cells=tuple(cells),
        lint_summary=dict(sorted(summary.items())),
        cell_count=len(pairs),
        start=start,
        next_call=overview_next_call(start, len(cells), len(pairs), limit),
        pair_out_of_sync=loaded.document.pair_out_of_sync,
    )
