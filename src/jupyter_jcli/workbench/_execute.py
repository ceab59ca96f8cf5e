"""Running a batch of cells on a notebook's kernel and writing what they produced.

The caller holds the kernel (``NotebookKernel.hold``) for the whole batch, so no other call
interleaves. Cells run in the given order; the first one that does not end ``ok`` stops the
batch (the rest are ``skipped``). The outputs and execution counts of the cells that ran, and
the display updates they sent to earlier cells, are written into the notebook as the cells
finish, at most every 2 s, and what remains once the batch ends, still holding the kernel
(``_batch_save.BatchSaver`` over ``Document.write_outputs``: atomic writes, outside edits
kept, a cell edited meanwhile not overwritten); a process killed mid-batch keeps the cells
that finished. Outputs are stored as Jupyter stores them (nbformat ``split_lines``:
multi-line strings of streams and of ``text/*``, ``application/javascript`` and
``image/svg+xml`` data as lists of lines).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import anyio

from jupyter_jcli.analysis import NotebookGraph
from jupyter_jcli.errors import ErrorCode, KernelError, NotebookError
from jupyter_jcli.kernels import (
    SETTLE_TIMEOUT,
    ExecutionResult,
    InterruptReason,
    NotebookKernel,
    execute_timeout,
    kernel_died,
)
from jupyter_jcli.notebook.document import CellView, Document
from jupyter_jcli.notebook.live import LiveCell, live_sink
from jupyter_jcli.workbench._batch_save import BatchSaver
from jupyter_jcli.workbench._execution_log import ExecutionLog
from jupyter_jcli.workbench._outcomes import ErrorEntry, ExecutedCell, NotWrittenReason
from jupyter_jcli.workbench._read import _condense_all
from jupyter_jcli.workbench._stored import file_outputs

__all__ = [
    "CELL_BUDGET",
    "DEFAULT_EXECUTE_BUDGET",
    "HEARTBEAT_INTERVAL",
    "MAX_EXECUTE_IMAGES",
    "WRITE_TIMEOUT",
    "Batch",
    "CellCallback",
    "ProgressCallback",
    "file_outputs",
    "run_batch",
]

ProgressCallback = Callable[[float, "float | None", str], Awaitable[None]]
"""``(progress, total, message)``: cells finished (a fraction while one runs, growing with
every call), the number of cells, and a line for a person. Failures of the callback are
ignored (progress is advisory) and stop further calls."""

CellCallback = Callable[[ExecutedCell], None]
"""Called with each cell as it finishes (outputs condensed within :data:`CELL_BUDGET`
characters, images described), before the batch ends; for a background batch's ``run_status``."""
CELL_BUDGET = 2_000
"""Characters of condensed output text a :data:`CellCallback` gets per cell."""

DEFAULT_EXECUTE_BUDGET = 20_000
"""Characters of condensed output text returned per execution call, over all its cells."""
MAX_EXECUTE_IMAGES = 8
"""Rasters returned as images per execution call; later ones are described in text."""
HEARTBEAT_INTERVAL = 5.0
"""Seconds between progress calls while one cell runs (MCP hosts want one at least every 10 s)."""
WRITE_TIMEOUT = 30.0
"""Seconds the write of a cancelled batch's finished results may take."""


class _Progress:
    """Strictly growing progress calls: ``done`` at a cell's start, then heartbeats."""

    def __init__(self, callback: ProgressCallback | None, total: int) -> None:
        self.callback = callback
        self.total = float(total)
        self.done = 0

    async def send(self, progress: float, message: str) -> None:
        if self.callback is None:
            return
        try:
            await self.callback(progress, self.total, message)
        except Exception:
            self.callback = None

    async def heartbeat(self, name: str) -> None:
        started = time.monotonic()
        beats = 0
        while self.callback is not None:
            await anyio.sleep(HEARTBEAT_INTERVAL)
            beats += 1
            elapsed = time.monotonic() - started
            fraction = 0.99 * beats / (beats + 1)
            await self.send(self.done + fraction, f"running {name} ({elapsed:.0f} s)")


