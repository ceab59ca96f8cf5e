"""``notebook_overview``: one line of facts per cell, the DAG's edges and the lint."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_jcli.analysis import Finding
from jupyter_jcli.errors import SCHEMA_VERSION
from jupyter_jcli.workbench._load import Loaded, first_line, load, outputs_of

__all__ = ["CellOverview", "Overview", "notebook_overview", "overview_of"]


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
            stored by the first mutation).
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

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (findings as ``Finding.to_dict``)."""
        return {
            "index": self.index,
            "name": self.name,
            "cell_type": self.cell_type,
            "rev": self.rev,
            "first_line": self.first_line,
            "defines": list(self.defines),
            "uses": list(self.uses),
            "mutates": list(self.mutates),
            "parents": list(self.parents),
            "children": list(self.children),
            "output_count": self.output_count,
            "findings": [finding.to_dict() for finding in self.findings],
            "name_stored": self.name_stored,
        }


@dataclass(frozen=True)
class Overview:
    """What :func:`notebook_overview` returns.

    Attributes:
        path: the file read (absolute).
        notebook_path: the ``.ipynb`` holding the outputs (the pair's, for a ``.py``).
        structure_rev: the notebook's structure rev (pass it as ``expected_rev`` to add a
            cell at the start or end only if nothing changed).
        cells: one :class:`CellOverview` per cell, in order.
        lint_summary: number of findings per kind (``syntax_error``, ``unresolved_name``, ...).
    """

    path: Path
    notebook_path: Path
    structure_rev: str
    cells: tuple[CellOverview, ...]
    lint_summary: dict[str, int]

    @property
    def findings(self) -> tuple[Finding, ...]:
        """Every lint finding, in document order."""
        return tuple(finding for cell in self.cells for finding in cell.findings)

    def to_dict(self) -> dict[str, Any]:
        """The JSON document: ``schema_version``, ``status``, ``operation``, the fields."""
        return {
            "schema_version": SCHEMA_VERSION,
            "status": "ok",
            "operation": "notebook_overview",
            "path": str(self.path),
            "notebook_path": str(self.notebook_path),
            "structure_rev": self.structure_rev,
            "cell_count": len(self.cells),
            "lint_summary": dict(self.lint_summary),
            "cells": [cell.to_dict() for cell in self.cells],
        }


def notebook_overview(path: str | os.PathLike[str], *, cache_dir: Path | None = None) -> Overview:
    """Every cell's name, type, rev, first line, static effects, DAG neighbours and lint.

    Reads only: no file or folder is created or changed (names not yet stored are computed).
    The effects and edges follow :mod:`jupyter_jcli.analysis` (last writer above wins,
    call-time reads, wildcard fallback).

    Args:
        path: an ``.ipynb``, or a py:percent ``.py`` paired with one (jupytext rules).
        cache_dir: snapshot cache base folder (unused by reads; accepted for symmetry).

    Returns:
        The :class:`Overview`.

    Raises:
        NotebookError: the read codes of :meth:`Document.load
            <jupyter_jcli.notebook.document.Document.load>`.
    """
    return overview_of(load(path, cache_dir=cache_dir))


def overview_of(loaded: Loaded) -> Overview:
    """The :class:`Overview` of an already loaded notebook (pure: reads ``loaded`` only)."""
    graph = loaded.graph
    cell_dicts = loaded.document.cell_dicts()
    by_cell: dict[int, list[Finding]] = {}
    for finding in graph.findings:
        by_cell.setdefault(finding.index, []).append(finding)
    cells = []
    for view, node in zip(loaded.cells, graph.cells, strict=True):
        effects = node.effects
        cells.append(
            CellOverview(
                index=view.index,
                name=view.name,
                cell_type=view.cell_type,
                rev=view.rev,
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
    )
