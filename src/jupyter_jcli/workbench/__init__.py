"""The workbench: the operations an agent performs on one notebook.

One operation is one function with typed arguments and a typed result (a dataclass with
``to_dict()`` giving its JSON document); nothing here prints. The ``j-cli`` command line and
the MCP servers call these and only render the results. Cells are addressed by name (see
:mod:`jupyter_jcli.notebook.names`); a path may be an ``.ipynb`` or a py:percent ``.py`` paired
with one (jupytext rules; a mutation then rewrites both). This layer is kernel-less for now.

Reads (never create or change a file):

- :func:`notebook_overview` -> :class:`Overview`: per cell name, type, rev, first line,
  defines, uses, mutates, parents, children, lint; the structure rev and a lint summary.
- :func:`notebook_graph` -> :class:`GraphResult`: the dependency DAG as Mermaid, DOT or JSON.
- :func:`read_cells` -> :class:`ReadCellsResult`: sources and condensed outputs (text and
  downscaled images) within one character budget, each cut saying how to read it exactly.

Mutations (optimistic locking by ``expected_rev``, snapshot for undo, atomic writes):

- :func:`add_cell`, :func:`update_cell`, :func:`remove_cell`, :func:`move_cell` ->
  :class:`MutationOutcome`, whose ``stale`` lists the cells that must re-run (rule in
  ``workbench._stale``);
- :func:`undo_last` -> :class:`UndoOutcome`.

Kernel-less operations on whole notebooks:

- :func:`create_notebook` -> :class:`CreateOutcome`: a new nbformat 4.5 notebook (optional
  :class:`NewCell` list), kernelspec recorded; never overwrites (``FILE_EXISTS``).
- :func:`search_cells` -> :class:`SearchOutcome`: substring or regex search of sources,
  names, cached summaries and condensed output text (reads only).
- :func:`summarize_cells` -> :class:`SummarizeOutcome`: detailed summaries through
  :mod:`jupyter_jcli.summaries`, new model summaries cached in the cell metadata.

Errors are :class:`~jupyter_jcli.errors.JcliError` with catalogue codes (``REV_MISMATCH``,
``CELL_NOT_FOUND``, ``NAME_CONFLICT``, ``UNDO_EMPTY``, ``UNDO_CONFLICT``, ``USAGE_ERROR``, ...).
"""

from __future__ import annotations

from jupyter_jcli.workbench._create import CreateOutcome, NewCell, create_notebook
from jupyter_jcli.workbench._graph_view import (
    GRAPH_FORMATS,
    GraphFormat,
    GraphResult,
    notebook_graph,
)
from jupyter_jcli.workbench._mutations import (
    CellRef,
    MutationOutcome,
    UndoOutcome,
    add_cell,
    move_cell,
    remove_cell,
    undo_last,
    update_cell,
)
from jupyter_jcli.workbench._overview import CellOverview, Overview, notebook_overview
from jupyter_jcli.workbench._read import (
    DEFAULT_READ_BUDGET,
    DEFAULT_READ_MAX_IMAGES,
    MIN_CELL_SHARE,
    ReadCell,
    ReadCellsResult,
    read_cells,
)
from jupyter_jcli.workbench._search import (
    SEARCH_FIELDS,
    SearchField,
    SearchMatch,
    SearchOutcome,
    search_cells,
)
from jupyter_jcli.workbench._stale import stale_between
from jupyter_jcli.workbench._summarize import CellSummary, SummarizeOutcome, summarize_cells

__all__ = [
    "DEFAULT_READ_BUDGET",
    "DEFAULT_READ_MAX_IMAGES",
    "GRAPH_FORMATS",
    "MIN_CELL_SHARE",
    "SEARCH_FIELDS",
    "CellOverview",
    "CellRef",
    "CellSummary",
    "CreateOutcome",
    "GraphFormat",
    "GraphResult",
    "MutationOutcome",
    "NewCell",
    "Overview",
    "ReadCell",
    "ReadCellsResult",
    "SearchField",
    "SearchMatch",
    "SearchOutcome",
    "SummarizeOutcome",
    "UndoOutcome",
    "add_cell",
    "create_notebook",
    "move_cell",
    "notebook_graph",
    "notebook_overview",
    "read_cells",
    "remove_cell",
    "search_cells",
    "stale_between",
    "summarize_cells",
    "undo_last",
    "update_cell",
]
