"""Loading a notebook for an operation: the document, its graph and small shared helpers.

An operation loads its notebook once (:func:`load`) and hands the :class:`Loaded` snapshot
to the pure functions that answer it. In a long-lived process the load is warm (the active
``notebook._warm`` cache: an unchanged file is not read or parsed again) and so is the graph:
graphs are kept by the content they were built from (every cell's name and rev, which
covers its type and source), so an unchanged notebook, or one whose outputs alone changed,
is not analysed again.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_jcli.analysis import CellInput, NotebookGraph, build_graph
from jupyter_jcli.notebook.document import CellView, Document
from jupyter_jcli.notebook.io import FIRST_LINE_WIDTH, first_line
from jupyter_jcli.notebook.store import NotebookRef, NotebookStore, open_notebook

__all__ = [
    "FIRST_LINE_WIDTH",
    "Loaded",
    "build_cell_graph",
    "first_line",
    "load",
    "loaded_of",
    "open_document",
    "outputs_of",
]

_KEPT_GRAPHS = 8
"""Graphs kept by content (least recently used dropped first)."""
_graphs: OrderedDict[tuple[object, ...], NotebookGraph] = OrderedDict()
_graphs_lock = threading.Lock()
_inputs: list[dict[tuple[str, str], CellInput]] = [{}]
"""The inputs of the last graph built, by ``(key, rev)`` (one mapping, replaced whole under
``_graphs_lock``, never changed in place)."""


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
    """The graph of ``cells`` keyed by name (``renamed`` maps old names to the keys to use).

    Kept by content (module docstring): the same cells give the same graph object, which
    callers only read.
    """
    renamed = renamed or {}
    views = tuple(cells)
    key = tuple((renamed.get(view.name, view.name), view.rev) for view in views)
    with _graphs_lock:
        graph = _graphs.get(key)
        if graph is not None:
            _graphs.move_to_end(key)
            return graph
        made = _inputs[0]
    # A cell's rev covers its type and source: the input of an unchanged cell is the one
    # the last build made (building 5,000 inputs again cost more than the analysis).
    inputs = [
        made.get(pair) or CellInput(pair[0], view.cell_type, view.source)
        for pair, view in zip(key, views, strict=True)
    ]
    graph = build_graph(inputs)
    with _graphs_lock:
        _graphs[key] = graph
        while len(_graphs) > _KEPT_GRAPHS:
            _graphs.popitem(last=False)
        _inputs[0] = dict(zip(key, inputs, strict=True))  # replaced, never changed in place
    return graph


def load(
    path: str | os.PathLike[str] | NotebookRef,
    *,
    cache_dir: Path | None = None,
    store: NotebookStore | None = None,
) -> Loaded:
    """Load ``path`` (``.ipynb`` or paired py:percent ``.py``, or a notebook of ``store``
    named by a ``NotebookRef``: ``notebook.store.open_notebook``) and analyse it. Writes
    nothing.

    Without ``store``, a path opens in the active store choice (``notebook.stores``).

    Raises:
        UsageError: a ref of another store than ``store``.
        NotebookError: the codes of :meth:`Document.load` or of the store.
    """
    return loaded_of(open_notebook(path, store=store, cache_dir=cache_dir))


def open_document(
    path: str | os.PathLike[str] | NotebookRef, *, cache_dir: Path | None = None
) -> Document:
    """The document of ``path`` in the active store (``notebook.stores.using_store``; none:
    the local file, ``Document.load``). Writes nothing.

    Raises:
        NotebookError: the read codes of :meth:`Document.load` or of the store.
    """
    return open_notebook(path, cache_dir=cache_dir)


def loaded_of(document: Document) -> Loaded:
    """``document`` with its graph (kept with the document's version, and by content: see
    :func:`build_cell_graph`)."""
    return Loaded(document, document.memo("graph", lambda: build_cell_graph(document.cells)))


def outputs_of(cell: object) -> Sequence[Any]:
    """A cell's ``outputs`` list as stored (empty for a cell without a list); read only."""
    outputs = cell.get("outputs") if isinstance(cell, Mapping) else None
    return outputs if isinstance(outputs, list) else []
