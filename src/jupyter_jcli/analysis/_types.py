"""Value types of the static cell analysis: what one cell reads, writes and hides."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["CallTimeEffects", "CellEffects", "SyntaxErrorInfo"]


def _no_callables() -> Mapping[str, CallTimeEffects]:
    return MappingProxyType({})


def _no_order() -> Mapping[str, int]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class CallTimeEffects:
    """What referencing a function or class does when it is called (or instantiated).

    Attributes:
        reads: free global names its body (and the bodies of everything nested in it) reads.
            Names of other functions are included, so the graph resolves them transitively.
        writes: global names its body rebinds through ``global`` or mutates (a mutated name
            is also in ``reads``; a name only rebound is not).
        method_writes: the subset of ``writes`` that comes only from calling an allow-listed
            mutating method (``x.append(...)``); the graph drops these when ``x`` is a module
            bound by ``import`` (``np.sort(a)`` does not mutate ``np``).
    """

    reads: frozenset[str] = frozenset()
    writes: frozenset[str] = frozenset()
    method_writes: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class SyntaxErrorInfo:
    """Where a cell fails to parse. ``line`` is 1-based in the cell, ``col`` 0-based."""

    line: int
    col: int
    message: str


@dataclass(frozen=True, slots=True)
class CellEffects:
    """The static effects of one cell's source on the kernel's global namespace.

    Names are compared as Python identifiers. Markdown and raw cells have empty effects.

    Attributes:
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        defines: names the cell leaves bound at module level (assignment, ``def``, ``class``,
            ``import``, loop and ``with`` targets, walrus targets, ``x = !cmd``, ...).
        uses: names the cell reads before binding them itself, at module level or at call time
            of a function or lambda defined in the same cell. Builtins are included here (the
            graph drops those no cell writes); output-history names are not (see
            ``history_refs``).
        mutates: names the cell changes in place without rebinding (``x[k] = v``,
            ``x.a = v``, ``x.append(v)``, ``inplace=True``, ``del x[k]``, call-time writes of
            same-cell functions). Every mutated name is also in ``uses``.
        method_mutates: the subset of ``mutates`` that comes only from mutating-method calls.
        display_mutates: names whose method the cell's displayed result calls when that
            method mutates a builtin container but is a pure operation elsewhere
            (``seen.add(x)`` or ``df.a.add(2)`` as the last line): a mutation only when the
            name's binding above is a builtin container (``containers``), decided by the
            graph. Also in ``uses``, never in ``mutates``.
        containers: names the cell leaves bound to a builtin container (a list, dict or set
            display or comprehension, ``list()``, ``dict()``, ``set()``, ``deque()``, ...).
        deletes: names bound outside the cell that ``del name`` removes (also in ``uses``).
        imports: the names in ``defines`` that are bound by an ``import`` statement.
        callables: for each function, class or lambda-valued name the cell defines at module
            level, what calling it reads and writes (see :class:`CallTimeEffects`).
        history_refs: output-history names read (``_``, ``__``, ``_3``, ``_i3``, ``Out``,
            ``In``, ...); they never make an edge.
        opaque_magics: names of cell magics whose body is not Python (``bash``, ``html``,
            ``writefile``, ``sql``, ...), in order of appearance.
        wildcard_writers: descriptions of constructs that may bind names nobody can see
            statically (``from m import *``, ``%run``, ``exec()``, ``globals()[...] = ...``).
        magics: every line or cell magic name used, ``%name`` or ``%%name``, in order.
        syntax_error: where the cell fails to parse after IPython's input transformation, or
            ``None``. A cell with a syntax error has no other effects.
        first_read: for each name in ``uses``, the order of its first read in the cell
            (``first_bind`` shares the same counter): a call-time read of a name the cell
            binds is a read from above only if the call comes first.
        first_bind: for each name in ``defines``, the order of its first binding (names the
            cell bound and then unbound, by ``del`` or ``except ... as``, may be present).
        too_large: the source exceeds
            :data:`~jupyter_jcli.analysis.MAX_ANALYZED_SOURCE` characters and was not
            parsed: the cell is opaque, a wildcard writer (it may bind any name), and what
            it reads is unknown (no parents).
    """

    cell_type: str = "code"
    defines: frozenset[str] = frozenset()
    uses: frozenset[str] = frozenset()
    mutates: frozenset[str] = frozenset()
    method_mutates: frozenset[str] = frozenset()
    display_mutates: frozenset[str] = frozenset()
    containers: frozenset[str] = frozenset()
    deletes: frozenset[str] = frozenset()
    imports: frozenset[str] = frozenset()
    callables: Mapping[str, CallTimeEffects] = field(default_factory=_no_callables, hash=False)
    history_refs: frozenset[str] = frozenset()
    opaque_magics: tuple[str, ...] = ()
    wildcard_writers: tuple[str, ...] = ()
    magics: tuple[str, ...] = ()
    syntax_error: SyntaxErrorInfo | None = None
    too_large: bool = False
    first_read: Mapping[str, int] = field(default_factory=_no_order, hash=False, compare=False)
    first_bind: Mapping[str, int] = field(default_factory=_no_order, hash=False, compare=False)
    writes: frozenset[str] = field(init=False, default=frozenset())
    """Every name the cell's own code writes: ``defines | mutates | deletes`` (derived)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "writes", self.defines | self.mutates | self.deletes)

    @property
    def is_opaque(self) -> bool:
        """True when part of the cell is not analysed as Python: a cell magic whose body is
        not Python, or a source too large to analyse."""
        return bool(self.opaque_magics) or self.too_large

    @property
    def is_wildcard(self) -> bool:
        """True when the cell may bind names that static analysis cannot see."""
        return bool(self.wildcard_writers)
