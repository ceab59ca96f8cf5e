"""The ``jupyter-mcp`` kernel tools: definitions and operations.

``execute_cells``, ``run_stale`` (``background: true`` answers at once; ``run_status``
follows the run), ``execute_code``, ``restart_kernel``, ``interrupt_kernel``,
``inspect_variable`` and ``list_variables`` act on the notebook's persistent kernel through
the server's :class:`~jupyter_jcli.workbench._session.Workbench` (one kernel per notebook,
started on the first execution, shut down when the server exits). ``list_kernels``,
``start_kernel`` and ``stop_kernel`` are ``j-cli kernel list|start|stop`` on the kernels the
server's configuration sees (the local registry's, or ``--server-url``'s sessions), each
kernel as :func:`~jupyter_jcli.workbench.kernel_dict` gives it, as ``j-cli -j`` does
(:mod:`jupyter_jcli.workbench._workbench_kernels`: a stop lets the server's own handle go,
and local kernels are those under the roots).
Executions report progress (per cell and
a heartbeat) through :class:`~jupyter_jcli.mcp._progress.ProgressReporter` when the client
asked for it; their condensed outputs' charts become ``ImageContent``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from jupyter_jcli.errors import KernelError, UsageError, ok_document
from jupyter_jcli.mcp._registry import Call, Reply
from jupyter_jcli.mcp._workbench_calls import (
    BACKGROUND,
    RESEND_IMAGES,
    RESEND_IMAGES_SCHEMA,
    ToolHandler,
    on_session,
    run_status,
)
from jupyter_jcli.mcp._workbench_tools import PATH, ToolSpec, boolean, integer, string_list
from jupyter_jcli.workbench import (
    MAX_WAIT_SECONDS,
    Workbench,
    kernel_dict,
    kernelspec_hint,
    list_workbench_kernels,
    start_workbench_kernel,
    stop_workbench_kernels,
)

__all__ = ["KERNEL_TOOLS"]

_TIMEOUT: dict[str, Any] = {
    "type": "number",
    "exclusiveMinimum": 0,
    "description": "Seconds per cell (default 600).",
}
_IMAGES: dict[str, Any] = boolean("False: describe charts in text.", default=True)
_KERNEL_NAME: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "description": "Another kernelspec than the notebook's.",
}
_RUN_OPTIONS: dict[str, Any] = {
    "timeout": _TIMEOUT,
    "include_images": _IMAGES,
    RESEND_IMAGES: RESEND_IMAGES_SCHEMA,
    "kernel_name": _KERNEL_NAME,
    BACKGROUND: boolean("Answer at once with a run_id (see run_status).", default=False),
}
"""The options both executing tools take, after their own."""
_KERNEL_HINT = "pass kernel_name (one of details.installed) to start another kernelspec"
_NAMED_HINT = "give kernel_name one of details.installed"
_MISMATCH_HINT = (
    "call restart_kernel with this kernel_name to switch (the variables are lost), or leave "
    "kernel_name out to use the live kernel"
)
_RUN_NOTE = (
    "Saves outputs in the .ipynb; answers each cell's status and condensed outputs, then "
    "`still_stale`. One run per kernel at a time (KERNEL_BUSY)."
)
_RUN_ALIKE = "Answers as execute_cells."


async def _code(
    workbench: Workbench, path: Any, *, operation: Any, condensed: bool, **arguments: Any
) -> Any:
    """``Workbench.execute_code`` as the ``execute_code`` tool calls it."""
    return await workbench.execute_code(path, operation=operation, condensed=condensed, **arguments)


def _hinted(run: ToolHandler) -> ToolHandler:
    """``KERNELSPEC_NOT_FOUND`` says how to choose another kernelspec with this server."""

    async def hinted(workbench: Workbench, call: Call) -> Reply:
        try:
            return await run(workbench, call)
        except KernelError as err:
            hinted_error = kernelspec_hint(err, _KERNEL_HINT, _MISMATCH_HINT, named=_NAMED_HINT)
            if hinted_error is err:
                raise
            raise hinted_error from err

    return hinted


async def _list_kernels(workbench: Workbench, call: Call) -> Reply:
    """``list_kernels``: ``j-cli -j kernel list``'s ``kernels``."""
    kernels = await list_workbench_kernels(workbench, within=call.roots)
    return Reply(ok_document(operation=call.tool, kernels=[kernel_dict(k) for k in kernels]))


async def _start_kernel(workbench: Workbench, call: Call) -> Reply:
    """``start_kernel``: ``j-cli -j kernel start``'s ``started`` and ``kernel``."""
    kernel, started = await start_workbench_kernel(workbench, call.notebook, **call.arguments)
    return Reply(ok_document(operation=call.tool, started=started, kernel=kernel_dict(kernel)))


