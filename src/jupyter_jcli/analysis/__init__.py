"""Static cell analysis and the notebook's dependency DAG. Pure: no kernel, no files.

- :func:`analyze_cell`: one cell's :class:`CellEffects` (defines, uses, mutates, call-time
  effects of its functions, magics, syntax errors), after IPython's input transformation;
  cached by a hash of the source.
- :func:`build_graph`: a :class:`NotebookGraph` over :class:`CellInput` cells: edges from the
  nearest writer above, call-time reads, wildcard fallback, lint :class:`Finding` records.
  Incremental: the graph of a notebook edited in place (same keys in the same order) is
  brought up to date from the graph before the edit (a small process-wide memo, or
  ``previous=``), re-analysing the changed cells and re-resolving only the cells below that
  looked at a name the edit changed; the result equals a build from scratch.
- :func:`stale_after_edit`, :func:`fresh_cells` (:func:`cell_freshness`: with causes),
  :func:`rerun_plan`: what must re-run, one set (a cell the plan runs reads ``stale``);
  :func:`code_writes`, :func:`overwritten_cells`: what inline code run on the kernel
  overwrote (:class:`StateChange` records it in an execution log).
- :func:`to_mermaid`, :func:`to_dot`: the DAG as text for people.

Reads before writes (what the replay rule of :func:`stale_after_edit` and :func:`rerun_plan`
acts on). A cell *reads a name before it writes it* when the name is in both its ``reads``
and its ``writes`` (:class:`CellNode`), which holds when, walking the cell in source order:

- it reads the name at module level before binding it there (``total += 1``;
  ``avg = total / n`` then ``total = 0``; ``x = f(x)``; ``del x`` of a name from above);
- it changes the name in place (every mutation reads: ``x[k] = v``, ``x.a = v``,
  ``x.append(v)``, ``inplace=True``), the mutation rules below deciding what is one;
- it references a function, class or lambda-valued name (defined in this cell or in a cell
  above, transitively through the functions that one references) whose body reads the
  name, and the reference comes before the cell's first binding of the name
  (``avg = mean()`` then ``total = 0``, ``mean`` reading ``total``); a reference after the
  binding reads the cell's own value (``total = 0`` then ``avg = mean()``: no read from
  above). The first reference counts as the call;
- it reads the name and references a function whose body writes it through ``global``:
  by mutation (``global steps; steps += 1``, a read and a write at call time) or by
  rebinding (``global total; total = 0``), in any order: a call does not bind on every path,
  so a read after a rebinding call still counts as a read from above (more re-runs, never
  fewer).

Then the nearest writer above (the cell the name flowed from) was clobbered by the cell's
last run, so re-running the cell alone would start from that run's value: the writer is
re-run first, and with it its dependents.

Mutations (refined rule). A method call on a name changes the object its root name is
bound to when:

- the method always changes its receiver, whatever becomes of its value:
  :data:`MUTATING_METHODS` outside :data:`POLYSEMOUS_METHODS` (``v = xs.pop()``,
  ``model.fit(X, y)`` as the displayed result, ``X2 = poly.fit_transform(X)``), ``inplace=True``,
  torch's ``x.add_(1)``;
- or the method is polysemous (``add``, ``append``, ``insert``, ``resize``, ``rotate``:
  in place and ``None`` on builtins, a pure operation on pandas or PIL objects) and its value
  is discarded (an expression statement), or it is ``append`` / ``insert`` and its value is
  the cell's displayed result, or it is ``add`` / ``resize`` / ``rotate``, its value is the
  cell's displayed result and the name's nearest binding above is a builtin container
  (``seen = set()``, ``d = {}``, ``xs = [...]``, ``deque()``, ...). A call whose value is used
  (assigned, passed on, an operand, the receiver of another attribute) is not a mutation:
  ``df.a.add(2)`` displayed, ``s2 = s.add(1)``, ``df.add(2).plot()`` change nothing.

A module alias is never changed by calling its functions: a name bound by ``import`` or by a
magic that imports (``%pylab`` binds ``np``, ``plt``, ``numpy``, ``matplotlib``, ``pylab``,
``mlab``, ``pyplot`` as modules, and ``figsize``, ``display``, ``getfigs``; it is also a
wildcard writer for its ``from matplotlib.pylab import *`` and ``from numpy import *`` unless
given ``--no-import-all``; ``%matplotlib`` binds nothing), until a cell rebinds it
(``np.append(y, 1)`` and ``np.sort(a)`` write nothing). Assigning to a module's attribute or
item (``plt.rcParams['a'] = b``) is still a mutation. The ``defined_below`` lint counts only
cells that bind a name (directly or through a called function's ``global`` store), never
cells that only change it in place.

IPython is imported lazily, only for cells that hold magics, shell or help syntax.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.analysis._build import build_graph, clear_cache
    from jupyter_jcli.analysis._cell import CELL_TYPES, MAX_ANALYZED_SOURCE, analyze_cell
    from jupyter_jcli.analysis._graph import (
        CellDict,
        CellInput,
        CellNode,
        EdgeDict,
        GraphDict,
        NotebookGraph,
    )
    from jupyter_jcli.analysis._lint import Finding, FindingDict, FindingKind
    from jupyter_jcli.analysis._mutations import (
        ARG_MUTATING_FUNCTIONS,
        MUTATING_METHODS,
        POLYSEMOUS_METHODS,
        PURE_WHEN_DISPLAYED,
    )
    from jupyter_jcli.analysis._names import BUILTIN_NAMES, is_history_name
    from jupyter_jcli.analysis._overwrites import CodeWrites, code_writes, overwritten_cells
    from jupyter_jcli.analysis._render import to_dot, to_mermaid
    from jupyter_jcli.analysis._staleness import (
        CellStatus,
        ExecutionRecord,
        Freshness,
        StateChange,
        cell_freshness,
        fresh_cells,
        overwriting_changes,
        rerun_plan,
        stale_after_edit,
    )
    from jupyter_jcli.analysis._types import CallTimeEffects, CellEffects, SyntaxErrorInfo


_PUBLIC = {
    "_build": "build_graph clear_cache",
    "_cell": "CELL_TYPES MAX_ANALYZED_SOURCE analyze_cell",
    "_graph": "CellDict CellInput CellNode EdgeDict GraphDict NotebookGraph",
    "_lint": "Finding FindingDict FindingKind",
    "_mutations": "ARG_MUTATING_FUNCTIONS MUTATING_METHODS POLYSEMOUS_METHODS PURE_WHEN_DISPLAYED",
    "_names": "BUILTIN_NAMES is_history_name",
    "_overwrites": "CodeWrites code_writes overwritten_cells",
    "_render": "to_dot to_mermaid",
    "_staleness": (
        "CellStatus Freshness ExecutionRecord StateChange cell_freshness fresh_cells "
        "overwriting_changes rerun_plan stale_after_edit"
    ),
    "_types": "CallTimeEffects CellEffects SyntaxErrorInfo",
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562), so
a process loads only the analysis it uses (the ``j-cli exec`` lane: no rendering)."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
