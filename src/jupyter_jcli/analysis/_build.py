"""``build_graph``: the notebook's DAG, from scratch or from the graph of an earlier version.

Three ways to the same graph, cheapest first:

- the cells are exactly those of a recent graph (same keys, types and sources): that graph;
- the same keys in the same order, a few cells changed (an edit of sources or cell types):
  :func:`~._incremental.update_graph` re-analyses the changed cells and re-resolves only the
  cells below whose reads the change can reach;
- anything else (cells inserted, deleted, moved or renamed; many changed): the full pass,
  which still takes each unchanged cell's effects from the per-cell cache of
  :func:`~._cell.analyze_cell`.

Recent graphs come from a small process-wide memo (:data:`GRAPH_MEMO_SIZE` graphs, at most
:data:`GRAPH_MEMO_CELLS` cells and :data:`GRAPH_MEMO_CHARS` characters of source in all),
keyed by the tuple of cell keys; or from the caller (``previous=``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from jupyter_jcli.analysis._cell import clear_cache as clear_cell_cache
from jupyter_jcli.analysis._graph import CellInput, CellNode, NotebookGraph, analyzed, cell_node
from jupyter_jcli.analysis._incremental import update_graph
from jupyter_jcli.analysis._names import BUILTIN_NAMES
from jupyter_jcli.analysis._resolve import NOTHING, Lookups, Resolved, resolve_cell
from jupyter_jcli.analysis._trace import Extra, GraphTrace
from jupyter_jcli.analysis._types import CallTimeEffects, CellEffects
from jupyter_jcli.errors import AnalysisError, ErrorCode

if TYPE_CHECKING:
    from jupyter_jcli.analysis._lint import Finding

__all__ = [
    "GRAPH_MEMO_CELLS",
    "GRAPH_MEMO_CHARS",
    "GRAPH_MEMO_SIZE",
    "build_graph",
    "clear_cache",
    "forget_graphs",
]

GRAPH_MEMO_SIZE = 4
"""Graphs the process-wide memo keeps (least recently used dropped first)."""
GRAPH_MEMO_CELLS = 50_000
"""Cells the memo's graphs hold at most, in all; a larger graph is not kept."""
GRAPH_MEMO_CHARS = 32_000_000
"""Characters of cell source the memo's graphs hold at most, in all."""

_memo: OrderedDict[tuple[str, ...], NotebookGraph] = OrderedDict()
_memo_lock = threading.Lock()


def forget_graphs() -> None:
    """Drop every graph of the process-wide memo."""
    with _memo_lock:
        _memo.clear()


def clear_cache() -> None:
    """Forget every cached cell analysis and every remembered graph (for cold-start
    measurements and tests)."""
    clear_cell_cache()
    forget_graphs()


def _recall(keys: tuple[str, ...]) -> NotebookGraph | None:
    with _memo_lock:
        graph = _memo.get(keys)
        if graph is not None:
            _memo.move_to_end(keys)
        return graph


def _latest() -> NotebookGraph | None:
    with _memo_lock:
        return next(reversed(_memo.values()), None)


def _remember(graph: NotebookGraph) -> None:
    trace = graph._trace
    if len(trace.keys) > GRAPH_MEMO_CELLS or trace.size > GRAPH_MEMO_CHARS:
        return
    with _memo_lock:
        _memo[trace.keys] = graph
        _memo.move_to_end(trace.keys)
        cells = sum(len(g) for g in _memo.values())
        chars = sum(g._trace.size for g in _memo.values())
        while len(_memo) > GRAPH_MEMO_SIZE or cells > GRAPH_MEMO_CELLS or chars > GRAPH_MEMO_CHARS:
            _, dropped = _memo.popitem(last=False)
            cells -= len(dropped)
            chars -= dropped._trace.size


def _changed(cells: Sequence[CellInput], trace: GraphTrace) -> list[int]:
    """Positions whose source or cell type differs from the trace's (same keys assumed)."""
    return [
        i
        for i, (cell, source, eff) in enumerate(
            zip(cells, trace.sources, trace.effects, strict=True)
        )
        if (cell.source is not source and cell.source != source) or cell.cell_type != eff.cell_type
    ]


