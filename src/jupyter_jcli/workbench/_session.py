"""The kernel-attached workbench: one :class:`Workbench` per server process or CLI command.

It owns a :class:`~jupyter_jcli.kernels.KernelPool` (one kernel per notebook, started lazily
on the first execution, in the notebook's folder, with the kernelspec from the notebook's
metadata) and one run log per notebook (``_run_log``). Cell statuses (``fresh``, ``stale``,
``error``, ``never_run``) are computed from the log, the live kernel's epoch and the cells'
current revs whenever they are asked for, so the kernel-less mutations of this package need
no hook: an edited cell has a rev no run carries, and its dependents follow through the DAG.

Paths: an ``.ipynb`` or a py:percent ``.py`` paired with one; both spellings share the
``.ipynb``'s kernel and run log, and outputs are written into the ``.ipynb``.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar

import anyio

from jupyter_jcli.analysis import CellStatus, rerun_plan
from jupyter_jcli.errors import ErrorCode, JcliError, KernelError, UsageError
from jupyter_jcli.kernels import (
    KernelInfo,
    KernelPool,
    NotebookKernel,
    execute_timeout,
    kernel_died,
)
from jupyter_jcli.notebook.document import CellView, Document
from jupyter_jcli.workbench._execute import (
    DEFAULT_EXECUTE_BUDGET,
    Batch,
    ProgressCallback,
    run_batch,
)
from jupyter_jcli.workbench._inspect import (
    DEFAULT_INSPECT_MAX_CHARS,
    INSPECT_TIMEOUT,
    VariableOutcome,
    parse_probe,
    probe_expression,
)
from jupyter_jcli.workbench._kernel_choice import KernelChoice
from jupyter_jcli.workbench._load import Loaded, build_cell_graph, load
from jupyter_jcli.workbench._outcomes import ExecuteOutcome, KernelOutcome, RunStaleOutcome
from jupyter_jcli.workbench._overview import notebook_overview
from jupyter_jcli.workbench._read import DEFAULT_READ_BUDGET, read_cells
from jupyter_jcli.workbench._run_log import RunLog, cell_statuses
from jupyter_jcli.workbench._status_views import (
    SessionOverview,
    SessionReadCellsResult,
    session_overview,
    session_read,
)

__all__ = ["Workbench"]

_CONSISTENT_READ_ATTEMPTS = 3

PathArg = str | os.PathLike[str]
_Outcome = TypeVar("_Outcome", bound=ExecuteOutcome)


class Workbench:
    """The operations that need a kernel, plus the reads that report cell statuses.

    Use ``async with Workbench() as wb:`` (every kernel is shut down on exit, bounded), or
    call :meth:`shutdown` yourself. Executions on one notebook never interleave: a call that
    finds the notebook's kernel held by another call fails at once with ``KERNEL_BUSY``
    (details name the running cell). Calls on different notebooks run concurrently.

    Args:
        cache_dir: snapshot cache base folder for the document model (default: the user
            cache; see :mod:`jupyter_jcli.notebook.snapshots`).
        pool: the kernels to use (default: a new local :class:`KernelPool`); a pool built
            on another backend factory runs the same workbench on it, e.g.
            ``KernelPool(backend_factory=jupyter_jcli.kernels.testing.python_backend)`` for
            in-process tests. The workbench shuts its kernels down on exit either way.
    """

    def __init__(self, *, cache_dir: Path | None = None, pool: KernelPool | None = None) -> None:
        self._cache_dir = cache_dir
        self._pool = pool if pool is not None else KernelPool()
        self._logs: dict[Path, RunLog] = {}
        self._choice = KernelChoice()
        self._seq = itertools.count(1)

    @property
    def pool(self) -> KernelPool:
        """The kernel pool (one kernel per notebook)."""
        return self._pool

    async def __aenter__(self) -> Workbench:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.shutdown()

    async def shutdown(self) -> None:
        """Shut every kernel down (graceful up to 5 s each, then killed; shielded)."""
        await self._pool.shutdown_all()

    # ------------------------------------------------------------------ reads

    async def notebook_overview(self, path: PathArg) -> SessionOverview:
        """The overview of :func:`~jupyter_jcli.workbench.notebook_overview` plus, per cell,
        ``status`` and ``tldr``, and the notebook's ``kernel`` (:class:`KernelInfo`).

        Reads only: starts no kernel, writes nothing, never calls a model (tldrs are cached
        summaries or fallbacks marked ``*``).

        Raises:
            NotebookError: the read codes of :func:`~jupyter_jcli.workbench.notebook_overview`.
        """
        for _attempt in range(_CONSISTENT_READ_ATTEMPTS):
            loaded = await self._load(path)
            overview = await anyio.to_thread.run_sync(
                partial(notebook_overview, path, cache_dir=self._cache_dir)
            )
            if overview.structure_rev == loaded.document.structure_rev:
                break
        notebook = loaded.document.notebook_dict()
        info = await self._kernel_info(loaded.document)
        statuses = self._statuses(loaded, info.epoch)
        return session_overview(overview, notebook["cells"], statuses, info)

    async def read_cells(
        self,
        path: PathArg,
        *,
        names: Sequence[str] | None = None,
        start: int | None = None,
        stop: int | None = None,
        budget: int = DEFAULT_READ_BUDGET,
        include_images: bool = True,
    ) -> SessionReadCellsResult:
        """:func:`~jupyter_jcli.workbench.read_cells` plus each cell's ``status`` and the
        live ``epoch``. Reads only.

        Raises:
            The codes of :func:`~jupyter_jcli.workbench.read_cells`.
        """
        call = partial(
            read_cells,
            path,
            names=names,
            start=start,
            stop=stop,
            budget=budget,
            include_images=include_images,
            cache_dir=self._cache_dir,
        )
        for _attempt in range(_CONSISTENT_READ_ATTEMPTS):
            result = await anyio.to_thread.run_sync(call)
            loaded = await self._load(path)
            if result.structure_rev == loaded.document.structure_rev:
                break
        info = await self._kernel_info(loaded.document)
        return session_read(result, self._statuses(loaded, info.epoch), info.epoch)

    # ------------------------------------------------------------------ executions

    async def execute_cells(
        self,
        path: PathArg,
        names: Sequence[str],
        *,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        include_images: bool = True,
        kernel_name: str | None = None,
    ) -> ExecuteOutcome:
        """Run the named code cells in the given order on the notebook's kernel.

        The kernel is started first if none runs (``kernel_started``; a dead one is replaced:
        ``kernel_restarted``). The cells run under one hold of the kernel, so no other call
        interleaves; the first cell that does not end ``ok`` stops the call (the rest are
        ``skipped``). Before returning, the outputs and execution counts of the cells that
        ran, and the display updates they sent to earlier cells, are written into the
        notebook atomically (outside edits kept; a cell edited meanwhile is not written).
        A kernel death is reported, not raised: the dead cell has status ``died`` and the
        outcome's ``error`` is ``KERNEL_DIED`` naming it; likewise a timeout that had to kill
        the kernel (``KERNEL_KILLED``) and a restart of the kernel by another call while
        this one runs (the running cell ends ``interrupted``, ``KERNEL_RESTARTED``). A cell
        edited or removed meanwhile is not written (``not_written_reason``).

        Args:
            path: the notebook (``.ipynb`` or paired ``.py``).
            names: code cell names, run in this order (a name may repeat).
            timeout: seconds each cell may run (``None``: ``JUPYTER_JCLI_EXECUTE_TIMEOUT``
                or 600 s); past it the cell is interrupted and reported ``timeout``.
            on_progress: called per cell and every 5 s while one runs (see
                :data:`ProgressCallback`).
            include_images: return rasters as images (else described in the text).
            kernel_name: the kernelspec to start instead of the notebook's
                ``metadata.kernelspec.name`` (e.g. when that one is not installed);
                remembered for this notebook by this workbench. A running kernel is kept
                (:meth:`restart_kernel` with ``kernel_name`` switches).

        Raises:
            UsageError: ``USAGE_ERROR`` for no names, a Markdown/raw cell or a bad timeout.
            NotebookError: ``CELL_NOT_FOUND``, ``NOTEBOOK_WRITE_FAILED``, read codes.
            KernelError: ``KERNEL_BUSY``, ``KERNELSPEC_NOT_FOUND`` (details: ``kernelspec``,
                ``installed``, ``source``), ``KERNEL_START_FAILED``.
        """
        if isinstance(names, str) or not names:
            raise UsageError("execute_cells needs a list of one or more cell names.")
        execute_timeout(timeout)  # a bad timeout fails before anything starts
        document = await self._document(path)
        kernel = self._kernel(document, kernel_name)
        async with kernel.hold(), self._choice.explained(document):
            loaded = await self._load(path)
            views = _code_cells(loaded, names)
            batch = await self._run(
                kernel,
                loaded,
                views,
                timeout=timeout,
                on_progress=on_progress,
                include_images=include_images,
            )
        return await self._outcome(ExecuteOutcome, loaded, kernel, batch)

    async def run_stale(
        self,
        path: PathArg,
        *,
        dry_run: bool = False,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        include_images: bool = True,
        kernel_name: str | None = None,
    ) -> RunStaleOutcome:
        """Run exactly the cells that are not fresh, in document order, and stop at the
        first that fails.

        The plan is :func:`jupyter_jcli.analysis.rerun_plan` over the current statuses: every
        stale, failed or never-run code cell, their dependents, and the nearest writer above
        a re-run cell that both reads and writes a name (``x += 1``: the writer is replayed
        first so the mutation is not applied twice). With no live kernel every code cell is
        in the plan. ``still_stale`` lists what is not fresh afterwards.

        Args:
            path: the notebook.
            dry_run: return the plan only: nothing runs, no kernel starts.
            timeout: seconds each cell may run (as for :meth:`execute_cells`).
            on_progress: as for :meth:`execute_cells`.
            include_images: as for :meth:`execute_cells`.
            kernel_name: as for :meth:`execute_cells`.

        Raises:
            The codes of :meth:`execute_cells`.
        """
        execute_timeout(timeout)
        document = await self._document(path)
        self._choice.override(document, kernel_name)
        if dry_run:
            loaded = await self._load(path)
            info = await self._kernel_info(loaded.document)
            plan = rerun_plan(loaded.graph, self._statuses(loaded, info.epoch))
            batch = Batch([], None, False, False, None, None, ())
            return await self._outcome(
                RunStaleOutcome, loaded, None, batch, plan=plan, dry_run=True
            )
        kernel = self._kernel(document)
        async with kernel.hold(), self._choice.explained(document):
            loaded = await self._load(path)
            epoch = kernel.epoch if await kernel.is_alive() else None
            plan = rerun_plan(loaded.graph, self._statuses(loaded, epoch))
            views = [loaded.document.cell(name) for name in plan]
            batch = await self._run(
                kernel,
                loaded,
                views,
                timeout=timeout,
                on_progress=on_progress,
                include_images=include_images,
            )
        return await self._outcome(RunStaleOutcome, loaded, kernel, batch, plan=plan)

    # ------------------------------------------------------------------ kernel control

    async def restart_kernel(
        self, path: PathArg, *, kernel_name: str | None = None
    ) -> KernelOutcome:
        """Restart the notebook's kernel (start one if none runs): a new epoch, so every
        code cell is ``never_run``.

        A cell running on the old kernel is stopped first (bounded): it ends
        ``interrupted`` (``interrupted_by: kernel_restarted``) in the call that ran it, with
        its outputs so far saved, and that call runs no further cell
        (``KERNEL_RESTARTED``). ``interrupted_cell`` names it. Overlapping restarts are one.

        Args:
            path: the notebook.
            kernel_name: start this kernelspec instead of the notebook's (remembered, as for
                :meth:`execute_cells`).

        Raises:
            KernelError: ``KERNELSPEC_NOT_FOUND``, ``KERNEL_START_FAILED``; ``KERNEL_BUSY``
                when the call holding the kernel does not let it go within
                :data:`~jupyter_jcli.kernels.STOP_WAIT` s (nothing was restarted).
            NotebookError: the read codes of ``Document.load``.
        """
        document = await self._document(path)
        kernel = self._kernel(document, kernel_name)
        info = await kernel.info()
        async with self._choice.explained(document):
            await kernel.restart()
        return await self._kernel_outcome(
            "restart_kernel", path, kernel, info.epoch, info.running_cell
        )

    async def interrupt_kernel(self, path: PathArg) -> KernelOutcome:
        """Interrupt the cell running on the notebook's kernel (it ends with
        ``KeyboardInterrupt``; the call running it reports it ``interrupted``,
        ``interrupted_by: kernel_interrupted``, and runs no further cell). The epoch and the
        variables are kept.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when the notebook has no live kernel.
            NotebookError: the read codes of ``Document.load``.
        """
        document = await self._document(path)
        kernel = self._pool.get(document.notebook_path)
        if kernel is None:
            raise _not_running(document.notebook_path)
        info = await kernel.info()
        await kernel.interrupt()
        return await self._kernel_outcome(
            "interrupt_kernel", path, kernel, info.epoch, info.running_cell
        )

    async def inspect_variable(
        self, path: PathArg, name: str, *, max_chars: int = DEFAULT_INSPECT_MAX_CHARS
    ) -> VariableOutcome:
        """Type, length or shape, dtype or schema and a bounded head/repr of one live global.

        Runs a silent probe (no cell added, execution count and history untouched) that
        imports nothing: pandas and numpy are used only when the user's code imported them.

        Args:
            path: the notebook whose kernel holds the variable.
            name: a global variable name (a Python identifier).
            max_chars: bound of the returned repr, in characters (>= 1).

        Raises:
            UsageError: ``USAGE_ERROR`` for a name that is not an identifier, bad max_chars.
            KernelError: ``KERNEL_NOT_RUNNING`` (no live kernel), ``VARIABLE_NOT_FOUND``,
                ``KERNEL_BUSY`` (a cell is running), ``KERNEL_DIED``.
            JcliError: ``INTERNAL_ERROR`` when the probe itself fails or times out.
        """
        expression = probe_expression(name, max_chars)
        document = await self._document(path)
        kernel = self._pool.get(document.notebook_path)
        if kernel is None or not await kernel.is_alive():
            raise _not_running(document.notebook_path)
        result = await kernel.evaluate(
            "", user_expressions={"probe": expression}, timeout=INSPECT_TIMEOUT
        )
        if result.status == "died":
            raise kernel_died(
                f"inspecting {name!r}", {"name": name, "notebook_path": str(document.notebook_path)}
            )
        value = result.expressions.get("probe")
        if result.status != "ok" or value is None or value.status != "ok":
            raise JcliError(
                ErrorCode.INTERNAL_ERROR,
                f"inspecting {name!r} failed ({result.status})",
                {
                    "name": name,
                    "ename": value.ename if value is not None else result.ename,
                    "evalue": value.evalue if value is not None else result.evalue,
                },
            )
        return parse_probe(
            value.text,
            name=name,
            path=document.path,
            notebook_path=document.notebook_path,
            epoch=result.epoch,
        )

    # ------------------------------------------------------------------ internals

    async def _document(self, path: PathArg) -> Document:
        return await anyio.to_thread.run_sync(
            partial(Document.load, path, cache_dir=self._cache_dir)
        )

    async def _load(self, path: PathArg) -> Loaded:
        return await anyio.to_thread.run_sync(partial(load, path, cache_dir=self._cache_dir))

    def _kernel(self, document: Document, kernel_name: str | None = None) -> NotebookKernel:
        self._choice.override(document, kernel_name)
        spec, _source = self._choice.kernelspec(document)
        return self._pool.kernel(document.notebook_path, kernelspec_name=spec)

    def _log(self, document: Document) -> RunLog:
        path = document.notebook_path.resolve()
        if path not in self._logs:  # the registry's log for a shared pool
            from jupyter_jcli.workbench._sharing import run_log_for

            self._logs[path] = run_log_for(self._pool, path)
        return self._logs[path]

    async def _kernel_info(self, document: Document) -> KernelInfo:
        kernel = self._pool.get(document.notebook_path)
        if kernel is not None:
            return await kernel.info()
        notebook_path = document.notebook_path.resolve()
        return KernelInfo(
            notebook_path=notebook_path,
            state="not_started",
            epoch=None,
            kernelspec_name=self._choice.kernelspec(document)[0],
            pid=None,
            cwd=notebook_path.parent,
        )

    def _statuses(self, loaded: Loaded, epoch: str | None) -> dict[str, CellStatus]:
        revs = {view.name: view.rev for view in loaded.cells}
        return cell_statuses(loaded.graph, revs, self._log(loaded.document), epoch)

    async def _run(
        self,
        kernel: NotebookKernel,
        loaded: Loaded,
        views: Sequence[CellView],
        *,
        timeout: float | None,
        on_progress: ProgressCallback | None,
        include_images: bool,
    ) -> Batch:
        if not views:
            return Batch([], None, False, False, None, None, ())
        return await run_batch(
            kernel,
            loaded.document,
            loaded.graph,
            views,
            log=self._log(loaded.document),
            next_seq=lambda: next(self._seq),
            timeout=timeout,
            on_progress=on_progress,
            budget=DEFAULT_EXECUTE_BUDGET,
            include_images=include_images,
        )

    async def _still_stale(self, loaded: Loaded, epoch: str | None) -> tuple[str, ...]:
        # The document adopted what the batch wrote (and any outside edit it found).
        graph = build_cell_graph(loaded.document.cells)
        revs = {view.name: view.rev for view in loaded.document.cells}
        statuses = cell_statuses(graph, revs, self._log(loaded.document), epoch)
        return tuple(name for name, status in statuses.items() if status != "fresh")

    async def _outcome(
        self,
        kind: type[_Outcome],
        loaded: Loaded,
        kernel: NotebookKernel | None,
        batch: Batch,
        *,
        plan: Sequence[str] = (),
        dry_run: bool = False,
    ) -> _Outcome:
        document = loaded.document
        info = await (kernel.info() if kernel is not None else self._kernel_info(document))
        fields: dict[str, Any] = {
            "path": document.path,
            "notebook_path": document.notebook_path,
            "cells": tuple(batch.cells),
            "stopped_at": batch.stopped_at,
            "error": batch.error,
            # a batch error (death, kill, restart, shutdown) means the kernel's state is gone
            "still_stale": await self._still_stale(
                loaded, info.epoch if batch.error is None else None
            ),
            "epoch": batch.epoch,
            "kernel_started": batch.kernel_started,
            "kernel_restarted": batch.kernel_restarted,
            "kernel": info,
            "written": batch.written,
        }
        if kind is RunStaleOutcome:
            fields.update(plan=tuple(plan), dry_run=dry_run)
        return kind(**fields)

    async def _kernel_outcome(
        self,
        operation: Literal["restart_kernel", "interrupt_kernel"],
        path: PathArg,
        kernel: NotebookKernel,
        previous: str | None,
        interrupted: str | None,
    ) -> KernelOutcome:
        loaded = await self._load(path)
        info = await kernel.info()
        return KernelOutcome(
            operation=operation,
            path=loaded.document.path,
            notebook_path=loaded.document.notebook_path,
            previous_epoch=previous,
            epoch=info.epoch,
            interrupted_cell=interrupted,
            kernel=info,
            still_stale=await self._still_stale(loaded, info.epoch),
        )


def _code_cells(loaded: Loaded, names: Sequence[str]) -> list[CellView]:
    views = [loaded.document.cell(name) for name in names]
    other = [view.name for view in views if view.cell_type != "code"]
    if other:
        raise UsageError(
            "Only code cells can be executed.",
            {"cells": other, "path": str(loaded.document.path)},
        )
    return views


def _not_running(notebook_path: Path) -> KernelError:
    return KernelError(
        ErrorCode.KERNEL_NOT_RUNNING,
        "no live kernel for this notebook; execute a cell first",
        {"notebook_path": str(notebook_path)},
    )
