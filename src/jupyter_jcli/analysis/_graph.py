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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TypedDict

from jupyter_jcli.analysis._cell import analyze_cell
from jupyter_jcli.analysis._lint import Finding, FindingDict, lint_cells
from jupyter_jcli.analysis._names import BUILTIN_NAMES
from jupyter_jcli.analysis._types import CallTimeEffects, CellEffects
from jupyter_jcli.errors import AnalysisError, ErrorCode

__all__ = ["CellInput", "CellNode", "GraphDict", "NotebookGraph", "build_graph"]


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


_NO_INPUTS: Mapping[str, int] = MappingProxyType({})


def _has_lint(eff: CellEffects) -> bool:
    return bool(
        eff.syntax_error
        or eff.history_refs
        or eff.wildcard_writers
        or eff.opaque_magics
        or eff.too_large
    )


def build_graph(cells: Sequence[CellInput]) -> NotebookGraph:
    """Analyse every cell and build the notebook's dependency DAG and lint.

    Per-cell analysis is cached by source (see :func:`analyze_cell`); building the graph from
    cached cells is linear in the number of names. The rules are in this module's docstring.

    Args:
        cells: the notebook's cells in document order.

    Returns:
        The :class:`NotebookGraph`.

    Raises:
        AnalysisError: ``NAME_CONFLICT`` when two cells share a key; ``INVALID_CELL_TYPE``
            for a cell type other than code, markdown or raw.
    """
    index: dict[str, int] = {}
    for i, c in enumerate(cells):
        if c.key in index:
            raise AnalysisError(
                ErrorCode.NAME_CONFLICT,
                f"two cells are named {c.key!r} (indexes {index[c.key]} and {i})",
                {"cell": c.key, "indexes": [index[c.key], i]},
            )
        index[c.key] = i
    effects = [_analyzed(c, i) for i, c in enumerate(cells)]
    written: set[str] = set()
    for e in effects:
        written |= e.defines
        written |= e.mutates
    hidden = BUILTIN_NAMES - written  # builtins no cell writes: never shown as uses

    last_writer: dict[str, int] = {}
    callable_of: dict[str, CallTimeEffects] = {}
    modules: set[str] = set()
    wildcard: int | None = None
    empty: frozenset[str] = frozenset()
    partial: list[tuple[frozenset[str], frozenset[str], Mapping[str, int], frozenset[str]]] = []
    edge_names: dict[tuple[int, int], set[str]] = {}
    containers: set[str] = set()
    call_binds: dict[int, set[str]] = {}
    parents: list[set[int]] = [set() for _ in cells]
    children: list[set[int]] = [set() for _ in cells]
    for i, eff in enumerate(effects):
        if eff.cell_type != "code" or eff.syntax_error is not None:
            partial.append((empty, empty, _NO_INPUTS, empty))
            continue
        own = eff.defines
        inputs: dict[str, int] = {}
        unresolved: set[str] = set()
        extra_writes: set[str] = set()
        stack = list(eff.uses)
        seen = set(stack)
        # A cell that binds names and references functions from above: roots are popped in
        # source order, each with all it reaches at call time before the next, so a
        # call-time read of a name the cell binds counts only when the binding comes later.
        order: Mapping[str, int] | None = None
        first_bind = eff.first_bind
        reached: dict[str, int] = {}  # call-time reads: when their root is first read
        if own and not eff.uses.isdisjoint(callable_of):
            order = eff.first_read
            stack.sort(key=order.__getitem__, reverse=True)
        when = 0
        while stack:
            name = stack.pop()
            if order is not None:
                when = reached[name] if name in reached else order[name]
            w = last_writer.get(name)
            if w is None:
                if name in BUILTIN_NAMES:
                    continue
                if wildcard is None:
                    unresolved.add(name)
                    continue
                w = wildcard
            inputs[name] = w
            call = callable_of.get(name)
            if call is None:
                continue
            for r in call.reads:
                if r not in seen:
                    seen.add(r)
                    if r not in own:
                        stack.append(r)
                        if order is not None:
                            reached[r] = when
                    elif order is not None and first_bind[r] > when:
                        stack.append(r)
                        reached[r] = when
            for r in call.writes:  # mutations are in call.reads too; ``global`` stores not
                if r not in own and not (r in modules and r in call.method_writes):
                    extra_writes.add(r)
                    if r not in call.reads:  # a call-time binding (for defined_below)
                        call_binds.setdefault(i, set()).add(r)
        writes = eff.writes
        if eff.method_mutates and not eff.method_mutates.isdisjoint(modules):
            writes = own | (eff.mutates - (eff.method_mutates & modules)) | eff.deletes
        if eff.display_mutates:
            extra_writes.update(eff.display_mutates & containers)
        if extra_writes:
            writes = writes | extra_writes
        last_writer.update(dict.fromkeys(writes, i))
        if own:
            for name in own.difference(eff.callables).intersection(callable_of):
                del callable_of[name]
            callable_of.update(eff.callables)
            modules -= own
            modules |= eff.imports
            containers -= own
            containers |= eff.containers
        if eff.deletes:
            for name in eff.deletes.intersection(callable_of):
                del callable_of[name]
            modules -= eff.deletes
            containers -= eff.deletes
        if eff.wildcard_writers:
            wildcard = i
        parents_i = parents[i]
        for name, p in inputs.items():
            pair = (p, i)
            names = edge_names.get(pair)
            if names is None:
                edge_names[pair] = {name}
                parents_i.add(p)
                children[p].add(i)
            else:
                names.add(name)
        reads = frozenset(inputs).union(unresolved) if unresolved else frozenset(inputs)
        partial.append((reads, frozenset(writes), inputs, frozenset(unresolved) or empty))

    findings: list[Finding] = []
    if any(p[3] for p in partial) or any(_has_lint(e) for e in effects):
        wanted: set[str] = set().union(*(p[3] for p in partial))
        writers: dict[str, list[int]] = {}
        for i, eff in enumerate(effects):  # defined_below: only cells that bind the name
            bound = eff.defines | call_binds[i] if i in call_binds else eff.defines
            for name in bound.intersection(wanted):
                writers.setdefault(name, []).append(i)
        findings = lint_cells([c.key for c in cells], effects, [p[3] for p in partial], writers)
    nodes = tuple(
        CellNode(
            index=i,
            key=cells[i].key,
            effects=eff,
            uses=eff.uses - hidden if not eff.uses.isdisjoint(hidden) else eff.uses,
            reads=eff.uses if reads_i == eff.uses else reads_i,
            writes=writes_i,
            inputs=inputs_i,
            unresolved=unresolved_i,
            parents=tuple(sorted(parents[i])),
            children=tuple(sorted(children[i])),
        )
        for i, (eff, (reads_i, writes_i, inputs_i, unresolved_i)) in enumerate(
            zip(effects, partial, strict=True)
        )
    )
    return NotebookGraph(
        cells=nodes,
        edges=tuple(sorted(edge_names)),
        edge_names=MappingProxyType({k: frozenset(v) for k, v in edge_names.items()}),
        findings=tuple(findings),
        _index=MappingProxyType(index),
    )


def _analyzed(cell: CellInput, index: int) -> CellEffects:
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
