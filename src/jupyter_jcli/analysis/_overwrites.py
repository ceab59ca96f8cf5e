"""What code run on a notebook's kernel outside its cells did to the cells' kernel state.

Inline code (``j-cli exec NB --code``, ``Workbench.execute_code`` on a notebook) runs on the
kernel the cells ran on, so it can overwrite what they left there: ``b = -1`` after the cell
``b = a + 1`` leaves every cell that read ``b`` judged fresh against a value no cell made.
The rule (the staleness counterpart of an edit, :func:`~._staleness.stale_after_edit`):

1. the code is analysed like a cell placed below every cell of the notebook
   (:func:`code_writes`): the names it defines, rebinds, mutates or deletes, call-time writes of
   the notebook's functions it calls included (``tick()`` whose body does
   ``global steps; steps += 1`` writes ``steps``), resolved against the notebook's graph;
2. code the analyzer cannot see through writes *every* name (``names is None``): a line or
   cell magic other than those it sees through (:func:`~._magics.seen_through`: ``%time``,
   ``%timeit``, ``%%time``, ``%prun``, ``%%capture``, ... are analysed as the same code in a
   cell is, the code they run included; a shell escape ``!cmd`` binds no Python name;
   ``x = !cmd`` binds ``x``), a
   wildcard writer (``exec()``, ``globals()[...] = ...``, ``from m import *``,
   ``%run``), any use of ``exec``, ``eval``, ``globals``, ``locals``, ``vars`` or
   ``get_ipython``, any use of ``__main__`` or ``sys.modules`` (the kernel's namespace
   reached as a module: ``sys.modules["__main__"].x = 0``), a cell magic whose body is
   not Python, code that does not parse or is too large to analyse, and any code on a
   kernel whose language is not Python. Where the cell rules assume a value is kept, the
   code is read conservatively
   (:func:`_conservative_writes`): a call of a known-mutating method (``append``, ``fit``,
   ``x.add_``, ...) writes its receiver's root wherever it appears (in a comprehension, a
   value that is used: ``_ = xs.append(1) or 0``), so does a reference to such a bound method
   (``map(xs.append, ys)``); a plain alias ``x = xs`` makes mutations of ``x`` writes of
   ``xs``; ``except E as e`` at module level unbinds ``e`` (a deletion);
3. the cells it overwrote (:func:`overwritten_cells`) are the cells whose resolved writes hold
   one of its names (they made the value the kernel no longer has) or that read one without a
   writer above (the kernel now has a value they never saw), then, as after an edit, their
   transitive dependents and the replay of the nearest writer of any name such a cell reads
   before it writes it; with ``names is None``, every code cell;
4. a cell is overwritten only if it last ran before the code (:class:`StateChange` ``seq``);
   a cell that ran again since is judged by the usual rule (:func:`~._staleness.fresh_cells`).

Code that only reads (``df.shape``, ``print(x)``) writes nothing and stales nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

from jupyter_jcli.analysis._cell import analyze_cell
from jupyter_jcli.analysis._graph import NotebookGraph
from jupyter_jcli.analysis._incremental import _Above
from jupyter_jcli.analysis._magics import (
    ipython_call,
    magic_call_action,
    parse_python,
    seen_through,
)
from jupyter_jcli.analysis._mutations import MUTATING_METHODS, is_torch_inplace, root_of
from jupyter_jcli.analysis._resolve import Lookups, resolve_cell
from jupyter_jcli.analysis._staleness import StateChange, stale_after_edit
from jupyter_jcli.analysis._trace import CopyOnWrite

__all__ = ["CodeWrites", "StateChange", "code_writes", "overwritten_cells"]

_PYTHON = frozenset({"python", "python3", "ipython", "ipython3"})
_DYNAMIC = frozenset({"exec", "eval", "globals", "locals", "vars", "get_ipython", "__builtins__"})
"""Builtins through which code can bind names the analyzer does not see (even when the code
only reads through them here, the object they return may be written later in the code)."""


@dataclass(frozen=True, slots=True)
class CodeWrites:
    """The names some code run on the kernel may have overwritten.

    Attributes:
        names: the names it defines, rebinds, mutates or deletes (sorted); ``None`` when it
            may have written any name (``opaque`` says why).
        opaque: why the code could not be seen through (``"magic"``, ``"wildcard"``,
            ``"opaque_magic"``, ``"syntax_error"``, ``"too_large"``, ``"language"``), else
            ``None``.
    """

    names: tuple[str, ...] | None
    opaque: str | None = None


def code_writes(
    code: str, graph: NotebookGraph | None = None, *, language: str | None = "python"
) -> CodeWrites:
    """The names ``code`` may write when run on the kernel below every cell of ``graph``.

    Args:
        code: the code, as a cell's source.
        graph: the notebook's graph (its functions' call-time writes count); ``None``: the
            code's own writes only.
        language: the kernel's language (``language_info.name`` or the kernelspec's
            ``language``); anything but Python (or ``None``: unknown) is opaque.

    Returns:
        The :class:`CodeWrites` (module rule).
    """
    if language is None or language.strip().lower() not in _PYTHON:
        return CodeWrites(None, "language")
    effects = analyze_cell(code)
    if effects.syntax_error is not None:
        return CodeWrites(None, "syntax_error")
    if effects.too_large:
        return CodeWrites(None, "too_large")
    if effects.opaque_magics:
        return CodeWrites(None, "opaque_magic")
    if not all(map(seen_through, effects.magics)):
        return CodeWrites(None, "magic")
    if effects.wildcard_writers or not _DYNAMIC.isdisjoint(effects.uses):
        return CodeWrites(None, "wildcard")
    try:
        extra = _conservative_writes(parse_python(code))
    except RecursionError:
        return CodeWrites(None, "too_large")
    if extra is None:
        return CodeWrites(None, "wildcard")
    if graph is None or not graph.cells:
        return CodeWrites(tuple(sorted(effects.writes | extra.names())))
    trace = graph._trace
    indexes = trace.indexes(graph.cells)
    above = _Above(
        CopyOnWrite(indexes.writers), CopyOnWrite(indexes.binders), indexes.wildcards,
        trace.effects,
    )  # fmt: skip
    above.at = len(graph.cells)
    lookups = Lookups(above.writer, above.callable_of, above.is_module, above.is_container)
    lookups.wildcard = above.wildcard()
    writes = resolve_cell(effects, lookups).writes | extra.names(above.is_module)
    return CodeWrites(tuple(sorted(writes)))


def overwritten_cells(graph: NotebookGraph, names: Collection[str] | None) -> list[str]:
    """The cells whose kernel state code writing ``names`` (``None``: any name) may have
    overwritten, in document order (module rule, step 3)."""
    if names is None:
        return [node.key for node in graph.cells if node.cell_type == "code"]
    wanted = frozenset(names)
    if not wanted:
        return []
    seeds = [
        node.key
        for node in graph.cells
        if node.cell_type == "code"
        and (not wanted.isdisjoint(node.writes) or not wanted.isdisjoint(node.unresolved))
    ]
    return stale_after_edit(graph, seeds) if seeds else []


_Function = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


class _Extra:
    """Writes the cell rules leave out (module rule, step 2): ``methods`` mutated through a
    known-mutating method (dropped for names bound to a module), ``stores`` mutated otherwise,
    ``unbound`` by an ``except ... as`` name, and the plain aliases ``x = xs`` (``x`` to the
    names it may stand for)."""

    def __init__(self) -> None:
        self.methods: set[str] = set()
        self.stores: set[str] = set()
        self.unbound: set[str] = set()
        self.aliases: dict[str, set[str]] = {}

    def names(self, is_module: Callable[[str], bool] | None = None) -> frozenset[str]:
        methods = {
            n for n in self._through_aliases(self.methods) if not is_module or not is_module(n)
        }
        return frozenset(methods | self._through_aliases(self.stores) | self.unbound)

    def _through_aliases(self, names: set[str]) -> set[str]:
        out, todo = set(names), list(names)
        while todo:
            for target in self.aliases.get(todo.pop(), ()):
                if target not in out:
                    out.add(target)
                    todo.append(target)
        return out


def _walk(node: ast.AST, in_function: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every node below ``node``, with whether it sits in a function or lambda body; the
    code a magic runs (``%time y = f()``, ``%timeit xs.append(1)``) is walked where the
    magic stands (for ``%timeit``'s private namespace that over-counts, never under-counts:
    an alias ``x = xs`` there still makes ``x.append(1)`` a write of ``xs``)."""
    for child in ast.iter_child_nodes(node):
        yield child, in_function
        yield from _walk(child, in_function or isinstance(child, _Function))
        if isinstance(child, ast.Call):
            yield from _magic_code(child, in_function)