@dataclass
class Batch:
    """What one batch did.

    Attributes:
        cells: one :class:`ExecutedCell` per requested cell, in run order.
        epoch: the epoch the cells ran on (``None`` when nothing ran).
        kernel_started: a new kernel was started for the batch.
        kernel_restarted: it replaced one that had died.
        stopped_at: the first cell that did not end ``ok``.
        error: what took the kernel's state away during the batch (``KERNEL_DIED``,
            ``KERNEL_KILLED``, ``KERNEL_RESTARTED``, ``KERNEL_NOT_RUNNING``), else ``None``.
        written: names of the cells whose outputs were written.
    """

    cells: list[ExecutedCell]
    epoch: str | None
    kernel_started: bool
    kernel_restarted: bool
    stopped_at: str | None
    error: ErrorEntry | None
    written: tuple[str, ...]


async def run_batch(
    kernel: NotebookKernel,
    document: Document,
    graph: NotebookGraph,
    cells: Sequence[CellView],
    *,
    log: ExecutionLog,
    next_seq: Callable[[], int],
    timeout: float | None,
    on_progress: ProgressCallback | None,
    budget: int = DEFAULT_EXECUTE_BUDGET,
    include_images: bool = True,
    max_images: int = MAX_EXECUTE_IMAGES,
    on_cell: CellCallback | None = None,
) -> Batch:
    """Run ``cells`` (code cells of ``document``, in this order) on ``kernel`` (held by the
    caller), write the results into the notebook as the cells finish (at most every
    :data:`~jupyter_jcli.workbench._batch_save.SAVE_INTERVAL` s, and at the end) and record
    each run in ``log`` once its write was attempted. ``on_cell`` gets each finished cell
    (condensed within :data:`CELL_BUDGET`, images described) as it ends.

    A restart or shutdown of the kernel asked for while the batch runs stops it: the running
    cell ends ``interrupted`` (or, between two cells, the next one is reported
    ``interrupted`` without running) and the rest are ``skipped``; what ran is written.

    Raises:
        KernelError: ``KERNEL_BUSY``, ``KERNELSPEC_NOT_FOUND``, ``KERNEL_START_FAILED`` (from
            the first execution: nothing ran).
        NotebookError: ``PAIR_OUT_OF_SYNC`` (and the other refusals of
            ``Document.check_writable``) before any cell runs; ``NOTEBOOK_WRITE_FAILED`` and
            read codes while writing the outputs.
    """
    # a pair that could not take the outputs (PAIR_OUT_OF_SYNC) is refused before any work
    await anyio.to_thread.run_sync(document.check_writable)
    progress = _Progress(on_progress, len(cells))
    saver = BatchSaver(document, graph, log)
    epoch_before = kernel.epoch
    results: list[tuple[CellView, ExecutionResult]] = []
    stopped: CellView | None = None
    pending_stop: InterruptReason | None = None
    restarted = False
    written: tuple[str, ...] = ()
    delivered: list[str] = []  # final outputs put into the live cell as it finished
    try:
        for position, view in enumerate(cells):
            progress.done = position
            await progress.send(
                float(position), f"running {view.name} ({position + 1}/{len(cells)})"
            )
            pending_stop = kernel.stop_requested
            if pending_stop is not None:  # a restart waits for the kernel: run nothing more
                stopped = view
                break
            try:
                live = live_sink(
                    getattr(document, "store", None),
                    getattr(document, "ref", None),
                    view.cell_id,
                    index=view.index,
                    rev=view.rev,
                )
                result = await _execute_one(kernel, view, timeout, progress, saver, live=live)
                if live is not None and live.delivered:
                    delivered.append(view.name)
            except KernelError as err:  # the stop came while the kernel was starting
                if err.details.get("stop_requested") is None:
                    raise
                pending_stop = err.details["stop_requested"]
                stopped = view
                break
            restarted = restarted or result.kernel_restarted
            results.append((view, result))
            saver.add(view, result, next_seq())
            if on_cell is not None:
                on_cell(_condensed([(view, result)], CELL_BUDGET, False, 0, set())[0])
            if result.status != "ok":
                stopped = view
                break
            if saver.due:
                await saver.save()
        else:
            await progress.send(float(len(cells)), f"done: {len(cells)} cells")
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_TIMEOUT):
            written = await saver.finish()
    written = tuple(dict.fromkeys((*written, *delivered)))
    epoch = results[-1][1].epoch if results else None
    executed = _condensed(results, budget, include_images, max_images, set(written))
    executed = _with_reasons(executed, document, {view.name: view for view, _ in results})
    rest = cells[len(results) :]
    if pending_stop is not None:
        executed.append(_not_started(rest[0], pending_stop))
        rest = rest[1:]
    executed.extend(_skipped(view) for view in rest)
    return Batch(
        cells=executed,
        epoch=epoch,
        kernel_started=epoch is not None and epoch != epoch_before,
        kernel_restarted=restarted,
        stopped_at=stopped.name if stopped is not None else None,
        error=_batch_error(stopped, executed, timeout),
        written=written,
    )


