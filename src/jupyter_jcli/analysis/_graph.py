"""The notebook's dependency DAG: edges from each cell to the cells whose writes it reads.

Rules (analysis issue, section 2):

- document order, last writer wins: a cell depends on the nearest cell above it that writes
  (defines, mutates or deletes) a name it reads;
- call time: reading a function, class or lambda-valued name also reads what its body reads
  at call time (and writes what it writes through ``global`` or by mutation), transitively
  through the functions it references; those names resolve from the reading cell's position,
  except a name the cell itself binds before its first reference of the function (source
  order: ``total = 0`` then ``mean()`` reads the cell's own ``total``);
- a mutating-method call on a name bound by ``import`` or an importing magic (``np.sort(a)``
  after ``%pylab``) is not a write; a displayed ``x.add(v)`` (``resize``, ``rotate``) is a
  write only when ``x``'s nearest binding above is a builtin container;
- builtins resolve without an edge unless a cell above rebinds them;
- wildcard fallback: a non-builtin name that no cell above writes binds to the nearest wildcard
  writer above (``from m import *``, ``%run``, ``exec()``, ...), else it is unresolved;
- markdown and raw cells, and code cells that do not parse, have no edges.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from jupyter_jcli.analysis._cell import analyze_cell
from jupyter_jcli.analysis._resolve import Resolved
from jupyter_jcli.analysis._trace import GraphTrace, Indexes
from jupyter_jcli.analysis._types import CellEffects
from jupyter_jcli.errors import AnalysisError, ErrorCode

if TYPE_CHECKING:  # lint records load with the first cell that has one
    from jupyter_jcli.analysis._lint import Finding, FindingDict

__all__ = ["CellDict", "CellInput", "CellNode", "EdgeDict", "GraphDict", "NotebookGraph"]


@dataclass(frozen=True, slots=True)
class CellInput:
    """One cell handed to :func:`build_graph`.

    Attributes:
        key: the cell's unique name (``cell.metadata.jupyter_mcp.name``).
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"`` (nbformat 4).
        source: the cell source as one string.
    """

    key: str
    cell_type: str
    source: str


@dataclass(frozen=True, slots=True)
class CellNode:
    """One cell of the graph.

    Attributes:
        index: 0-based position in the notebook.
        key: the cell's name.
        effects: the cell's own static effects (:func:`analyze_cell`).
        uses: ``effects.uses`` without builtins that no cell writes.
        reads: everything the cell reads once call-time reads of the functions and classes
            it references are included (a call-time read of a name the cell binds counts
            when the reference comes first); builtins that resolve to no cell are left out.
            ``reads & writes`` is what the cell reads before it writes (package docstring).
        writes: everything the cell writes, call-time writes included.
        inputs: for each name in ``reads`` that resolves to a cell, the index of that cell
            (the nearest writer above, or the nearest wildcard writer above).
        unresolved: names read that no cell above writes (not builtins, no wildcard above).
        parents: indexes of the cells this one depends on, ascending.
        children: indexes of the cells that depend on this one, ascending.
    """

    index: int
    key: str
    effects: CellEffects
    uses: frozenset[str]
    reads: frozenset[str]
    writes: frozenset[str]
    inputs: Mapping[str, int] = field(hash=False)
    unresolved: frozenset[str]
    parents: tuple[int, ...]
    children: tuple[int, ...]

    @property
    def cell_type(self) -> str:
        """``"code"``, ``"markdown"`` or ``"raw"``."""
        return self.effects.cell_type


class SyntaxErrorDict(TypedDict):
    """JSON shape of a syntax error location."""

    line: int
    col: int
    message: str


class CellDict(TypedDict):
    """JSON shape of one cell in :meth:`NotebookGraph.to_dict`."""

    index: int
    key: str
    cell_type: str
    defines: list[str]
    uses: list[str]
    mutates: list[str]
    reads: list[str]
    writes: list[str]
    parents: list[str]
    children: list[str]
    opaque_magics: list[str]
    wildcard_writers: list[str]
    too_large: bool
    syntax_error: SyntaxErrorDict | None


class EdgeDict(TypedDict):
    """JSON shape of one edge: ``parent`` writes ``names`` that ``child`` reads."""

    parent: str
    child: str
    parent_index: int
    child_index: int
    names: list[str]


class GraphDict(TypedDict):
    """JSON shape of :meth:`NotebookGraph.to_dict`."""

    cells: list[CellDict]
    edges: list[EdgeDict]
    findings: list[FindingDict]


@dataclass(frozen=True, slots=True)
class NotebookGraph:
    """The analysed notebook: per-cell effects, the DAG and lint findings. Read-only.

    Attributes:
        cells: one :class:`CellNode` per input cell, in document order.
        edges: ``(parent_index, child_index)`` pairs, sorted; parents are always above.
        edge_names: for each edge, the names that flow along it.
        findings: lint findings in document order.
    """

    cells: tuple[CellNode, ...]
    edges: tuple[tuple[int, int], ...]
    edge_names: Mapping[tuple[int, int], frozenset[str]] = field(hash=False)
    findings: tuple[Finding, ...]
    _index: Mapping[str, int] = field(hash=False, repr=False)
    _trace: GraphTrace = field(hash=False, repr=False, compare=False)

    def _indexes(self) -> Indexes:
        """The per-name position indexes of this graph (built on first use)."""
        return self._trace.indexes(self.cells)

    def __len__(self) -> int:
        return len(self.cells)

    def index(self, key: str) -> int:
        """Position of the cell named ``key``.

        Raises:
            AnalysisError: ``CELL_NOT_FOUND`` when no cell has that key.
        """
        try:
            return self._index[key]
        except KeyError:
            raise AnalysisError(
                ErrorCode.CELL_NOT_FOUND, f"no cell named {key!r}", {"cell": key}
            ) from None

    def node(self, key: str) -> CellNode:
        """The node of the cell named ``key`` (raises ``CELL_NOT_FOUND`` like :meth:`index`)."""
        return self.cells[self.index(key)]

    def parents(self, key: str) -> list[str]:
        """Keys of the cells that ``key`` depends on, in document order."""
        return [self.cells[p].key for p in self.node(key).parents]

    def children(self, key: str) -> list[str]:
        """Keys of the cells that depend on ``key``, in document order."""
        return [self.cells[c].key for c in self.node(key).children]

    def to_dict(self) -> GraphDict:
        """The graph as JSON-ready data (sorted name lists, keys for cross references)."""
        cells: list[CellDict] = []
        for n in self.cells:
            e = n.effects
            err = e.syntax_error
            cells.append(
                {
                    "index": n.index,
                    "key": n.key,
                    "cell_type": n.cell_type,
                    "defines": sorted(e.defines),
                    "uses": sorted(n.uses),
                    "mutates": sorted((e.mutates | e.display_mutates) & n.writes),
                    "reads": sorted(n.reads),
                    "writes": sorted(n.writes),
                    "parents": [self.cells[p].key for p in n.parents],
                    "children": [self.cells[c].key for c in n.children],
                    "opaque_magics": list(e.opaque_magics),
                    "wildcard_writers": list(e.wildcard_writers),
                    "too_large": e.too_large,
                    "syntax_error": None
                    if err is None
                    else {"line": err.line, "col": err.col, "message": err.message},
                }
            )
        edges: list[EdgeDict] = [
            {
                "parent": self.cells[p].key,
                "child": self.cells[c].key,
                "parent_index": p,
                "child_index": c,
                "names": sorted(self.edge_names[(p, c)]),
            }
            for p, c in self.edges
        ]
        return {"cells": cells, "edges": edges, "findings": [f.to_dict() for f in self.findings]}


def cell_node(
    i: int,
    key: str,
    eff: CellEffects,
    res: Resolved,
    *,
    hidden: frozenset[str],
    parents: tuple[int, ...],
    children: tuple[int, ...],
) -> CellNode:
    """The node of cell ``i`` from its effects and resolution (``hidden``: builtins no cell
    writes, left out of ``uses``)."""
    return CellNode(
        index=i,
        key=key,
        effects=eff,
        uses=eff.uses - hidden if not eff.uses.isdisjoint(hidden) else eff.uses,
        reads=eff.uses if res.reads == eff.uses else res.reads,
        writes=res.writes,
        inputs=res.inputs,
        unresolved=res.unresolved,
        parents=parents,
        children=children,
    )


def analyzed(cell: CellInput, index: int) -> CellEffects:
    """:func:`analyze_cell` of one cell; a refusal (``INVALID_CELL_TYPE``) names the cell
    (details ``cell``, its key, and ``index``)."""
    try:
        return analyze_cell(cell.source, cell.cell_type)
    except AnalysisError as err:
        raise AnalysisError(
            err.code,
            f"cell {cell.key!r} (index {index}): {err.message}",
            {**err.details, "cell": cell.key, "index": index},
        ) from err
