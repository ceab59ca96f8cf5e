"""The graph of an edited notebook, from the graph before the edit: work in proportion to it.

Input: a graph and the same cells (same keys, same order) of which some changed source or cell
type. Only the changed cells are analysed again. The full pass (:mod:`._build`) walks down
the notebook with a state (the last writer of each name, the call-time effects, module and
container binding of each name, the last wildcard writer); the cells above the first changed
one see the same state as before, so they keep their resolution. Below it, this pass keeps the
set of names whose state may now differ (*dirty*: a changed cell writes or binds them
differently, or a re-resolved cell now writes a different set of names) and re-resolves only a
cell that looked at a dirty name (its ``probed`` names) or at a wildcard writer that changed;
a cell that writes or binds a dirty name the same way as before makes it clean again. The walk
stops once nothing is dirty below the last changed cell. Re-resolution asks the per-name
position indexes of :mod:`._trace` for the state above (bisection), instead of the full
pass's dictionaries; both give the same answers.

Then edges, parents, children and lint findings are patched for the re-resolved cells, and the
cells whose ``defined_below`` lint or shown ``uses`` may change are redone. Every other node,
edge and finding is shared with the earlier graph.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING

from jupyter_jcli.analysis._graph import CellInput, CellNode, NotebookGraph, analyzed, cell_node
from jupyter_jcli.analysis._names import BUILTIN_NAMES
from jupyter_jcli.analysis._resolve import (
    UNCHANGED,
    Lookups,
    Resolved,
    binding,
    bound_names,
    is_wildcard_writer,
    resolve_cell,
)
from jupyter_jcli.analysis._trace import CopyOnWrite, Extra, GraphTrace, Indexes, builtin_writes
from jupyter_jcli.analysis._types import CallTimeEffects, CellEffects

if TYPE_CHECKING:
    from jupyter_jcli.analysis._lint import Finding

__all__ = ["update_graph"]


class _Above:
    """The full pass's state just above position ``at``, read from the position indexes."""

    __slots__ = ("at", "binders", "effects", "wildcards", "writers")

    def __init__(
        self,
        writers: CopyOnWrite,
        binders: CopyOnWrite,
        wildcards: list[int],
        effects: list[CellEffects],
    ) -> None:
        self.at = 0
        self.writers = writers
        self.binders = binders
        self.wildcards = wildcards
        self.effects = effects

    def writer(self, name: str) -> int | None:
        positions = self.writers.get(name)
        if positions:
            p = bisect_left(positions, self.at)
            if p:
                return positions[p - 1]
        return None

    def _bound(self, name: str, part: int) -> object:
        positions = self.binders.get(name)
        if positions:
            p = bisect_left(positions, self.at)
            while p:
                p -= 1
                value = binding(self.effects[positions[p]], name)[part]
                if value is not UNCHANGED:
                    return value
        return None

    def callable_of(self, name: str) -> CallTimeEffects | None:
        value = self._bound(name, 0)
        return value if isinstance(value, CallTimeEffects) else None

    def is_module(self, name: str) -> bool:
        return self._bound(name, 1) is True

    def is_container(self, name: str) -> bool:
        return self._bound(name, 2) is True

    def wildcard(self) -> int | None:
        p = bisect_left(self.wildcards, self.at)
        return self.wildcards[p - 1] if p else None


def _resolution(node: CellNode, extra: Extra) -> Resolved:
    """The :class:`Resolved` a node was built from (``extra``: the rest, from the trace)."""
    return Resolved(node.reads, node.writes, node.inputs, node.unresolved, *extra)


def _rebind(old: CellEffects, new: CellEffects, dirty: set[str]) -> list[str]:
    """Update ``dirty`` binding names after a cell whose effects changed from ``old``; return
    the names it made dirty."""
    added: list[str] = []
    for name in bound_names(old) | bound_names(new):
        before, after = binding(old, name), binding(new, name)
        if before != after:
            dirty.add(name)
            added.append(name)
        elif UNCHANGED not in before:
            dirty.discard(name)
    return added


