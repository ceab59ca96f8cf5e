"""The workbench: the operations an agent performs on one notebook.

One operation is one function with typed arguments and a typed result (a dataclass with
``to_dict()`` giving its JSON document); nothing here prints. The ``j-cli`` command line and
the MCP servers call these and only render the results. Cells are addressed by name (see
:mod:`jupyter_jcli.notebook.names`); a path may be an ``.ipynb`` or a py:percent ``.py`` paired
with one (jupytext rules; a mutation then rewrites both).

Reads (never create or change a file):

- :func:`notebook_overview` -> :class:`Overview`: per cell name, type, rev, first line,
  defines, uses, mutates, parents, children, lint; the structure rev and a lint summary.
- :func:`notebook_graph` -> :class:`GraphResult`: the dependency DAG as Mermaid, DOT or JSON.
- :func:`read_cells` -> :class:`ReadCellsResult`: sources and condensed outputs (text and
  downscaled images) within one character budget, each cut saying how to read it exactly.

- :func:`list_saved_cells`: one page of a file's cells as the saved-output protocol reads
  them (index, type, name, first line, outputs; a ``.py``'s mapping to its notebook), named
  by :func:`saved_cell_names` (the names the workbench gives them).

Mutations (optimistic locking by ``expected_rev``, snapshot for undo, atomic writes):

- :func:`add_cell`, :func:`update_cell`, :func:`edit_cell_source` (find and replace, on
  ``update_cell``; ``OLD_STRING_COUNT``), :func:`remove_cell`, :func:`move_cell`,
  :func:`clear_outputs` -> :class:`MutationOutcome`, whose ``stale`` lists the cells that must
  re-run (rule in ``workbench._stale``);
- :func:`undo_last` -> :class:`UndoOutcome`.

Kernel-less operations on whole notebooks:

- :func:`create_notebook` -> :class:`CreateOutcome`: a new nbformat 4.5 notebook (optional
  :class:`NewCell` list), kernelspec recorded; never overwrites (``FILE_EXISTS``);
  :func:`list_kernelspecs` -> :class:`KernelspecEntry` list: the kernelspecs installed here.
- :func:`search_cells` -> :class:`SearchOutcome`: substring or regex search of sources,
  names, cached summaries and condensed output text (reads only).
- :func:`summarize_cells` -> :class:`SummarizeOutcome`: detailed summaries through
  :mod:`jupyter_jcli.summaries`, new model summaries cached in the cell metadata.

Kernel-attached operations: methods of an async :class:`Workbench` (one per server process
or command; it owns a :class:`~jupyter_jcli.kernels.KernelPool`, one lazily started kernel per
notebook, and per-notebook execution logs from which each cell's status is computed: ``fresh``,
``stale``, ``error``, ``never_run``):

- ``notebook_overview`` -> :class:`SessionOverview` (the overview plus statuses, tldrs and the
  kernel), ``read_cells`` -> :class:`SessionReadCellsResult` (plus statuses);
- ``execute_cells`` -> :class:`ExecuteOutcome`, ``run_stale`` -> :class:`RunStaleOutcome`:
  per cell :class:`ExecutedCell` (status, execution count, condensed outputs), outputs
  written into the notebook; ``KERNEL_DIED``, ``KERNEL_KILLED`` and ``KERNEL_RESTARTED``
  are reported in the outcome's ``error``; ``kernel_name`` overrides the notebook's
  kernelspec (:func:`kernelspec_hint` lets a front end say how in ``KERNELSPEC_NOT_FOUND``);
- ``restart_kernel``, ``interrupt_kernel`` -> :class:`KernelOutcome`;
- :func:`shared_workbench`: a workbench on the registry's kernels (one per notebook for every
  process: ``j-cli``, ``jupyter-mcp``), execution logs shared (:class:`SharedExecutionLog`);
  :func:`run_cells_with_parents` -> :class:`BatchWithParents`: named cells after their ancestors
  that are not fresh;
- the notebooks' live kernels, outside any one workbench (what ``j-cli kernel`` runs):
  :func:`start_live_kernel`, :func:`list_live_kernels`, :func:`stop_live_kernels`,
  :func:`restart_live_kernel`, :func:`interrupt_live_kernel` (the registry's kernels, or a
  Jupyter Server's sessions), each kernel as JSON by :func:`kernel_dict`; and as a
  long-lived workbench offers them (``jupyter-mcp``): :func:`list_workbench_kernels`,
  :func:`start_workbench_kernel`, :func:`stop_workbench_kernels` (a stop lets the
  workbench's own handle on the kernel go; local kernels confined to given roots);
- ``inspect_variable`` -> :class:`VariableOutcome` (``VARIABLE_NOT_FOUND``,
  ``KERNEL_NOT_RUNNING``); ``list_variables`` -> :class:`VariablesOutcome` (every user
  variable, bounded; ``KERNEL_NOT_RUNNING``);
- ``execute_code`` -> :class:`CodeOutcome`: inline code (or a plain script's text) on the
  notebook's kernel or a scratch kernel, no notebook written; rich or long results saved as
  saved runs (:mod:`jupyter_jcli.runs`), or with ``condensed`` (the MCP tool) condensed as
  ``execute_cells`` gives them.

``Workbench(server=...)`` runs the kernels on a Jupyter Server
(:func:`server_from_options` builds the config from a front end's options and the
environment; every command line declares those options with :func:`server_options` and
:func:`store_option`); a kernel someone else started there is ``attached``: nothing is fresh on it
until it runs there, and ``restart_kernel`` needs ``force`` (``KERNEL_SHARED``).

Errors are :class:`~jupyter_jcli.errors.JcliError` with catalogue codes (``REV_MISMATCH``,
``CELL_NOT_FOUND``, ``NAME_CONFLICT``, ``UNDO_EMPTY``, ``UNDO_CONFLICT``, ``USAGE_ERROR``, ...).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

if TYPE_CHECKING:
    from jupyter_jcli.workbench._background import MAX_WAIT_SECONDS, BackgroundBatch
    from jupyter_jcli.workbench._cell_lists import (
        CELL_LISTS,
        CELLS_LISTED,
        SKIPPED_RUNS,
        bounded_cell_lists,
    )
    from jupyter_jcli.workbench._create import (
        CreateOutcome,
        KernelspecEntry,
        NewCell,
        create_notebook,
        list_kernelspecs,
    )
    from jupyter_jcli.workbench._envelope import compact
    from jupyter_jcli.workbench._execute import (
        DEFAULT_EXECUTE_BUDGET,
        HEARTBEAT_INTERVAL,
        ProgressCallback,
    )
    from jupyter_jcli.workbench._graph_view import (
        GRAPH_FORMATS,
        GraphFormat,
        GraphResult,
        notebook_graph,
    )
    from jupyter_jcli.workbench._inline import (
        SUMMARY_BUDGET,
        SUMMARY_MAX_OUTPUTS,
        CodeOutcome,
    )
    from jupyter_jcli.workbench._inspect import (
        DEFAULT_INSPECT_MAX_CHARS,
        ColumnInfo,
        VariableOutcome,
    )
    from jupyter_jcli.workbench._kernel_choice import kernelspec_hint
    from jupyter_jcli.workbench._live_kernels import (
        interrupt_live_kernel,
        kernel_dict,
        kernel_notebook_path,
        list_live_kernels,
        restart_live_kernel,
        start_live_kernel,
        stop_live_kernels,
    )
    from jupyter_jcli.workbench._mutations import (
        CellRef,
        MutationOutcome,
        UndoOutcome,
        add_cell,
        clear_outputs,
        edit_cell_source,
        move_cell,
        remove_cell,
        undo_last,
        update_cell,
    )
    from jupyter_jcli.workbench._options import (
        STORE_CHOICES,
        given_kernel_username,
        server_options,
        store_option,
    )
    from jupyter_jcli.workbench._outcomes import (
        ErrorEntry,
        ExecutedCell,
        ExecutedCellStatus,
        ExecuteOutcome,
        KernelOutcome,
        RunStaleOutcome,
    )
    from jupyter_jcli.workbench._overview import (
        DEFAULT_OVERVIEW_LIMIT,
        CellOverview,
        Overview,
        check_start,
        notebook_overview,
    )
    from jupyter_jcli.workbench._read import (
        DEFAULT_READ_BUDGET,
        DEFAULT_READ_MAX_IMAGES,
        MIN_CELL_SHARE,
        ReadCell,
        ReadCellsResult,
        read_cells,
    )
    from jupyter_jcli.workbench._saved_cells import (
        CELLS_PAGE_LIMIT,
        SavedCellSummary,
        document_cell_names,
        list_saved_cells,
        saved_cell_names,
        saved_cell_summary,
        saved_outputs_source,
    )
    from jupyter_jcli.workbench._script import ScriptPlan, prepare_script
    from jupyter_jcli.workbench._search import (
        SEARCH_FIELDS,
        SearchField,
        SearchMatch,
        SearchOutcome,
        search_cells,
    )
    from jupyter_jcli.workbench._server import server_from_options, stores_from_options
    from jupyter_jcli.workbench._session import Workbench
    from jupyter_jcli.workbench._shared_workbench import SharedExecutionLog, shared_workbench
    from jupyter_jcli.workbench._stale import stale_between
    from jupyter_jcli.workbench._status_views import (
        SessionCellOverview,
        SessionOverview,
        SessionReadCell,
        SessionReadCellsResult,
    )
    from jupyter_jcli.workbench._store_outputs import saved_outputs
    from jupyter_jcli.workbench._summarize import CellSummary, SummarizeOutcome, summarize_cells
    from jupyter_jcli.workbench._variables import VariablesOutcome
    from jupyter_jcli.workbench._with_parents import BatchWithParents, run_cells_with_parents
    from jupyter_jcli.workbench._workbench_kernels import (
        list_workbench_kernels,
        start_workbench_kernel,
        stop_workbench_kernels,
    )


_PUBLIC = {
    "_background": "MAX_WAIT_SECONDS BackgroundBatch",
    "_cell_lists": "CELL_LISTS CELLS_LISTED SKIPPED_RUNS bounded_cell_lists",
    "_with_parents": "BatchWithParents run_cells_with_parents",
    "_create": "CreateOutcome KernelspecEntry NewCell create_notebook list_kernelspecs",
    "_envelope": "compact",
    "_execute": "DEFAULT_EXECUTE_BUDGET HEARTBEAT_INTERVAL ProgressCallback",
    "_graph_view": "GRAPH_FORMATS GraphFormat GraphResult notebook_graph",
    "_inline": "SUMMARY_BUDGET SUMMARY_MAX_OUTPUTS CodeOutcome",
    "_inspect": "DEFAULT_INSPECT_MAX_CHARS ColumnInfo VariableOutcome",
    "_kernel_choice": "kernelspec_hint",
    "_mutations": (
        "CellRef MutationOutcome UndoOutcome add_cell clear_outputs edit_cell_source move_cell "
        "remove_cell undo_last update_cell"
    ),
    "_outcomes": (
        "ExecutedCellStatus ErrorEntry ExecutedCell ExecuteOutcome KernelOutcome RunStaleOutcome"
    ),
    "_live_kernels": (
        "interrupt_live_kernel kernel_dict kernel_notebook_path list_live_kernels "
        "restart_live_kernel start_live_kernel stop_live_kernels"
    ),
    "_overview": "DEFAULT_OVERVIEW_LIMIT CellOverview Overview check_start notebook_overview",
    "_read": (
        "DEFAULT_READ_BUDGET DEFAULT_READ_MAX_IMAGES MIN_CELL_SHARE ReadCell ReadCellsResult "
        "read_cells"
    ),
    "_saved_cells": (
        "CELLS_PAGE_LIMIT SavedCellSummary document_cell_names list_saved_cells "
        "saved_cell_names saved_cell_summary saved_outputs_source"
    ),
    "_script": "ScriptPlan prepare_script",
    "_search": "SEARCH_FIELDS SearchField SearchMatch SearchOutcome search_cells",
    "_session": "Workbench",
    "_options": "STORE_CHOICES given_kernel_username server_options store_option",
    "_server": "server_from_options stores_from_options",
    "_shared_workbench": "SharedExecutionLog shared_workbench",
    "_stale": "stale_between",
    "_store_outputs": "saved_outputs",
    "_status_views": "SessionCellOverview SessionOverview SessionReadCell SessionReadCellsResult",
    "_summarize": "CellSummary SummarizeOutcome summarize_cells",
    "_variables": "VariablesOutcome",
    "_workbench_kernels": "list_workbench_kernels start_workbench_kernel stop_workbench_kernels",
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562),
so importing the package costs nothing and a command loads only the operations it uses."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
