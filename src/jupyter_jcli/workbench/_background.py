"""Background batches: an execution that outlives the call that started it.

An MCP host cuts a tool call off after a fixed time; a long execution started with
``background: true`` answers at once with a short run id and goes on as a task of the task
group :class:`BackgroundBatches` opens (``async with workbench.background:``, held by the MCP server
for its lifetime). The run is the same ``Workbench.execute_cells`` / ``run_stale`` call as in
the foreground, so its outputs are written and its runs recorded (staleness) exactly as
theirs; the server's shutdown saves and ends it like any running batch
(``Workbench.shutdown``, ``_batch_save.save_running_batches``). While it runs, a
:class:`BackgroundBatch` keeps its progress and each cell as it finishes (condensed); once it
ends, its outcome or its error. Memory is bounded: the last :data:`BATCHES_KEPT` finished runs
are kept, the ids of older ones are remembered as ``expired`` (:data:`EXPIRED_KEPT`).
"""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import anyio
from anyio.abc import TaskGroup

from jupyter_jcli.errors import ErrorCode, JcliError, KernelError, UsageError
from jupyter_jcli.workbench._outcomes import ExecutedCell

__all__ = [
    "BATCHES_KEPT",
    "CELLS_SHOWN",
    "EXPIRED_KEPT",
    "MAX_WAIT_SECONDS",
    "BackgroundBatch",
    "BackgroundBatches",
    "BatchState",
]

BATCHES_KEPT = 16
"""Finished runs a workbench keeps (the oldest are forgotten first)."""
EXPIRED_KEPT = 1024
"""Ids of forgotten runs remembered, so ``RUN_NOT_FOUND`` can say ``expired``."""
MAX_WAIT_SECONDS = 60.0
"""Bound on ``run_status``'s ``wait_s``."""
CELLS_SHOWN = 10
"""Finished cells a running run's status shows (the last ones; ``cells_count`` all)."""

BatchState = Literal["running", "done", "failed"]


class BackgroundBatch:
    """One background execution: its progress, its finished cells, its end.

    Attributes:
        run_id: the short id ``run_status`` takes.
        tool: the tool that started it (``execute_cells``, ``run_stale``).
        notebook_path: the notebook's ``.ipynb``.
        outcome: the call's outcome once it ended well (``to_dict()``-able).
        error: the error it ended with.
    """

    def __init__(self, run_id: str, tool: str, notebook_path: Path) -> None:
        self.run_id = run_id
        self.tool = tool
        self.notebook_path = notebook_path
        self.outcome: Any = None
        self.error: Exception | None = None
        self.cells: list[ExecutedCell] = []
        self._progress = 0.0
        self._total: float | None = None
        self._message = "starting"
        self._started = time.monotonic()
        self._ended: float | None = None
        self._done = anyio.Event()

    @property
    def state(self) -> BatchState:
        """``running``, ``done`` (the outcome is there) or ``failed`` (the error is)."""
        if not self._done.is_set():
            return "running"
        return "failed" if self.error is not None else "done"

    async def report(self, progress: float, total: float | None, message: str) -> None:
        """Keep the latest progress (a ``ProgressCallback``)."""
        self._progress, self._total, self._message = progress, total, message

    def add_cell(self, cell: ExecutedCell) -> None:
        """Keep a finished cell (a ``CellCallback``)."""
        self.cells.append(cell)

    async def wait(self, seconds: float) -> None:
        """Wait until the run ends, at most ``seconds``."""
        with anyio.move_on_after(seconds):
            await self._done.wait()

    def status(self) -> dict[str, Any]:
        """What ``run_status`` says of a run: state, elapsed time, progress, the last
        :data:`CELLS_SHOWN` finished cells (condensed) and ``cells_count``."""
        end = self._ended if self._ended is not None else time.monotonic()
        return {
            "run_id": self.run_id,
            "tool": self.tool,
            "state": self.state,
            "elapsed_s": round(end - self._started, 1),
            "progress": round(self._progress, 3),
            "total": self._total,
            "message": self._message,
            "cells_count": len(self.cells),
            "cells": [cell.to_dict() for cell in self.cells[-CELLS_SHOWN:]],
        }

    async def _run(self, work: Callable[[BackgroundBatch], Awaitable[Any]]) -> None:
        try:
            self.outcome = await work(self)
        except Exception as err:  # kept for run_status: the run is never lost
            self.error = err
        finally:
            self._ended = time.monotonic()
            self._done.set()


