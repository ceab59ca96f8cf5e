"""One cell's place in the DAG: which cell each name it reads comes from, what it writes.

:func:`resolve_cell` applies the edge rules of :mod:`._graph` to one cell, given the state the
cells above left behind, asked for name by name (``writer``, ``callable_of``, ``is_module``,
``is_container``, ``wildcard``). The full pass asks dictionaries it updates as it walks down
the notebook; the incremental pass (:mod:`._incremental`) asks per-name indexes of the cells
above. Both get the same answers for the same notebook, so both build the same graph.

:func:`bound_names` and :func:`binding` are the other half: what one cell leaves behind for
the cells below, name by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from jupyter_jcli.analysis._names import BUILTIN_NAMES
from jupyter_jcli.analysis._types import CallTimeEffects, CellEffects

__all__ = [
    "NOTHING",
    "UNCHANGED",
    "Binding",
    "Lookups",
    "Resolved",
    "binding",
    "bound_names",
    "is_wildcard_writer",
    "resolve_cell",
]

_EMPTY: frozenset[str] = frozenset()
_NO_INPUTS: Mapping[str, int] = MappingProxyType({})


class Resolved(NamedTuple):
    """One cell resolved against the cells above it.

    Attributes:
        reads: names read, call-time reads included (builtins resolving to no cell left out).
        writes: names written, call-time writes included.
        inputs: for each name in ``reads`` that resolves to a cell, that cell's index.
        unresolved: names read that no cell above writes (not builtins, no wildcard above).
        probed: every name whose state above the cell the resolution looked at (a superset
            of ``reads``): the cell's resolution can change only when the state of one of
            these names changes, or the nearest wildcard writer when ``wild``.
        wild: ``True`` when some non-builtin name had no writer above, so the nearest
            wildcard writer above was looked at too.
        call_binds: names bound only through a called function's ``global`` store.
    """

    reads: frozenset[str]
    writes: frozenset[str]
    inputs: Mapping[str, int]
    unresolved: frozenset[str]
    probed: frozenset[str] | set[str]
    wild: bool
    call_binds: frozenset[str]


NOTHING = Resolved(_EMPTY, _EMPTY, _NO_INPUTS, _EMPTY, _EMPTY, False, _EMPTY)
"""The resolution of a markdown or raw cell, or of a code cell that does not parse."""


def is_wildcard_writer(eff: CellEffects) -> bool:
    """True when the cell is the nearest wildcard writer for the code cells below it."""
    return bool(eff.wildcard_writers) and eff.cell_type == "code" and eff.syntax_error is None


@dataclass(slots=True, eq=False)
class Lookups:
    """The state the cells above a cell left, asked name by name (one object per pass).

    Attributes:
        writer: the nearest cell above that writes a name, or ``None``.
        callable_of: a name's call-time effects as the nearest binding above left them.
        is_module: the name's nearest binding above is an ``import`` (or importing magic).
        is_container: the name's nearest binding above is a builtin container.
        wildcard: the nearest wildcard writer above, or ``None`` (the pass updates it).
    """

    writer: Callable[[str], int | None]
    callable_of: Callable[[str], CallTimeEffects | None]
    is_module: Callable[[str], bool]
    is_container: Callable[[str], bool]
    wildcard: int | None = field(default=None, init=False)


def resolve_cell(eff: CellEffects, above: Lookups) -> Resolved:
    """Resolve one cell's reads and writes against the state the cells above left.

    Returns:
        The cell's :class:`Resolved` (:data:`NOTHING` for cells without edges).
    """
    if eff.cell_type != "code" or eff.syntax_error is not None:
        return NOTHING
    writer, callable_of, is_module = above.writer, above.callable_of, above.is_module
    own = eff.defines
    inputs: dict[str, int] = {}
    unresolved: set[str] = set()
    extra_writes: set[str] = set()
    call_binds: set[str] | None = None
    stack = list(eff.uses)
    seen = set(stack)
    probes: set[str] | None = None
    wild = False
    called = False  # ``seen`` grew past ``uses``
    # A cell that binds names and references functions from above: roots are popped in
    # source order, each with all it reaches at call time before the next, so a call-time
    # read of a name the cell binds counts only when the binding comes later.
    order: Mapping[str, int] | None = None
    first_bind = eff.first_bind
    reached: dict[str, int] = {}  # call-time reads: when their root is first read
    if own and any(map(callable_of, stack)):  # a function's call-time effects are truthy
        order = eff.first_read
        stack.sort(key=order.__getitem__, reverse=True)
    when = 0
    while stack:
        name = stack.pop()
        if order is not None:
            when = reached[name] if name in reached else order[name]
        w = writer(name)
        if w is None:
            if name in BUILTIN_NAMES:
                continue
            wild = True
            if above.wildcard is None:
                unresolved.add(name)
                continue
            w = above.wildcard
        inputs[name] = w
        call = callable_of(name)
        if call is None:
            continue
        called = True
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
            if r in own:
                continue
            if r in call.method_writes:
                if r not in seen:  # never: a mutation is also a read; kept exact anyway
                    probes = (probes or set()) | {r}
                if is_module(r):
                    continue
            extra_writes.add(r)
            if r not in call.reads:  # a call-time binding (for defined_below)
                if call_binds is None:
                    call_binds = set()
                call_binds.add(r)
    writes = eff.writes
    if eff.method_mutates or eff.display_mutates:  # both are in ``uses`` (so in ``seen``)
        unseen = (eff.method_mutates | eff.display_mutates).difference(seen)
        if unseen:
            probes = set(unseen).union(probes or ())
    if eff.method_mutates:
        on_modules = {n for n in eff.method_mutates if is_module(n)}
        if on_modules:
            writes = own | (eff.mutates - on_modules) | eff.deletes
    if eff.display_mutates:
        extra_writes.update(n for n in eff.display_mutates if above.is_container(n))
    if extra_writes:
        writes = writes | extra_writes
    reads = frozenset(inputs).union(unresolved) if unresolved else frozenset(inputs)
    return Resolved(
        reads,
        writes,
        inputs,
        frozenset(unresolved) if unresolved else _EMPTY,
        seen.union(probes) if probes else seen if called else eff.uses,
        wild,
        frozenset(call_binds) if call_binds else _EMPTY,
    )


class _Unchanged:
    """The sentinel of a binding component a cell leaves as the cells above set it."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCHANGED"


