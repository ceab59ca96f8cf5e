"""What a built graph keeps so that the next version of its notebook can be built from it.

A :class:`GraphTrace` rides along with every :class:`~._graph.NotebookGraph` (private, never
compared): the keys and sources the graph was built from, each cell's effects, what the
nodes do not keep of each cell's :class:`~._resolve.Resolved` (only where it differs from
the cell's ``uses``, so a graph holds no extra object per cell), the lint findings per cell,
and, built on first use, per-name indexes of the cells that write or bind each name
(:class:`Indexes`), which answer "the nearest cell above position ``i`` that writes
``name``" by bisection. :mod:`._incremental` reads a trace and writes a new one.
"""

from __future__ import annotations

import threading
from bisect import insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from jupyter_jcli.analysis._names import BUILTIN_NAMES
from jupyter_jcli.analysis._resolve import bound_names, is_wildcard_writer
from jupyter_jcli.analysis._types import CellEffects

if TYPE_CHECKING:
    from jupyter_jcli.analysis._graph import CellNode
    from jupyter_jcli.analysis._lint import Finding

_EMPTY: frozenset[str] = frozenset()

Extra = tuple[frozenset[str] | set[str], bool, frozenset[str]]
"""A resolution's ``probed``, ``wild`` and ``call_binds`` (:class:`~._resolve.Resolved`)."""

__all__ = ["CopyOnWrite", "Extra", "GraphTrace", "Indexes", "builtin_writes"]


def builtin_writes(eff: CellEffects) -> frozenset[str]:
    """The builtin names a cell writes (``defines | mutates``), which the graph then shows."""
    written = eff.defines | eff.mutates
    return written.intersection(BUILTIN_NAMES) if written else written


@dataclass(slots=True)
class Indexes:
    """Per-name position lists over one graph's cells (each list ascending).

    Attributes:
        writers: cells whose resolved ``writes`` hold the name.
        binders: cells that set the name's binding (:func:`~._resolve.bound_names`).
        wildcards: wildcard writers (code cells that parse, with ``wildcard_writers``).
        lint_binders: cells that bind the name for the ``defined_below`` lint (``defines``
            and call-time ``global`` bindings).
        builtin_counts: for each builtin name, how many cells write it.
        unresolved_cells: cells with unresolved reads.
        last_probe: for each name, a position at or below the last cell whose resolution
            probed it (:attr:`~._resolve.Resolved.probed`); -1 for none.
        last_wild: a position at or below the last cell whose resolution looked at the
            nearest wildcard writer (:attr:`~._resolve.Resolved.wild`); -1 for none.
    """

    writers: dict[str, list[int]]
    binders: dict[str, list[int]]
    wildcards: list[int]
    lint_binders: dict[str, list[int]]
    builtin_counts: dict[str, int]
    unresolved_cells: list[int]
    last_probe: dict[str, int]
    last_wild: int

    @classmethod
    def of(cls, trace: GraphTrace, nodes: Sequence[CellNode]) -> Indexes:
        """The indexes of a graph's cells (linear in the number of names)."""
        writers: dict[str, list[int]] = {}
        binders: dict[str, list[int]] = {}
        lint_binders: dict[str, list[int]] = {}
        counts: dict[str, int] = {}
        wildcards: list[int] = []
        unresolved: list[int] = []
        last_probe: dict[str, int] = {}
        last_wild = -1
        for i, (eff, res) in enumerate(zip(trace.effects, nodes, strict=True)):
            probed, wild, call_binds = trace.extra(i)
            for name in res.writes:
                writers.setdefault(name, []).append(i)
            for name in bound_names(eff):
                binders.setdefault(name, []).append(i)
            for name in eff.defines | call_binds if call_binds else eff.defines:
                lint_binders.setdefault(name, []).append(i)
            for name in builtin_writes(eff):
                counts[name] = counts.get(name, 0) + 1
            if is_wildcard_writer(eff):
                wildcards.append(i)
            if res.unresolved:
                unresolved.append(i)
            if probed:
                last_probe.update(dict.fromkeys(probed, i))
                if wild:
                    last_wild = i
        return cls(
            writers, binders, wildcards, lint_binders, counts, unresolved, last_probe, last_wild
        )


class GraphTrace:
    """The inputs and intermediate results of one graph (see the module docstring).

    Attributes:
        keys: the cells' keys, in document order.
        sources: the cells' sources, in document order.
        effects: the cells' effects (cell types included).
        findings: lint findings by cell index (cells without findings absent).
        hidden: builtins that no cell writes (left out of ``uses``).
        extras: by cell index, the ``probed``, ``wild`` and ``call_binds`` of its
            :class:`~._resolve.Resolved` when they are not ``(effects.uses, False, ∅)``
            (the node keeps the rest).
        size: characters of source held (for the bound of the graph memo).
    """

    __slots__ = (
        "_indexes",
        "_lock",
        "effects",
        "extras",
        "findings",
        "hidden",
        "keys",
        "size",
        "sources",
    )

    def __init__(
        self,
        keys: tuple[str, ...],
        sources: tuple[str, ...],
        effects: list[CellEffects],
        *,
        findings: Mapping[int, tuple[Finding, ...]],
        hidden: frozenset[str],
        extras: Mapping[int, Extra],
        indexes: Indexes | None = None,
    ) -> None:
        self.keys = keys
        self.sources = sources
        self.effects = effects
        self.findings = findings
        self.hidden = hidden
        self.extras = extras
        self.size = sum(map(len, sources))
        self._indexes = indexes
        self._lock = threading.Lock()

    def extra(self, i: int) -> Extra:
        """Cell ``i``'s ``(probed, wild, call_binds)`` (see ``extras``)."""
        found = self.extras.get(i)
        return (self.effects[i].uses, False, _EMPTY) if found is None else found

    def indexes(self, nodes: Sequence[CellNode]) -> Indexes:
        """The per-name indexes of the graph whose ``nodes`` these are, built on first use."""
        with self._lock:
            if self._indexes is None:
                self._indexes = Indexes.of(self, nodes)
            return self._indexes


class CopyOnWrite:
    """A position index of a new graph that shares the old graph's lists until it changes one."""

    __slots__ = ("_changed", "_copied", "_map", "_owned")

    def __init__(self, base: dict[str, list[int]]) -> None:
        self._map = base
        self._owned = False
        self._copied: set[str] = set()
        self._changed: set[str] = set()

    def get(self, name: str) -> list[int] | None:
        """The positions of ``name`` (do not change the list)."""
        return self._map.get(name)

    def _list(self, name: str) -> list[int]:
        if not self._owned:
            self._map = dict(self._map)
            self._owned = True
        self._changed.add(name)
        if name not in self._copied:
            self._copied.add(name)
            self._map[name] = list(self._map.get(name, ()))
        return self._map[name]

    def add(self, name: str, i: int) -> None:
        """Record position ``i`` for ``name``."""
        insort(self._list(name), i)

    def remove(self, name: str, i: int) -> None:
        """Forget position ``i`` for ``name``."""
        positions = self._list(name)
        positions.remove(i)
        if not positions:
            del self._map[name]
            self._copied.discard(name)

    @property
    def changed(self) -> frozenset[str]:
        """Names whose positions changed."""
        return frozenset(self._changed)

    def result(self) -> dict[str, list[int]]:
        """The index after the changes."""
        return self._map
