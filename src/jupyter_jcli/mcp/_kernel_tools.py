"""The ``jupyter-mcp`` kernel tools: definitions and operations.

``execute_cells``, ``run_stale`` (``background: true`` answers at once; ``run_status``
follows the run), ``restart_kernel``, ``interrupt_kernel`` and
``inspect_variable`` act on the notebook's persistent kernel through the server's
:class:`~jupyter_jcli.workbench._session.Workbench` (one kernel per notebook, started on the
first execution, shut down when the server exits). Executions report progress (per cell and
a heartbeat) through :class:`~jupyter_jcli.mcp._progress.ProgressReporter` when the client
asked for it; their condensed outputs' charts become ``ImageContent``.
"""

from __future__ import annotations

from typing import Any

from jupyter_jcli.errors import KernelError
from jupyter_jcli.mcp._registry import Call, Reply
from jupyter_jcli.mcp._workbench_calls import (
    BACKGROUND,
    RESEND_IMAGES,
    RESEND_IMAGES_SCHEMA,
    WorkbenchRun,
    on_session,
    run_status,
)
from jupyter_jcli.mcp._workbench_tools import PATH, ToolSpec, boolean, integer, string_list
from jupyter_jcli.workbench import Workbench
from jupyter_jcli.workbench._background import MAX_WAIT_SECONDS
from jupyter_jcli.workbench._cell_lists import CELLS_LISTED
from jupyter_jcli.workbench._kernel_choice import kernelspec_hint

__all__ = ["KERNEL_TOOLS"]

_TIMEOUT: dict[str, Any] = {
    "type": "number",
    "exclusiveMinimum": 0,
    "description": "Seconds each cell may run (default: $JUPYTER_JCLI_EXECUTE_TIMEOUT or "
    "600). A cell past it is interrupted and reported `timeout`; later cells do not run.",
}
_IMAGES: dict[str, Any] = boolean(
    "Return charts as images (false: described in text).", default=True
)
_KERNEL_NAME: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": "Kernelspec to start instead of the notebook's metadata.kernelspec.name "
    "(use it when KERNELSPEC_NOT_FOUND lists the installed ones); remembered for this "
    "notebook by this server once checked. A name not installed is refused "
    "(KERNELSPEC_NOT_FOUND) and not remembered; on a live kernel of another kernelspec the "
    "call is refused (KERNELSPEC_MISMATCH): restart_kernel with kernel_name switches.",
}
_RUN_OPTIONS: dict[str, Any] = {
    "timeout": _TIMEOUT,
    "include_images": _IMAGES,
    RESEND_IMAGES: RESEND_IMAGES_SCHEMA,
    "kernel_name": _KERNEL_NAME,
    BACKGROUND: boolean("Answer at once with a run_id for run_status.", default=False),
}
"""The options both executing tools take, after their own."""
_KERNEL_HINT = "pass kernel_name (one of details.installed) to start another kernelspec"
_MISMATCH_HINT = (
    "call restart_kernel with this kernel_name to switch (the variables are lost), or leave "
    "kernel_name out to use the live kernel"
)
_RUN_NOTE = (
    "Outputs (with execution counts) are written into the .ipynb before the result returns, "
    "so any Jupyter UI shows them; the result gives per cell its status (ok, error, timeout, "
    "died, interrupted, skipped), condensed outputs (text within about 20,000 characters, "
    "charts as images; a chart already sent in this session for the same cell rev and output "
    "is referred to, resend_images=true sends it again), `not_written_reason` "
    "(cell_changed, cell_removed) when a cell was edited or removed while it ran, and "
    f"`still_stale` (lists of cells hold at most {CELLS_LISTED} names, `<list>_count` all, a "
    "`notice` "
    "what was left out; `skipped_count` the cells skipped after a stop). Never two "
    "executions at once on one kernel (KERNEL_BUSY). input() fails at once. The call's "
    "`error` says when the kernel's state was lost: KERNEL_DIED (it crashed; the next "
    "execution starts a new one), KERNEL_KILLED (a cell ignored the interrupt after its "
    "timeout, `kernel_killed` true, so the kernel was killed), KERNEL_RESTARTED "
    "(restart_kernel interrupted the running cell: `interrupted_by` kernel_restarted, its "
    "outputs so far saved). Sends progress notifications (per cell, and a heartbeat at "
    "least every 10 s) when the request carries a progressToken. Cost: the cells' run time; "
    "the first execution also starts the kernel (a few seconds)."
)