def build_graph(
    cells: Sequence[CellInput], *, previous: NotebookGraph | None = None
) -> NotebookGraph:
    """Analyse every cell and build the notebook's dependency DAG and lint.

    The result is the same whichever way it is computed (module docstring): from a recent
    graph of the same cells, incrementally from one with the same keys, or in full. Per-cell
    analysis is cached by source (see :func:`analyze_cell`). The rules are in :mod:`._graph`.

    Args:
        cells: the notebook's cells in document order.
        previous: a graph of an earlier version of the notebook to start from instead of the
            process-wide memo; it is used when its keys are ``cells``' keys in the same order
            (sources and cell types may differ), else the graph is built in full.

    Returns:
        The :class:`NotebookGraph` (immutable; the same object for the same cells is
        possible).

    Raises:
        AnalysisError: ``NAME_CONFLICT`` when two cells share a key; ``INVALID_CELL_TYPE``
            for a cell type other than code, markdown or raw.
    """
    keys = tuple(c.key for c in cells)
    base = previous if previous is not None else _recall(keys)
    graph: NotebookGraph | None = None
    if base is not None and base._trace.keys == keys:
        changed = _changed(cells, base._trace)
        if not changed:
            graph = base
        elif len(changed) <= max(8, len(keys) // 8):
            graph = update_graph(base, cells, changed)
    if graph is None:
        graph = _full(cells, keys, base if base is not None else _latest())
    _remember(graph)
    return graph


def _effects(cells: Sequence[CellInput], donor: NotebookGraph | None) -> list[CellEffects]:
    """Every cell's effects: a cell of ``donor`` with the same key, type and source lends
    its own (cells moved or next to an inserted one), the others come from the cache."""
    if donor is None:
        return [analyzed(c, i) for i, c in enumerate(cells)]
    where, sources, effects = donor._index, donor._trace.sources, donor._trace.effects
    out: list[CellEffects] = []
    for i, c in enumerate(cells):
        j = where.get(c.key)
        if j is not None:
            source = sources[j]
            eff = effects[j]
            if (source is c.source or source == c.source) and eff.cell_type == c.cell_type:
                out.append(eff)
                continue
        out.append(analyzed(c, i))
    return out


def _full(
    cells: Sequence[CellInput], keys: tuple[str, ...], donor: NotebookGraph | None
) -> NotebookGraph:
    """The full pass: every cell's effects (from ``donor`` or the cache), then one walk
    down the notebook."""
    index: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key in index:
            raise AnalysisError(
                ErrorCode.NAME_CONFLICT,
                f"two cells are named {key!r} (indexes {index[key]} and {i})",
                {"cell": key, "indexes": [index[key], i]},
            )
        index[key] = i
    effects = _effects(cells, donor)
    written: set[str] = set()
    for e in effects:
        written |= e.defines
        written |= e.mutates
    hidden = BUILTIN_NAMES - written  # builtins no cell writes: never shown as uses

    last_writer: dict[str, int] = {}
    callable_of: dict[str, CallTimeEffects] = {}
    modules: set[str] = set()
    containers: set[str] = set()
    above = Lookups(last_writer.get, callable_of.get, modules.__contains__, containers.__contains__)
    resolved: list[Resolved] = []
    extras: dict[int, Extra] = {}
    edge_names: dict[tuple[int, int], set[str]] = {}
    parents: list[set[int]] = [set() for _ in cells]
    children: list[set[int]] = [set() for _ in cells]
    for i, eff in enumerate(effects):
        res = resolve_cell(eff, above)
        resolved.append(res)
        if res is NOTHING:
            continue
        if res.probed is not eff.uses or res.wild or res.call_binds:
            extras[i] = (res.probed, res.wild, res.call_binds)
        own = eff.defines
        last_writer.update(dict.fromkeys(res.writes, i))
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
            above.wildcard = i
        parents_i = parents[i]
        for name, p in res.inputs.items():
            pair = (p, i)
            names = edge_names.get(pair)
            if names is None:
                edge_names[pair] = {name}
                parents_i.add(p)
                children[p].add(i)
            else:
                names.add(name)

    findings: dict[int, tuple[Finding, ...]] = {}
    linted = [
        i
        for i, (eff, res) in enumerate(zip(effects, resolved, strict=True))
        if res.unresolved
        or eff.syntax_error
        or eff.history_refs
        or eff.wildcard_writers
        or eff.opaque_magics
        or eff.too_large
    ]
    if linted:
        from jupyter_jcli.analysis._lint import lint_cell  # only for cells with a finding

        wanted: set[str] = set().union(*(resolved[i].unresolved for i in linted))
        writers: dict[str, list[int]] = {}
        if wanted:
            for i, (eff, res) in enumerate(zip(effects, resolved, strict=True)):
                bound = eff.defines | res.call_binds if res.call_binds else eff.defines
                for name in bound.intersection(wanted):  # defined_below: cells that bind it
                    writers.setdefault(name, []).append(i)
        for i in linted:
            findings[i] = tuple(lint_cell(keys, i, effects[i], resolved[i].unresolved, writers))
    nodes: tuple[CellNode, ...] = tuple(
        cell_node(
            i,
            keys[i],
            eff,
            res,
            hidden=hidden,
            parents=tuple(sorted(parents[i])),
            children=tuple(sorted(children[i])),
        )
        for i, (eff, res) in enumerate(zip(effects, resolved, strict=True))
    )
    sources = tuple(c.source for c in cells)
    trace = GraphTrace(keys, sources, effects, findings=findings, hidden=hidden, extras=extras)
    return NotebookGraph(
        cells=nodes,
        edges=tuple(sorted(edge_names)),
        edge_names=MappingProxyType({k: frozenset(v) for k, v in edge_names.items()}),
        findings=tuple(f for i in sorted(findings) for f in findings[i]),
        _index=MappingProxyType(index),
        _trace=trace,
    )