def _magic_code(node: ast.Call, in_function: bool) -> Iterator[tuple[ast.AST, bool]]:
    """The nodes of the code the magic call ``node`` runs, if it is one (:func:`_walk`)."""
    call = ipython_call(node)
    magic = magic_call_action(*call) if call is not None else None
    if magic is None:
        return
    action = magic[1]
    for code in (action.setup, action.code):
        if code is not None:
            yield from _walk(parse_python(code), in_function)


def _is_namespace_module(node: ast.AST) -> bool:
    """``__main__`` or ``sys.modules`` used or imported: the kernel's namespace as a module."""
    if isinstance(node, ast.Name):
        return node.id == "__main__"
    if isinstance(node, ast.Attribute):
        return (
            node.attr == "modules" and isinstance(node.value, ast.Name) and node.value.id == "sys"
        )
    if isinstance(node, ast.Import):
        return any(a.name == "__main__" or a.name.startswith("__main__.") for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.module == "__main__" or (
            node.module == "sys" and any(a.name == "modules" for a in node.names)
        )
    return False


def _conservative_writes(tree: ast.Module) -> _Extra | None:
    """The writes of :class:`_Extra` in ``tree``; ``None`` when it reaches the kernel's
    namespace as a module (opaque)."""
    extra = _Extra()
    for node, in_function in _walk(tree):
        if _is_namespace_module(node):
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            if node.attr in MUTATING_METHODS or is_torch_inplace(node.attr):
                root = root_of(node.value)
                if isinstance(root, ast.Name):
                    extra.methods.add(root.id)
        elif in_function:  # the cell rules already see a function's global writes
            continue
        elif isinstance(node, ast.Attribute | ast.Subscript):  # a store or del below a name
            root = root_of(node.value)
            if isinstance(root, ast.Name):
                extra.stores.add(root.id)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            extra.stores.add(node.target.id)  # in place on a list, a dict, an array
        elif isinstance(node, ast.Assign | ast.NamedExpr) and isinstance(node.value, ast.Name):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    extra.aliases.setdefault(target.id, set()).add(node.value.id)
        elif isinstance(node, ast.ExceptHandler) and node.name is not None:
            extra.unbound.add(node.name)
    return extra