UNCHANGED = _Unchanged()
"""A component of :data:`Binding` that the cell does not set."""

Binding = tuple[CallTimeEffects | _Unchanged | None, bool | _Unchanged, bool | _Unchanged]
"""What a cell leaves for one name, for the cells below: its call-time effects (``None``: not
a function any more), whether it is a module, whether it is a builtin container; each
:data:`UNCHANGED` when the cell leaves that part as the cells above set it."""


def bound_names(eff: CellEffects) -> frozenset[str]:
    """The names whose :data:`Binding` the cell sets (empty for cells without edges)."""
    if eff.cell_type != "code" or eff.syntax_error is not None:
        return _EMPTY
    own = eff.defines
    if own and eff.callables:
        own = own.union(eff.callables)
    return own | eff.deletes if eff.deletes else own


def binding(eff: CellEffects, name: str) -> Binding:
    """The :data:`Binding` a cell leaves for ``name``, as the full pass updates its state.

    ``defines`` reset every component (``callables``, ``imports`` and ``containers`` then set
    theirs), a function the cell defines sets its call-time effects, ``del name`` clears all
    three. A name the cell does not bind gets three :data:`UNCHANGED`.
    """
    if eff.cell_type != "code" or eff.syntax_error is not None:
        return (UNCHANGED, UNCHANGED, UNCHANGED)
    if name in eff.deletes:
        return (None, False, False)
    own = eff.defines
    call: CallTimeEffects | _Unchanged | None = UNCHANGED
    if own:
        call = eff.callables.get(name)
        if call is None and name not in own:
            call = UNCHANGED
    if name in own:
        return (call, name in eff.imports, name in eff.containers)
    return (call, UNCHANGED, UNCHANGED)
