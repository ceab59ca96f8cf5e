"""Loading a notebook for an operation: the document, its graph and small shared helpers."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_jcli.analysis import CellInput, NotebookGraph, build_graph
from jupyter_jcli.notebook.document import CellView, Document

__all__ = ["FIRST_LINE_WIDTH", "Loaded", "build_cell_graph", "cell_outputs", "first_line", "load"]

FIRST_LINE_WIDTH = 80
"""Longest first line (characters) reported for a cell; longer ones end with ``…``."""


@dataclass(frozen=True)
class Loaded:
    """A notebook as one operation sees it.

    Attributes:
        document: the loaded :class:`Document` (nothing written).
        graph: the dependency graph over its cells, keyed by cell name.
    """

    document: Document
    graph: NotebookGraph

    @property
    def cells(self) -> tuple[CellView, ...]:
        """The document's cells, in order."""
        return self.document.cells


def build_cell_graph(
    cells: Iterable[CellView], renamed: Mapping[str, str] | None = None
) -> NotebookGraph:
    """The graph of ``cells`` keyed by name (``renamed`` maps old names to the keys to use)."""
    renamed = renamed or {}
    return build_graph(
        [
            CellInput(renamed.get(view.name, view.name), view.cell_type, view.source)
            for view in cells
        ]
    )


def load(path: str | os.PathLike[str], *, cache_dir: Path | None = None) -> Loaded:
    """Load ``path`` (``.ipynb`` or paired py:percent ``.py``) and analyse it. Writes nothing.

    Raises:
        NotebookError: the codes of :meth:`Document.load`.
    """
    document = Document.load(path, cache_dir=cache_dir)
    return Loaded(document, build_cell_graph(document.cells))


def first_line(source: str) -> str:
    """The first non-blank line of ``source``, stripped and cut to :data:`FIRST_LINE_WIDTH`."""
    for line in source.splitlines():
        stripped = line.strip()
        if stripped:
            if len(stripped) > FIRST_LINE_WIDTH:
                return stripped[: FIRST_LINE_WIDTH - 1] + "…"
            return stripped
    return ""


def cell_outputs(notebook: Mapping[str, Any]) -> list[Sequence[Any]]:
    """Each cell's ``outputs`` list (empty for cells without a list), in order."""
    result: list[Sequence[Any]] = []
    for cell in notebook.get("cells") or []:
        outputs = cell.get("outputs") if isinstance(cell, Mapping) else None
        result.append(outputs if isinstance(outputs, list) else [])
    return result
