"""Saving a batch's results as its cells finish, so a killed run keeps what finished.

A batch (``_execute.run_batch``) hands each finished cell to one :class:`BatchSaver`. The
saver writes the outputs and execution counts it holds into the notebook
(``Document.write_outputs``, the one commit path: re-read, outside edits kept, a cell edited
meanwhile not overwritten, atomic replace) at most every :data:`SAVE_INTERVAL` seconds: right
after a cell finishes when that long has passed since the last write (so every cell of a run
of slow cells is saved as it ends), else once the interval is up while the next cell runs
(:meth:`BatchSaver.save_when_due`), and always at the batch's end (:meth:`BatchSaver.finish`).
A run of many tiny cells thus rewrites the file about every 2 s, not per cell, and a cell
that finished is on disk at most about :data:`SAVE_INTERVAL` s later, whatever kills the
process afterwards.

Each cell's run is recorded in the execution log (what makes it ``fresh``) only after the write
that carried its outputs was attempted, so no record claims a run whose outputs a kill
could still lose: a kill between the write and the record leaves the cell saved and not
fresh (it runs again), never fresh and unsaved. A failed write (``NOTEBOOK_WRITE_FAILED``,
``WRITE_CONFLICT``) before the end is kept for the next one; the write at the end raises it.

Display updates a cell sends to an earlier cell of the batch are applied to that cell's new
outputs (which are written again, rev-checked like the first time); those to other cells go
to the file's cells, as ``OutputUpdate``.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from jupyter_jcli.analysis import NotebookGraph
from jupyter_jcli.kernels import ExecutionResult
from jupyter_jcli.notebook.document import CellOutputs, CellView, Document, OutputUpdate
from jupyter_jcli.workbench._execution_log import ExecutionLog, record_keys
from jupyter_jcli.workbench._stored import _split_bundle, file_outputs

__all__ = ["SAVE_INTERVAL", "BatchSaver", "save_running_batches"]

SAVE_INTERVAL = 2.0
"""Seconds between two writes of a running batch's results (the first write after a cell
finishes once this long has passed since the previous one, or since the batch began)."""


@dataclass(frozen=True)
class _Finished:
    """A finished cell whose run is not recorded yet, with the ``seq`` it finished at."""

    view: CellView
    result: ExecutionResult
    seq: int


class BatchSaver:
    """The results of one batch's finished cells, written as the module says.

    Args:
        document: the notebook the batch runs (written through ``write_outputs``).
        graph: its graph (the parents each run record names).
        log: the execution log the runs are recorded in.
        interval: seconds between two writes (:data:`SAVE_INTERVAL`).
        clock: the monotonic clock the interval is measured on (seconds).

    A saver counts among this process's running batches (:func:`save_running_batches`)
    from its creation until :meth:`finish`.
    """

    def __init__(
        self,
        document: Document,
        graph: NotebookGraph,
        log: ExecutionLog,
        *,
        interval: float = SAVE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._document = document
        self._keys = record_keys(document.cells)  # runs follow the cell (its id), not its name
        self._graph = graph
        self._log = log
        self._interval = interval
        self._clock = clock
        self._last_write = clock()
        self._outputs: dict[str, CellOutputs] = {}  # every finished cell's, by name
        self._dirty: dict[str, None] = {}  # names whose outputs are not written yet (ordered)
        self._updates: list[OutputUpdate] = []  # to cells outside the batch, not written yet
        self._unrecorded: list[_Finished] = []
        self._written: dict[str, None] = {}
        self._error: Exception | None = None
        self._record_error: Exception | None = None
        self._lock = threading.Lock()  # one write at a time (a worker thread writes)
        _RUNNING.add(self)

    @property
    def pending(self) -> bool:
        """Whether a finished cell's outputs or run record still wait for a write."""
        return bool(self._dirty or self._updates or self._unrecorded)

    @property
    def due(self) -> bool:
        """Whether something waits and :data:`SAVE_INTERVAL` has passed since the last write."""
        return self.pending and self._clock() - self._last_write >= self._interval

    @property
    def written(self) -> tuple[str, ...]:
        """The names of the cells written so far (outputs, or a display update), in the
        order of the notebook's cells as the last write found them."""
        order = {view.name: view.index for view in self._document.cells}
        names = list(self._written)
        return tuple(sorted(names, key=lambda name: order.get(name, len(order))))

    def add(self, view: CellView, result: ExecutionResult, seq: int) -> None:
        """Hold ``view``'s finished run (``seq``: from the run sequence, taken as it finished)."""
        with self._lock:
            self._add(view, result, seq)

    def _add(self, view: CellView, result: ExecutionResult, seq: int) -> None:
        for update in result.display_updates:
            target = self._outputs.get(update.cell_key)
            if target is not None:
                if 0 <= update.output_index < len(target.outputs):
                    output = target.outputs[update.output_index]
                    output["data"] = _split_bundle(update.data)
                    output["metadata"] = dict(update.metadata)
                    self._dirty[update.cell_key] = None
            else:
                self._updates.append(
                    OutputUpdate(
                        update.cell_key,
                        update.output_index,
                        _split_bundle(update.data),
                        dict(update.metadata),
                    )
                )
        self._outputs[view.name] = CellOutputs(
            view.rev, file_outputs(result.outputs), result.execution_count
        )
        self._dirty.pop(view.name, None)  # re-inserted last: the write order follows the runs
        self._dirty[view.name] = None
        self._updates = [u for u in self._updates if u.cell != view.name]  # replaced outputs
        self._unrecorded.append(_Finished(view, result, seq))

    async def save(self) -> None:
        """Write what waits now, in a worker thread (a failure is kept for :meth:`finish`)."""
        if not self.pending:
            return
        await anyio.to_thread.run_sync(self._write_and_record)

    async def save_when_due(self) -> None:
        """Wait until :attr:`due`, then :meth:`save` (run beside a cell's execution; a
        cancellation during the write lets the write finish, as a worker thread does)."""
        if not self.pending:
            return
        await anyio.sleep(max(0.0, self._last_write + self._interval - self._clock()))
        await self.save()

    async def finish(self) -> tuple[str, ...]:
        """The batch's last write: what still waits; returns :attr:`written`.

        Raises:
            NotebookError: ``NOTEBOOK_WRITE_FAILED`` and the read codes of
                ``Document.write_outputs`` when outputs could not be written, by the last
                attempt (their runs are recorded all the same: the kernel holds their
                state); a failure to record a run (the registry's codes), once every run
                was tried.
        """
        _RUNNING.discard(self)
        await self.save()
        if self._error is not None and (self._dirty or self._updates):
            raise self._error
        if self._record_error is not None:
            raise self._record_error
        return self.written

    def _write_and_record(self) -> None:
        """Write the waiting outputs and updates, then record the waiting runs (also when
        the write failed: the runs happened)."""
        with self._lock:
            results = {name: self._outputs[name] for name in self._dirty}
            updates = list(self._updates)
            finished, self._unrecorded = self._unrecorded, []
            try:
                if results or updates:
                    written = self._document.write_outputs(results, updates)
                    self._written.update(dict.fromkeys(written))
                    for name in results:
                        self._dirty.pop(name, None)
                    self._updates = self._updates[len(updates) :]
                    self._error = None
            except Exception as err:  # kept for the end: a run is not stopped by a write
                self._error = err
            finally:
                self._last_write = self._clock()
                for done in finished:
                    try:
                        self._record(done)
                    except Exception as err:  # raised by finish: not beside an execution
                        self._record_error = self._record_error or err

    def _record(self, done: _Finished) -> None:
        view, result = done.view, done.result
        cells, keys = self._graph.cells, self._keys
        node = cells[self._graph.index(view.name)]
        parents = [keys.get(cells[p].key, cells[p].key) for p in node.parents]
        self._log.record(
            keys.get(view.name, view.name),
            view.rev,
            result.epoch,
            done.seq,
            parents,
            ok=result.status == "ok",
            interrupted=result.status == "interrupted",
        )


_RUNNING: weakref.WeakSet[BatchSaver] = weakref.WeakSet()


async def save_running_batches() -> None:
    """Write what the running batches of this process hold (their finished cells), as a
    server does before it stops its kernels on its way out (a signal, stdin closed)."""
    for saver in list(_RUNNING):
        await saver.save()