def _skipped(view: CellView) -> ExecutedCell:
    return ExecutedCell(
        name=view.name,
        index=view.index,
        rev=view.rev,
        status="skipped",
        execution_count=None,
        duration_s=0.0,
        output_count=0,
        outputs=None,
    )


def _not_started(view: CellView, reason: InterruptReason) -> ExecutedCell:
    """The cell a restart or shutdown stopped before it began (it did not run)."""
    return replace(_skipped(view), status="interrupted", interrupted_by=reason)


def _with_reasons(
    executed: list[ExecutedCell], document: Document, ran: dict[str, CellView]
) -> list[ExecutedCell]:
    """Say why each cell that ran was not written, from the file as the write found it."""
    now = {view.name: view for view in document.cells}
    ids = {view.cell_id for view in document.cells if view.cell_id is not None}
    result = []
    for cell in executed:
        if cell.written:
            result.append(cell)
            continue
        view = ran[cell.name]
        gone = cell.name not in now and (view.cell_id is None or view.cell_id not in ids)
        reason: NotWrittenReason = "cell_removed" if gone else "cell_changed"
        result.append(replace(cell, not_written_reason=reason))
    return result


def _batch_error(
    stopped: CellView | None, executed: Sequence[ExecutedCell], timeout: float | None
) -> ErrorEntry | None:
    """The call's ``error``: what took the kernel's state away while the batch ran."""
    if stopped is None:
        return None
    cell = next(c for c in executed if c.name == stopped.name and c.status != "skipped")
    details: dict[str, Any] = {"cell": stopped.name, "index": stopped.index}
    where = f"cell {stopped.name!r}"
    if cell.status == "died":
        died = kernel_died(f"running {where}", details)
        return {"code": died.code.value, "message": died.message, "details": died.details}
    if cell.kernel_killed and cell.status == "timeout":
        limit = execute_timeout(timeout)
        details.update(timeout_s=limit, settle_timeout_s=SETTLE_TIMEOUT)
        code, message = (
            ErrorCode.KERNEL_KILLED,
            f"{where} ran past its {limit:g} s timeout and did not stop on interrupt within "
            f"{SETTLE_TIMEOUT:g} s, so the kernel was killed: its variables are gone and "
            "every cell is stale; the next execution starts a new kernel",
        )
    elif cell.interrupted_by == "kernel_restarted":
        details.update(interrupted_by=cell.interrupted_by, ran=cell.execution_count is not None)
        code, message = (
            ErrorCode.KERNEL_RESTARTED,
            f"the kernel was restarted{_asker(cell)} while {where} ran: the cell was "
            "interrupted, its outputs so far are saved, the later cells did not run; every "
            "cell is stale",
        )
    elif cell.interrupted_by == "kernel_shutdown":
        details.update(interrupted_by=cell.interrupted_by)
        code, message = (
            ErrorCode.KERNEL_NOT_RUNNING,
            f"the kernel was shut down{_asker(cell)} while {where} ran: the cell was "
            "interrupted, its outputs so far are saved, the later cells did not run",
        )
    else:
        return None
    return {"code": code.value, "message": message, "details": details}