class BackgroundBatches:
    """The background batches of one workbench, in the task group of ``async with``."""

    def __init__(self) -> None:
        self._group: TaskGroup | None = None
        self._batches: OrderedDict[str, BackgroundBatch] = OrderedDict()
        self._expired: OrderedDict[str, None] = OrderedDict()

    async def __aenter__(self) -> BackgroundBatches:
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()  # the shutdown before this saved what ran
            try:
                await group.__aexit__(exc_type, exc, tb)
            except BaseException as raised:
                # The group wraps the error that ended the block (a server that could not
                # bind its port, ...) in an exception group: raise it as it came, so the
                # caller's ``except JcliError`` sees its code.
                inner = getattr(raised, "exceptions", None)
                if exc is not None and inner is not None and list(inner) == [exc]:
                    raise exc from None
                raise

    def start(
        self, tool: str, notebook_path: Path, work: Callable[[BackgroundBatch], Awaitable[Any]]
    ) -> BackgroundBatch:
        """Start ``work(run)`` in the background; return the run at once.

        Raises:
            UsageError: ``USAGE_ERROR`` outside ``async with`` (nothing keeps runs).
            KernelError: ``KERNEL_BUSY`` (details ``run_id``) while another background batch
                holds this notebook's kernel.
        """
        if self._group is None:
            raise UsageError("background runs need a server that keeps them running")
        self.refuse_busy(notebook_path)
        run = BackgroundBatch(secrets.token_hex(4), tool, notebook_path)
        self._batches[run.run_id] = run
        self._forget_oldest()
        self._group.start_soon(run._run, work)
        return run

    def running_on(self, notebook_path: Path) -> BackgroundBatch | None:
        """The background batch still running on this notebook, if any."""
        for run in self._batches.values():
            if run.notebook_path == notebook_path and run.state == "running":
                return run
        return None

    def refuse_busy(self, notebook_path: Path, err: KernelError | None = None) -> None:
        """Raise ``KERNEL_BUSY`` naming the background batch holding this notebook's kernel
        (``details.run_id``); ``err``: the ``KERNEL_BUSY`` to complete.

        Raises:
            KernelError: ``KERNEL_BUSY`` when a background batch runs on the notebook.
        """
        run = self.running_on(notebook_path)
        if run is None:
            return
        details = dict(err.details) if err is not None else {"notebook_path": str(notebook_path)}
        details["run_id"] = run.run_id
        raise KernelError(
            ErrorCode.KERNEL_BUSY,
            f"background run {run.run_id} is running on this notebook's kernel; "
            "run_status waits for it, interrupt_kernel stops it",
            details,
        ) from err

    def get(self, notebook_path: Path, run_id: str) -> BackgroundBatch:
        """The run ``run_id`` on this notebook.

        Raises:
            JcliError: ``RUN_NOT_FOUND`` (details ``run_id``, ``expired``).
        """
        run = self._batches.get(run_id)
        if run is None or run.notebook_path != notebook_path:
            raise JcliError(
                ErrorCode.RUN_NOT_FOUND,
                f"no background run {run_id!r} on this notebook in this server",
                {"run_id": run_id, "expired": run is None and run_id in self._expired},
            )
        return run

    def _forget_oldest(self) -> None:
        finished = [key for key, run in self._batches.items() if run.state != "running"]
        for key in finished[: max(0, len(finished) - BATCHES_KEPT)]:
            del self._batches[key]
            self._expired[key] = None
        while len(self._expired) > EXPIRED_KEPT:
            self._expired.popitem(last=False)
