"""Static cell analysis and the notebook's dependency DAG. Pure: no kernel, no files.

- :func:`analyze_cell`: one cell's :class:`CellEffects` (defines, uses, mutates, call-time
  effects of its functions, magics, syntax errors), after IPython's input transformation;
  cached by a hash of the source.
- :func:`build_graph`: a :class:`NotebookGraph` over :class:`CellInput` cells: edges from the
  nearest writer above, call-time reads, wildcard fallback, lint :class:`Finding` records.
- :func:`stale_after_edit`, :func:`fresh_cells`, :func:`rerun_plan`: what must re-run.
- :func:`to_mermaid`, :func:`to_dot`: the DAG as text for people.

IPython is imported lazily, only for cells that hold magics, shell or help syntax.
"""

from __future__ import annotations

from jupyter_jcli.analysis._cell import CELL_TYPES, MAX_ANALYZED_SOURCE, analyze_cell, clear_cache
from jupyter_jcli.analysis._graph import (
    CellDict,
    CellInput,
    CellNode,
    EdgeDict,
    GraphDict,
    NotebookGraph,
    build_graph,
)
from jupyter_jcli.analysis._lint import Finding, FindingDict, FindingKind
from jupyter_jcli.analysis._mutations import ARG_MUTATING_FUNCTIONS, MUTATING_METHODS
from jupyter_jcli.analysis._names import BUILTIN_NAMES, is_history_name
from jupyter_jcli.analysis._render import to_dot, to_mermaid
from jupyter_jcli.analysis._staleness import (
    CellStatus,
    RunRecord,
    fresh_cells,
    rerun_plan,
    stale_after_edit,
)
from jupyter_jcli.analysis._types import CallTimeEffects, CellEffects, SyntaxErrorInfo

__all__ = [
    "ARG_MUTATING_FUNCTIONS",
    "BUILTIN_NAMES",
    "CELL_TYPES",
    "MAX_ANALYZED_SOURCE",
    "MUTATING_METHODS",
    "CallTimeEffects",
    "CellDict",
    "CellEffects",
    "CellInput",
    "CellNode",
    "CellStatus",
    "EdgeDict",
    "Finding",
    "FindingDict",
    "FindingKind",
    "GraphDict",
    "NotebookGraph",
    "RunRecord",
    "SyntaxErrorInfo",
    "analyze_cell",
    "build_graph",
    "clear_cache",
    "fresh_cells",
    "is_history_name",
    "rerun_plan",
    "stale_after_edit",
    "to_dot",
    "to_mermaid",
]