def _asker(cell: ExecutedCell) -> str:
    """`` by `j-cli kernel restart nb.ipynb` (pid 123, ended)`` when another command asked
    for the stop that ended ``cell``, else ``""``."""
    from jupyter_jcli.kernels import command_words

    who, command = cell.interrupt_requested_by, cell.interrupt_requested_command
    return "" if who is None and command is None else f" by {command_words(command, who)}"


async def _execute_one(
    kernel: NotebookKernel,
    view: CellView,
    timeout: float | None,
    progress: _Progress,
    saver: BatchSaver,
    *,
    live: LiveCell | None = None,
) -> ExecutionResult:
    """Run one cell; beside it, the progress heartbeats and the save of the cells before
    it once it is due (:meth:`BatchSaver.save_when_due`); each iopub message written into
    ``live`` as it arrives and its final outputs once at the end (``notebook.live``)."""
    if progress.callback is None and not saver.pending and live is None:
        return await kernel.execute(view.source, cell_key=view.name, timeout=timeout)
    result: ExecutionResult | None = None
    error: Exception | None = None
    with _streaming(live) as sink:
        async with anyio.create_task_group() as tg:  # these run beside the execution
            if progress.callback is not None:
                tg.start_soon(progress.heartbeat, view.name)
            tg.start_soon(saver.save_when_due)
            try:
                result = await kernel.execute(
                    view.source,
                    cell_key=view.name,
                    timeout=timeout,
                    on_message=None if sink is None else sink.message,
                )
            except Exception as err:  # re-raised as is, not wrapped in an ExceptionGroup
                error = err
            finally:
                tg.cancel_scope.cancel()
        if sink is not None and result is not None:  # waits for the store: off the loop
            outputs = file_outputs(result.outputs)
            await anyio.to_thread.run_sync(sink.finish, outputs, result.execution_count)
    if error is not None:
        raise error
    assert result is not None
    return result


@contextlib.contextmanager
def _streaming(live: LiveCell | None) -> Iterator[LiveCell | None]:
    """``live`` entered (the cell shows running) for the block, left after it (idle);
    ``None`` when there is none or its cell is gone before the run (the person deleted it:
    nothing is streamed, and the commit of the outputs finds no cell to write)."""
    if live is None:
        yield None
        return
    try:
        sink = live.__enter__()
    except NotebookError as err:
        if err.code != ErrorCode.CELL_NOT_FOUND:
            raise
        yield None
        return
    try:
        yield sink
    finally:
        live.__exit__(None, None, None)


def _condensed(
    results: Sequence[tuple[CellView, ExecutionResult]],
    budget: int,
    include_images: bool,
    max_images: int,
    written: set[str],
) -> list[ExecutedCell]:
    with_outputs = [i for i, (_view, result) in enumerate(results) if result.outputs]
    condensed = _condense_all(
        [file_outputs(results[i][1].outputs) for i in with_outputs],
        [results[i][0].index for i in with_outputs],
        budget,
        include_images=include_images,
        max_images=max_images,
    )
    by_position = dict(zip(with_outputs, condensed, strict=True))
    cells = []
    for position, (view, result) in enumerate(results):
        cells.append(
            ExecutedCell(
                name=view.name,
                index=view.index,
                rev=view.rev,
                status=result.status,
                execution_count=result.execution_count,
                duration_s=result.duration_s,
                output_count=len(result.outputs),
                outputs=by_position.get(position),
                ename=result.ename,
                evalue=result.evalue,
                written=view.name in written,
                interrupted_by=result.interrupted_by,
                kernel_killed=result.kernel_killed,
                interrupt_requested_by=result.interrupt_requested_by,
                interrupt_requested_command=result.interrupt_requested_command,
            )
        )
    return cells