def _hinted(run: WorkbenchRun) -> WorkbenchRun:
    """``KERNELSPEC_NOT_FOUND`` says how to choose another kernelspec with this server."""

    async def hinted(workbench: Workbench, call: Call) -> Reply:
        try:
            return await run(workbench, call)
        except KernelError as err:
            hinted_error = kernelspec_hint(err, _KERNEL_HINT, _MISMATCH_HINT)
            if hinted_error is err:
                raise
            raise hinted_error from err

    return hinted


KERNEL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="execute_cells",
        title="Execute cells",
        description="Run the named code cells, in the order given, on the notebook's "
        "persistent kernel (started in the notebook's folder on first use); stops at the "
        "first cell that fails. Prefer run_stale after edits: it runs exactly what is "
        "needed. " + _RUN_NOTE,
        properties={
            "path": PATH,
            "names": string_list("Code cell names, run in this order.", min_items=1),
            **_RUN_OPTIONS,
        },
        required=("path", "names"),
        effect="execute",
        open_world=True,
        run=_hinted(on_session(Workbench.execute_cells, reports_progress=True)),
    ),
    ToolSpec(
        name="run_stale",
        title="Run stale cells",
        description="Re-run exactly the cells that are not fresh (edited, failed, never "
        "run on this kernel, or downstream of those in the dependency graph), in document "
        "order, replaying a writer first where a cell updates a variable in place; stops at "
        "the first error and lists what is still stale. With no live kernel that is every "
        "code cell. dry_run=true returns the plan only (no kernel, nothing runs: cheap). "
        + _RUN_NOTE,
        properties={
            "path": PATH,
            "dry_run": boolean("Only return the plan.", default=False),
            **_RUN_OPTIONS,
        },
        effect="execute",
        open_world=True,
        run=_hinted(on_session(Workbench.run_stale, reports_progress=True)),
    ),
    ToolSpec(
        name="run_status",
        title="Background run status",
        description="A background run's progress and outputs so far, or its result; waits up "
        "to wait_s for its end. RUN_NOT_FOUND: unknown or expired run_id.",
        properties={
            "path": PATH,
            "run_id": {"type": "string", "minLength": 1},
            "wait_s": {"type": "number", "minimum": 0, "maximum": MAX_WAIT_SECONDS, "default": 0},
        },
        required=("path", "run_id"),
        idempotent=True,
        run=run_status,
    ),
    ToolSpec(
        name="restart_kernel",
        title="Restart the kernel",
        description="Restart the notebook's kernel (or start one): every variable is lost "
        "and a new epoch begins, so every code cell becomes stale (run_stale re-runs them). "
        "Use it when the kernel state is confused or after installing a package. A cell "
        "running meanwhile is interrupted first (`interrupted_cell`; its call reports it "
        "`interrupted` with KERNEL_RESTARTED and saves its outputs so far). Cost: a few "
        "seconds. A kernel shared with someone else (`kernel.attached` true, e.g. a "
        "JupyterLab session on the Jupyter Server: their variables would be lost too) is "
        "refused with KERNEL_SHARED unless force is true.",
        properties={
            "path": PATH,
            "kernel_name": _KERNEL_NAME,
            "force": boolean(
                "Restart a shared (attached) kernel too, wiping the variables of whoever else "
                "uses it. Only when they agreed.",
                default=False,
            ),
        },
        effect="destructive",
        run=_hinted(on_session(Workbench.restart_kernel)),
    ),
    ToolSpec(
        name="interrupt_kernel",
        title="Interrupt the kernel",
        description="Interrupt the cell running on the notebook's kernel (its call reports it "
        "`interrupted`, interrupted_by kernel_interrupted, with the KeyboardInterrupt; "
        "variables are kept, the epoch too). KERNEL_NOT_RUNNING when the notebook has no "
        "kernel. Cheap.",
        properties={"path": PATH},
        effect="destructive",
        idempotent=True,
        run=on_session(Workbench.interrupt_kernel),
    ),
    ToolSpec(
        name="inspect_variable",
        title="Inspect a variable",
        description="Look at one live global variable of the notebook's kernel: type, "
        "length or shape, dtype or column schema, and a bounded head/repr. Adds no cell, "
        "leaves execution counts and history alone, imports nothing the notebook has not "
        "imported. KERNEL_NOT_RUNNING without a kernel (run a cell first; on a Jupyter "
        "Server the notebook's kernel, e.g. a person's JupyterLab session, is joined "
        "instead), "
        "VARIABLE_NOT_FOUND for an unknown name. Cheap: at most max_chars characters.",
        properties={
            "path": PATH,
            "name": {
                "type": "string",
                "minLength": 1,
                "description": "A global variable name (a Python identifier).",
            },
            "max_chars": integer("Bound of the repr, in characters.", minimum=1, default=2000),
        },
        required=("path", "name"),
        idempotent=True,
        run=on_session(Workbench.inspect_variable),
    ),
)