async def _stop_kernel(workbench: Workbench, call: Call) -> Reply:
    """``stop_kernel``: ``j-cli -j kernel stop``'s ``stopped``; a ``path`` or ``all``.

    Raises:
        UsageError: ``USAGE_ERROR`` for both or neither.
    """
    every = bool(call.arguments.get("all"))
    if (call.path is None) != every:
        details = {"path": str(call.path or ""), "all": every}
        raise UsageError("Give path or all: true, not both.", details)
    stopped = await stop_workbench_kernels(workbench, call.path, within=call.roots)
    return Reply(ok_document(operation=call.tool, stopped=[kernel_dict(k) for k in stopped]))


KERNEL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="execute_cells",
        title="Execute cells",
        description="Run the named code cells in order on the notebook's kernel; stops at the "
        "first failure (after edits, prefer run_stale). " + _RUN_NOTE,
        properties={
            "path": PATH,
            "names": string_list("Code cells, run in this order.", min_items=1),
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
        description="Re-run exactly the cells that are not fresh (edited, failed, never run, "
        "or depending on those), in order, with the writers they need; stops at the first "
        "error. " + _RUN_ALIKE,
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
        name="execute_code",
        title="Execute code",
        description="Run scratch code on the notebook's kernel: no cell added, the file "
        "untouched; cells whose variables it overwrites become stale.",
        properties={
            "path": PATH,
            "code": {"type": "string", "minLength": 1},
            "timeout": _TIMEOUT,
        },
        required=("path", "code"),
        effect="execute",
        open_world=True,
        run=_hinted(on_session(partial(_code, operation="execute_code", condensed=True))),
    ),
    ToolSpec(
        name="run_status",
        title="Background run status",
        description="A background run's progress and outputs so far, or its result (waits up "
        "to wait_s for it).",
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
        description="Restart (or start) the notebook's kernel: variables are lost, every code "
        "cell becomes stale, a running cell is interrupted. A shared kernel "
        "(`kernel.attached`) needs force (else KERNEL_SHARED).",
        properties={
            "path": PATH,
            "kernel_name": _KERNEL_NAME,
            "force": boolean("Only when its other users agreed.", default=False),
        },
        effect="destructive",
        run=_hinted(on_session(Workbench.restart_kernel)),
    ),
    ToolSpec(
        name="interrupt_kernel",
        title="Interrupt the kernel",
        description="Interrupt the running cell (it ends `interrupted`); variables stay. "
        "KERNEL_NOT_RUNNING when the notebook has no kernel.",
        properties={"path": PATH},
        effect="destructive",
        idempotent=True,
        run=on_session(Workbench.interrupt_kernel),
    ),
    ToolSpec(
        name="list_kernels",
        title="List live kernels",
        description="The live kernels (of notebooks under the root, or the Jupyter Server's "
        "sessions), as j-cli kernel list.",
        properties={},
        required=(),
        run=_list_kernels,
    ),
    ToolSpec(
        name="start_kernel",
        title="Start a kept kernel",
        description="Start the notebook's kernel, kept after this server exits (until "
        "stop_kernel or idle_timeout s unused); started: false if one runs.",
        properties={
            "path": PATH,
            "kernel_name": _KERNEL_NAME,
            "idle_timeout": {"type": "number", "exclusiveMinimum": 0},
        },
        effect="start",
        idempotent=True,
        run=_hinted(_start_kernel),
    ),
    ToolSpec(
        name="stop_kernel",
        title="Stop kernels",
        description="Stop the notebook's kernel (or all listed) for everyone: variables "
        "lost, a running cell interrupted. KERNEL_NOT_RUNNING.",
        properties={"path": PATH, "all": {"type": "boolean", "default": False}},
        required=(),
        effect="destructive",
        idempotent=True,
        run=_stop_kernel,
    ),
    ToolSpec(
        name="inspect_variable",
        title="Inspect a variable",
        description="One live global of the notebook's kernel: type, length or shape, dtype "
        "or columns, a bounded head/repr; runs no cell. KERNEL_NOT_RUNNING "
        "(run a cell first), VARIABLE_NOT_FOUND.",
        properties={
            "path": PATH,
            "name": {"type": "string", "minLength": 1},
            "max_chars": integer("Repr bound.", minimum=1, default=2000),
        },
        required=("path", "name"),
        idempotent=True,
        run=on_session(Workbench.inspect_variable),
    ),
    ToolSpec(
        name="list_variables",
        title="List variables",
        description="Every user variable of the notebook's kernel with its type and shape, "
        "length or short repr (bounded), as inspect_variable probes. KERNEL_NOT_RUNNING (run a "
        "cell first).",
        properties={"path": PATH},
        idempotent=True,
        run=on_session(Workbench.list_variables),
    ),
)