def update_graph(
    base: NotebookGraph, cells: Sequence[CellInput], changed: Sequence[int]
) -> NotebookGraph:
    """The graph of ``cells``, equal to a full build, from ``base`` (module docstring).

    Args:
        base: the graph of an earlier version of the notebook.
        cells: the notebook now: the keys of ``base``, in the same order.
        changed: ascending positions whose source or cell type differs from ``base``.

    Raises:
        AnalysisError: ``INVALID_CELL_TYPE`` for a changed cell of an unknown type.
    """
    old = base._trace
    idx = base._indexes()
    n = len(old.keys)
    effects = list(old.effects)
    sources = list(old.sources)
    for i in changed:
        effects[i] = analyzed(cells[i], i)
        sources[i] = cells[i].source
    binders = CopyOnWrite(idx.binders)
    wildcards, counts = idx.wildcards, idx.builtin_counts
    for i in changed:  # binders, wildcards and builtin writes depend on effects alone
        eo, en = old.effects[i], effects[i]
        bo, bn = bound_names(eo), bound_names(en)
        for name in bo - bn:
            binders.remove(name, i)
        for name in bn - bo:
            binders.add(name, i)
        if is_wildcard_writer(eo) != is_wildcard_writer(en):
            wildcards = list(wildcards) if wildcards is idx.wildcards else wildcards
            (insort(wildcards, i) if is_wildcard_writer(en) else wildcards.remove(i))
        wo, wn = builtin_writes(eo), builtin_writes(en)
        if wo != wn:
            counts = dict(counts) if counts is idx.builtin_counts else counts
            for name in wo - wn:
                counts[name] -= 1
                if not counts[name]:
                    del counts[name]
            for name in wn - wo:
                counts[name] = counts.get(name, 0) + 1

    writers = CopyOnWrite(idx.writers)
    lint_binders = CopyOnWrite(idx.lint_binders)
    above = _Above(writers, binders, wildcards, effects)
    lookups = Lookups(above.writer, above.callable_of, above.is_module, above.is_container)
    resolved: dict[int, Resolved] = {}  # the cells resolved again
    todo = set(changed)
    last = changed[-1]
    dirty_writes: set[str] = set()
    dirty_binds: set[str] = set()
    dirty_wildcard = False
    # No cell below ``horizon`` probed a dirty name (or looked at a wildcard writer, when
    # that is dirty): past it and the last changed cell, nothing can change any more.
    last_probe = idx.last_probe
    horizon = -1
    at = changed[0]
    while at < n:
        eo, ro = old.effects[at], base.cells[at]
        probed, wild, call_binds = old.extra(at)
        if (
            at in todo
            or (dirty_writes and not dirty_writes.isdisjoint(probed))
            or (dirty_binds and not dirty_binds.isdisjoint(probed))
            or (dirty_wildcard and wild)
        ):
            en = effects[at]
            above.at = at
            lookups.wildcard = above.wildcard()
            rn = resolve_cell(en, lookups)
            resolved[at] = rn
            if rn.writes != ro.writes:
                for name in ro.writes - rn.writes:
                    writers.remove(name, at)
                for name in rn.writes - ro.writes:
                    writers.add(name, at)
                dirty_writes -= ro.writes & rn.writes
                flipped = ro.writes ^ rn.writes
                dirty_writes |= flipped
                horizon = max(horizon, *(last_probe.get(name, -1) for name in flipped))
            elif dirty_writes:
                dirty_writes -= ro.writes
            lo = eo.defines | call_binds
            ln = en.defines | rn.call_binds
            for name in lo - ln:
                lint_binders.remove(name, at)
            for name in ln - lo:
                lint_binders.add(name, at)
        elif dirty_writes and not dirty_writes.isdisjoint(ro.writes):
            dirty_writes -= ro.writes
        if at in todo:
            en = effects[at]
            for name in _rebind(eo, en, dirty_binds):
                horizon = max(horizon, last_probe.get(name, -1))
            if is_wildcard_writer(eo) and is_wildcard_writer(en):
                dirty_wildcard = False
            elif is_wildcard_writer(eo) != is_wildcard_writer(en):
                dirty_wildcard = True
                horizon = max(horizon, idx.last_wild)
        else:
            if dirty_binds and eo.cell_type == "code" and eo.syntax_error is None:
                dirty_binds -= eo.defines  # a binding resets every part of the state
                dirty_binds -= eo.deletes
            if dirty_wildcard and is_wildcard_writer(eo):
                dirty_wildcard = False
        if at >= last and (at >= horizon or not (dirty_writes or dirty_binds or dirty_wildcard)):
            break
        at += 1
    return _patched(
        base,
        old=old,
        idx=idx,
        effects=effects,
        sources=sources,
        resolved=resolved,
        writers=writers,
        binders=binders,
        wildcards=wildcards,
        lint_binders=lint_binders,
        counts=counts,
    )


