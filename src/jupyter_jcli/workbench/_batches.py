"""Planning, running and reporting the executions of a :class:`~jupyter_jcli.workbench.Workbench`.

Pure over one loaded snapshot (``_load.Loaded``: the document and its graph, a read-only
topology beside the document) and the notebook's execution log: the statuses and the re-run plan
(:func:`statuses`, :func:`stale_plan`), the cells to run (:func:`code_cells`), the batch
(:func:`run_cells`, over ``_execute.run_batch``) and the results, built field by field
(:func:`execute_outcome`, :func:`run_stale_outcome`, :func:`kernel_outcome`). After a batch
the document holds what its write found and wrote; its graph is the one kept for the same
cells (``_load.build_cell_graph``), so writing outputs costs no analysis.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

from jupyter_jcli.analysis import CellStatus, rerun_plan
from jupyter_jcli.errors import ErrorCode, KernelError, UsageError
from jupyter_jcli.kernels import KernelInfo, NotebookKernel
from jupyter_jcli.notebook.document import CellView
from jupyter_jcli.workbench._execute import (
    DEFAULT_EXECUTE_BUDGET,
    Batch,
    CellCallback,
    ProgressCallback,
    run_batch,
)
from jupyter_jcli.workbench._execution_log import ExecutionLog, not_fresh, statuses
from jupyter_jcli.workbench._load import Loaded, loaded_of
from jupyter_jcli.workbench._outcomes import ExecuteOutcome, KernelOutcome, RunStaleOutcome

__all__ = [
    "BatchOptions",
    "code_cells",
    "empty_batch",
    "execute_outcome",
    "kernel_outcome",
    "not_running",
    "not_started",
    "run_cells",
    "run_stale_outcome",
    "stale_plan",
]


class BatchOptions(NamedTuple):
    """How the cells of one call run: ``timeout`` per cell (seconds; ``None``:
    ``JUPYTER_JCLI_EXECUTE_TIMEOUT`` or 600), ``on_progress`` (see :data:`ProgressCallback`)
    and ``include_images`` (rasters as images in the outcome, else described in text);
    ``on_cell`` gets each finished cell (see :data:`CellCallback`)."""

    timeout: float | None
    on_progress: ProgressCallback | None
    include_images: bool
    on_cell: CellCallback | None = None


def stale_plan(loaded: Loaded, by_name: Mapping[str, CellStatus]) -> tuple[str, ...]:
    """The re-run plan (:func:`jupyter_jcli.analysis.rerun_plan`) for these statuses."""
    return tuple(rerun_plan(loaded.graph, dict(by_name)))


def code_cells(loaded: Loaded, names: Sequence[str]) -> list[CellView]:
    """The named cells of ``loaded``, in the given order.

    Raises:
        NotebookError: ``CELL_NOT_FOUND``.
        UsageError: ``USAGE_ERROR`` when one is a Markdown or raw cell.
    """
    views = [loaded.document.cell(name) for name in names]
    other = [view.name for view in views if view.cell_type != "code"]
    if other:
        raise UsageError(
            "Only code cells can be executed.",
            {"cells": other, "path": str(loaded.document.path)},
        )
    return views


def not_started(notebook_path: Path, kernelspec_name: str) -> KernelInfo:
    """The :class:`KernelInfo` of a notebook whose kernel has not been started."""
    resolved = notebook_path.resolve()
    return KernelInfo(
        notebook_path=resolved,
        state="not_started",
        epoch=None,
        kernelspec_name=kernelspec_name,
        pid=None,
        cwd=resolved.parent,
    )


def empty_batch() -> Batch:
    """The batch of a call that ran nothing."""
    return Batch([], None, False, False, None, None, ())


async def run_cells(
    kernel: NotebookKernel,
    loaded: Loaded,
    views: Sequence[CellView],
    *,
    log: ExecutionLog,
    next_seq: Callable[[], int],
    options: BatchOptions,
) -> Batch:
    """Run ``views`` on ``kernel`` (held by the caller) and write their outputs
    (``_execute.run_batch``); nothing runs for no views.

    Raises:
        The codes of ``_execute.run_batch``.
    """
    if not views:
        return empty_batch()
    return await run_batch(
        kernel,
        loaded.document,
        loaded.graph,
        views,
        log=log,
        next_seq=next_seq,
        timeout=options.timeout,
        on_progress=options.on_progress,
        budget=DEFAULT_EXECUTE_BUDGET,
        include_images=options.include_images,
        on_cell=options.on_cell,
    )


def _after(
    loaded: Loaded, batch: Batch, log: ExecutionLog | None, info: KernelInfo
) -> tuple[str, ...]:
    # a batch error (death, kill, restart, shutdown) means the kernel's state is gone
    epoch = info.epoch if batch.error is None else None
    return not_fresh(statuses(loaded_of(loaded.document), log, epoch))


def execute_outcome(
    loaded: Loaded, info: KernelInfo, batch: Batch, log: ExecutionLog | None
) -> ExecuteOutcome:
    """The :class:`ExecuteOutcome` of ``batch`` (``info``: the kernel after it)."""
    return _batch_outcome(ExecuteOutcome, loaded, info, batch, _after(loaded, batch, log, info))


def run_stale_outcome(
    loaded: Loaded,
    info: KernelInfo,
    batch: Batch,
    log: ExecutionLog | None,
    *,
    plan: Sequence[str],
    dry_run: bool = False,
    still_stale: tuple[str, ...] | None = None,
) -> RunStaleOutcome:
    """The :class:`RunStaleOutcome` of ``batch`` run for ``plan`` (``still_stale``: given
    when nothing ran, from the statuses the plan was made of)."""
    if still_stale is None:
        still_stale = _after(loaded, batch, log, info)
    return _batch_outcome(
        RunStaleOutcome, loaded, info, batch, still_stale, plan=tuple(plan), dry_run=dry_run
    )


_Outcome = TypeVar("_Outcome", bound=ExecuteOutcome)


def _batch_outcome(
    kind: type[_Outcome],
    loaded: Loaded,
    info: KernelInfo,
    batch: Batch,
    still_stale: tuple[str, ...],
    **extra: Any,
) -> _Outcome:
    """``kind`` (an :class:`ExecuteOutcome`) of ``batch``; ``extra``: the fields ``kind``
    adds (a :class:`RunStaleOutcome`'s plan)."""
    document = loaded.document
    return kind(
        path=document.path,
        notebook_path=document.notebook_path,
        cells=tuple(batch.cells),
        stopped_at=batch.stopped_at,
        error=batch.error,
        still_stale=still_stale,
        epoch=batch.epoch,
        kernel_started=batch.kernel_started,
        kernel_restarted=batch.kernel_restarted,
        kernel=info,
        written=batch.written,
        **extra,
    )


def kernel_outcome(
    operation: Literal["restart_kernel", "interrupt_kernel"],
    loaded: Loaded,
    info: KernelInfo,
    log: ExecutionLog | None,
    *,
    previous: str | None,
    interrupted: str | None,
) -> KernelOutcome:
    """The :class:`KernelOutcome` of a restart or interrupt (``info``: the kernel after it)."""
    return KernelOutcome(
        operation=operation,
        path=loaded.document.path,
        notebook_path=loaded.document.notebook_path,
        previous_epoch=previous,
        epoch=info.epoch,
        interrupted_cell=interrupted,
        kernel=info,
        still_stale=not_fresh(statuses(loaded, log, info.epoch)),
    )


def not_running(notebook_path: Path) -> KernelError:
    """``KERNEL_NOT_RUNNING`` for a notebook without a live kernel."""
    return KernelError(
        ErrorCode.KERNEL_NOT_RUNNING,
        "no live kernel for this notebook; execute a cell first",
        {"notebook_path": str(notebook_path)},
    )
