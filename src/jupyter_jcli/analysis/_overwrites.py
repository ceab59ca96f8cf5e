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
   cell magic (a shell escape ``!cmd`` binds no Python name; ``x = !cmd`` binds ``x``), a
   wildcard writer (``exec()``, ``globals()[...] = ...``, ``from m import *``,
   ``%run``), any use of ``exec``, ``eval``, ``globals``, ``locals``, ``vars`` or
   ``get_ipython``, a cell magic whose body is not Python, code that does not parse or is too large
   to analyse, and any code on a kernel whose language is not Python;
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

from collections.abc import Collection
from dataclasses import dataclass

from jupyter_jcli.analysis._cell import analyze_cell
from jupyter_jcli.analysis._graph import NotebookGraph
from jupyter_jcli.analysis._incremental import _Above
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
    if effects.magics:
        return CodeWrites(None, "magic")
    if effects.wildcard_writers or not _DYNAMIC.isdisjoint(effects.uses):
        return CodeWrites(None, "wildcard")
    if graph is None or not graph.cells:
        return CodeWrites(tuple(sorted(effects.writes)))
    trace = graph._trace
    indexes = trace.indexes(graph.cells)
    above = _Above(
        CopyOnWrite(indexes.writers), CopyOnWrite(indexes.binders), indexes.wildcards,
        trace.effects,
    )  # fmt: skip
    above.at = len(graph.cells)
    lookups = Lookups(above.writer, above.callable_of, above.is_module, above.is_container)
    lookups.wildcard = above.wildcard()
    return CodeWrites(tuple(sorted(resolve_cell(effects, lookups).writes)))


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