def _patched(
    base: NotebookGraph,
    *,
    old: GraphTrace,
    idx: Indexes,
    effects: list[CellEffects],
    sources: list[str],
    resolved: dict[int, Resolved],
    writers: CopyOnWrite,
    binders: CopyOnWrite,
    wildcards: list[int],
    lint_binders: CopyOnWrite,
    counts: dict[str, int],
) -> NotebookGraph:
    """The new graph: ``base`` with the nodes, edges and findings of the changes redone."""
    keys = old.keys
    touched = set(resolved)
    parents_of: dict[int, tuple[int, ...]] = {}
    children_of: dict[int, set[int]] = {}
    edge_names = dict(base.edge_names)
    removed: set[tuple[int, int]] = set()
    added: set[tuple[int, int]] = set()
    unresolved_cells = idx.unresolved_cells
    last_probe, last_wild = idx.last_probe, idx.last_wild
    extras = dict(old.extras)
    for i, rn in resolved.items():
        ro = base.cells[i]
        if rn.probed is not effects[i].uses or rn.wild or rn.call_binds:
            extras[i] = (rn.probed, rn.wild, rn.call_binds)
        else:
            extras.pop(i, None)
        fresh = [name for name in rn.probed if last_probe.get(name, -1) < i]
        if fresh:
            last_probe = dict(last_probe) if last_probe is idx.last_probe else last_probe
            last_probe.update(dict.fromkeys(fresh, i))
        if rn.wild:
            last_wild = max(last_wild, i)
        if bool(ro.unresolved) != bool(rn.unresolved):
            if unresolved_cells is idx.unresolved_cells:
                unresolved_cells = list(unresolved_cells)
            (insort(unresolved_cells, i) if rn.unresolved else unresolved_cells.remove(i))
        if rn.inputs == ro.inputs:
            continue
        groups: dict[int, set[str]] = {}
        for name, p in rn.inputs.items():
            groups.setdefault(p, set()).add(name)
        before = set(base.cells[i].parents)
        for p in before:
            del edge_names[(p, i)]
        for p, names in groups.items():
            edge_names[(p, i)] = frozenset(names)
        for p in before.symmetric_difference(groups):
            kids = children_of.get(p)
            if kids is None:
                kids = children_of[p] = set(base.cells[p].children)
            (kids.add(i) if p in groups else kids.discard(i))
            (added if p in groups else removed).add((p, i))
            touched.add(p)
        parents_of[i] = tuple(sorted(groups))

    hidden = old.hidden
    if counts is not idx.builtin_counts:
        hidden = BUILTIN_NAMES.difference(counts)
        flipped = hidden ^ old.hidden
        if flipped:
            touched.update(j for j, e in enumerate(effects) if not e.uses.isdisjoint(flipped))

    findings = dict(old.findings)

    def _unresolved(j: int) -> frozenset[str]:
        return resolved[j].unresolved if j in resolved else base.cells[j].unresolved

    relint = set(resolved)
    stale_lint = lint_binders.changed
    if stale_lint:
        relint.update(j for j in unresolved_cells if not _unresolved(j).isdisjoint(stale_lint))
    positions = lint_binders.result()
    if relint:
        from jupyter_jcli.analysis._lint import lint_cell  # only when a cell is linted again
    for j in relint:
        found = lint_cell(keys, j, effects[j], _unresolved(j), positions)
        if found:
            findings[j] = tuple(found)
        else:
            findings.pop(j, None)

    nodes = list(base.cells)
    for j in touched:
        node = base.cells[j]
        kids = children_of.get(j)
        nodes[j] = cell_node(
            j,
            keys[j],
            effects[j],
            resolved[j] if j in resolved else _resolution(node, old.extra(j)),
            hidden=hidden,
            parents=parents_of.get(j, node.parents),
            children=node.children if kids is None else tuple(sorted(kids)),
        )
    edges = base.edges
    if added or removed:
        pairs = [e for e in base.edges if e not in removed] if removed else list(base.edges)
        for pair in added:
            insort(pairs, pair)
        edges = tuple(pairs)
    trace = GraphTrace(
        keys,
        tuple(sources),
        effects,
        findings=findings,
        hidden=hidden,
        extras=extras,
        indexes=Indexes(
            writers.result(),
            binders.result(),
            wildcards,
            positions,
            counts,
            unresolved_cells,
            last_probe,
            last_wild,
        ),
    )
    all_findings: tuple[Finding, ...] = (
        tuple(f for i in sorted(findings) for f in findings[i]) if relint else base.findings
    )
    return NotebookGraph(
        cells=tuple(nodes),
        edges=edges,
        edge_names=MappingProxyType(edge_names),
        findings=all_findings,
        _index=base._index,
        _trace=trace,
    )
