"""The kernel-attached workbench: one :class:`Workbench` per server process or CLI command.

It owns a :class:`~jupyter_jcli.kernels.KernelPool` (one kernel per notebook, started lazily on
the first execution, in the notebook's folder, with the kernelspec from the notebook's metadata)
and one execution log per notebook (``_execution_log``). Cell statuses (``fresh``, ``stale``,
``error``, ``never_run``) are computed from the log, the live kernel's epoch and the cells'
current revs whenever they are asked for, so the kernel-less mutations of this package need no
hook: an edited cell has a rev no run carries, and its dependents follow through the DAG.

Paths: an ``.ipynb`` or a py:percent ``.py`` paired with one; both spellings share the
``.ipynb``'s kernel and execution log, and outputs are written into the ``.ipynb``.

The per-notebook state (kernels, execution logs, kernelspec choices, the warm document cache of
``notebook._warm``, active around every call) and the internals the operations share live in
the base class, ``_state.WorkbenchState``; this module keeps the lifecycle and the operations. Each
operation loads its notebook once (``_load``: warm, so an unchanged file is neither read nor
analysed again) and hands that snapshot to the pure functions that answer it: the overview
and reads (``_overview``, ``_read``, ``_status_views``), the plan, the batch and the
results (``_batches``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from anyio.abc import AsyncResource

from jupyter_jcli.errors import UsageError
from jupyter_jcli.kernels import execute_timeout
from jupyter_jcli.workbench._background import BackgroundBatches
from jupyter_jcli.workbench._batches import (
    BatchOptions,
    code_cells,
    empty_batch,
    execute_outcome,
    not_running,
    run_stale_outcome,
    stale_plan,
)
from jupyter_jcli.workbench._execute import CellCallback, ProgressCallback
from jupyter_jcli.workbench._execution_log import not_fresh, stale_causes, statuses
from jupyter_jcli.workbench._inline import CodeOperation, CodeOutcome, execute_code
from jupyter_jcli.workbench._inspect import (
    DEFAULT_INSPECT_MAX_CHARS,
    VariableOutcome,
    probe_expression,
    probe_variable,
)
from jupyter_jcli.workbench._outcomes import ExecuteOutcome, KernelOutcome, RunStaleOutcome
from jupyter_jcli.workbench._overview import DEFAULT_OVERVIEW_LIMIT, check_page
from jupyter_jcli.workbench._read import DEFAULT_READ_BUDGET, check_read_arguments, read_loaded
from jupyter_jcli.workbench._server import join, join_to_plan, refuse_shared_restart
from jupyter_jcli.workbench._state import PathArg, WorkbenchState
from jupyter_jcli.workbench._variables import VariablesOutcome, probe_variables

if TYPE_CHECKING:  # the status views load with the read that answers them
    from jupyter_jcli.kernels import NotebookKernel
    from jupyter_jcli.notebook.document import Document
    from jupyter_jcli.workbench._status_views import SessionOverview, SessionReadCellsResult

__all__ = ["Workbench"]


class Workbench(WorkbenchState, AsyncResource):
    """The operations that need a kernel, plus the reads that report cell statuses.

    Use ``async with Workbench() as wb:`` (every kernel is shut down on exit, bounded), or
    call :meth:`shutdown` yourself. Executions on one notebook never interleave: a call that
    finds the notebook's kernel held by another call fails at once with ``KERNEL_BUSY``
    (details name the running cell). Calls on different notebooks run concurrently.

    Args:
        cache_dir: snapshot cache base folder for the document model (default: the user
            cache; see :mod:`jupyter_jcli.notebook.snapshots`).
        pool: the kernels to use (default: a new local :class:`KernelPool`); a pool built
            on another backend factory runs the same workbench on it (the test suite's
            in-process fake, ``tests/kernel_fakes``, is one). The workbench shuts its kernels
            down on exit either way.
        server: run the kernels on this Jupyter Server (see :mod:`jupyter_jcli.workbench._server`):
            the pool defaults to :func:`jupyter_jcli.kernels.backend_factory`'s for it, kernels
            a person already runs are joined (``attached``), and ``inspect_variable`` and
            ``restart_kernel`` join the notebook's kernel when none is live. ``None`` (the
            default): local kernels. A ``pool`` given too is used as it is.
        store: where notebooks are read and written: a ``NotebookStore`` (every notebook
            in it; a path names a notebook of it through ``notebook.stores.resolve_ref``)
            or a ``StoreChoice`` (:func:`stores_from_options`; ``auto`` picks per notebook).
            Every operation opens its notebook through ``notebook.store.open_notebook``,
            so reads, edits, undo and the outputs of runs go through the store; a notebook
            of another store than the local one has no warm cache, and its kernel, run
            log and registry entry are keyed by ``StoreChoice.kernel_path`` (a server
            store's notebook: its path under the server's root, the same session path
            the server knows). ``None`` (the default): the choice active where the
            workbench is built (``notebook.stores.using_store``), else local files.

    Raises:
        KernelError: the codes of ``backend_factory`` for ``server`` (``SERVER_UNREACHABLE``
            in a build without the Jupyter Server backend).
    """

    @property
    def background(self) -> BackgroundBatches:
        """The background batches of this workbench (:mod:`~jupyter_jcli.workbench._background`):
        started only inside ``async with workbench.background:``, whose task group they live in."""
        runs: BackgroundBatches | None = getattr(self, "_background", None)
        if runs is None:
            runs = self._background = BackgroundBatches()
        return runs

    async def shutdown(self) -> None:
        """Shut every kernel down (graceful up to 5 s each, then killed; shielded), once
        the finished cells of the batches still running (background batches included) are
        saved."""
        from jupyter_jcli.workbench._batch_save import save_running_batches

        await save_running_batches()
        await self._pool.shutdown_all()

    async def aclose(self) -> None:
        """:meth:`shutdown`, as ``async with`` does on exit."""
        await self.shutdown()

    # ------------------------------------------------------------------ reads

    async def notebook_overview(
        self, path: PathArg, *, start: int = 0, limit: int | None = DEFAULT_OVERVIEW_LIMIT
    ) -> SessionOverview:
        """The overview of :func:`~jupyter_jcli.workbench.notebook_overview` (the page of
        ``limit`` cells from ``start``) plus, per cell, ``status`` and ``tldr``, and the
        notebook's ``kernel`` (:class:`KernelInfo`).

        Reads only: starts no kernel, writes nothing, never calls a model (tldrs are cached
        summaries or fallbacks marked ``*``).

        Raises:
            NotebookError: the read codes of :func:`~jupyter_jcli.workbench.notebook_overview`.
        """
        from jupyter_jcli.workbench._status_views import overview_with_statuses

        check_page(start, limit)
        loaded = await self._load(path)
        info = await self._kernel_info(loaded.document)
        log = self._log_of(loaded.document)
        busy = self._kernel_busy(loaded.document, info.epoch)
        overview = partial(overview_with_statuses, loaded, log, info, busy=busy)
        return await self._thread(partial(overview, start=start, limit=limit))

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
        from jupyter_jcli.workbench._status_views import judged_log, session_read

        check_read_arguments(names, start, stop, budget, 0)
        loaded = await self._load(path)
        info = await self._kernel_info(loaded.document)
        read = partial(read_loaded, loaded, names=names, start=start, stop=stop, budget=budget)
        result = await self._thread(partial(read, include_images=include_images))
        busy = self._kernel_busy(loaded.document, info.epoch)
        log = judged_log(self._log_of(loaded.document), info.epoch, busy)
        by_name = statuses(loaded, log, info.epoch)
        causes = stale_causes(loaded, log, info.epoch)
        return session_read(result, by_name, info.epoch, causes=causes)

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
        on_cell: CellCallback | None = None,
    ) -> ExecuteOutcome:
        """Run the named code cells in the given order on the notebook's kernel.

        The kernel is started first if none runs (``kernel_started``; a dead one is replaced:
        ``kernel_restarted``). The cells run under one hold of the kernel, so no other call
        interleaves; the first cell that does not end ``ok`` stops the call (the rest are
        ``skipped``). The outputs and execution counts of the cells that ran, and the
        display updates they sent to earlier cells, are written into the notebook
        atomically as the cells finish (at most every 2 s) and before returning (outside
        edits kept; a cell edited meanwhile is not written).
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
                ``metadata.kernelspec.name`` (e.g. when that one is not installed); checked
                first (not installed: ``KERNELSPEC_NOT_FOUND``; a live kernel of another
                kernelspec: ``KERNELSPEC_MISMATCH``, as the call would not run on the kernel
                named; :meth:`restart_kernel` with ``kernel_name`` switches), then remembered
                for this notebook by this workbench. A refused name is not remembered.
            on_cell: called with each cell as it finishes (see :data:`CellCallback`).

        Raises:
            UsageError: ``USAGE_ERROR`` for no names, a Markdown/raw cell or a bad timeout.
            NotebookError: ``CELL_NOT_FOUND``, ``NOTEBOOK_WRITE_FAILED``, read codes.
            KernelError: ``KERNEL_BUSY``, ``KERNELSPEC_NOT_FOUND`` (details: ``kernelspec``,
                ``installed``, ``source``; checked before any cell is reported running),
                ``KERNELSPEC_MISMATCH`` (details ``kernelspec``, ``running_kernelspec``),
                ``KERNEL_START_FAILED``.
        """
        if isinstance(names, str) or not names:
            raise UsageError("execute_cells needs a list of one or more cell names.")
        execute_timeout(timeout)  # a bad timeout fails before anything starts
        options = BatchOptions(timeout, on_progress, include_images, on_cell)
        loaded = await self._load(path)
        kernel = await self._kernel(loaded.document, kernel_name)
        async with kernel.hold(), self._choice.explained(loaded.document):
            started = await join_to_plan(kernel, self._server)  # joined: not started
            await self._startable(kernel)
            loaded = await self._current(loaded)
            views = code_cells(loaded, names)
            batch = await self._run_cells(kernel, loaded, views, options)
        if started:  # the join started it, before the run could see it start
            batch = dataclasses.replace(batch, kernel_started=True)
        info = await kernel.info()
        return await self._thread(
            execute_outcome, loaded, info, batch, self._log_of(loaded.document)
        )

    async def run_stale(
        self,
        path: PathArg,
        *,
        dry_run: bool = False,
        timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
        include_images: bool = True,
        kernel_name: str | None = None,
        on_cell: CellCallback | None = None,
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
            on_cell: as for :meth:`execute_cells`.

        Raises:
            The codes of :meth:`execute_cells`.
        """
        execute_timeout(timeout)
        options = BatchOptions(timeout, on_progress, include_images, on_cell)
        loaded = await self._load(path)
        document = loaded.document
        if dry_run:
            if kernel_name is not None:  # refused or remembered as a run would, no kernel
                await self._kernel(document, kernel_name)
            info = await self._kernel_info(document)
            by_name = statuses(loaded, self._log_of(document), info.epoch)
            return run_stale_outcome(
                loaded,
                info,
                empty_batch(),
                None,
                plan=stale_plan(loaded, by_name),
                dry_run=True,
                still_stale=not_fresh(by_name),
            )
        kernel = await self._kernel(document, kernel_name)
        async with kernel.hold(), self._choice.explained(document):
            started = await join_to_plan(kernel, self._server)
            await self._startable(kernel)
            loaded = await self._current(loaded)
            epoch = kernel.epoch if await kernel.is_alive() else None
            plan = stale_plan(loaded, statuses(loaded, self._log_of(document), epoch))
            views = [loaded.document.cell(name) for name in plan]
            batch = await self._run_cells(kernel, loaded, views, options)
        if started:  # the join started it, before the run could see it start
            batch = dataclasses.replace(batch, kernel_started=True)
        info = await kernel.info()
        log = self._log_of(loaded.document)
        return await self._thread(partial(run_stale_outcome, loaded, info, batch, log, plan=plan))

    async def execute_code(
        self,
        path: PathArg | None,
        code: str,
        *,
        timeout: float | None = None,
        kernel_name: str | None = None,
        display_mode: str | None = None,
        cwd: PathArg | None = None,
        operation: CodeOperation = "exec",
        script_path: Path | None = None,
        condensed: bool = False,
        include_images: bool = True,
    ) -> CodeOutcome:
        """Run ``code`` on the notebook's kernel (``path``), or with ``path=None`` on a
        scratch kernel in ``cwd``, touching no notebook; see
        :func:`jupyter_jcli.workbench._inline.execute_code` (arguments, result, codes):
        ``condensed`` answers the outputs condensed as :meth:`execute_cells` does (the
        ``execute_code`` tool), else short text inline and the rest saved under ``cwd``."""
        return await execute_code(
            self,
            path,
            code,
            timeout=timeout,
            kernel_name=kernel_name,
            display_mode=display_mode,
            cwd=cwd,
            operation=operation,
            script_path=script_path,
            condensed=condensed,
            include_images=include_images,
        )

    # ------------------------------------------------------------------ kernel control

    async def restart_kernel(
        self, path: PathArg, *, kernel_name: str | None = None, force: bool = False
    ) -> KernelOutcome:
        """Restart the notebook's kernel (start one if none runs): a new epoch, so every
        code cell is ``never_run``.

        A kernel someone else started (``attached``, e.g. a JupyterLab session on the server)
        is restarted only with ``force``. On a server, with no live kernel, the notebook's
        kernel is joined first to learn that; a kernel the join had to start is already new
        and is not restarted again.

        A cell running on the old kernel is stopped first (bounded): it ends
        ``interrupted`` (``interrupted_by: kernel_restarted``) in the call that ran it, with
        its outputs so far saved, and that call runs no further cell
        (``KERNEL_RESTARTED``). ``interrupted_cell`` names it. Overlapping restarts are one.

        Args:
            path: the notebook.
            kernel_name: start this kernelspec instead of the notebook's (checked before the
                live kernel is stopped: ``KERNELSPEC_NOT_FOUND`` keeps it and its variables;
                remembered once checked, as for :meth:`execute_cells`).
            force: restart an ``attached`` kernel too.

        Raises:
            KernelError: ``KERNEL_SHARED`` (an attached kernel without ``force``; nothing was
                restarted), ``KERNELSPEC_NOT_FOUND``, ``KERNEL_START_FAILED``; ``KERNEL_BUSY``
                when the call holding the kernel does not let it go within
                :data:`~jupyter_jcli.kernels.STOP_WAIT` s (nothing was restarted).
            NotebookError: the read codes of ``Document.load``.
        """
        loaded = await self._load(path)
        kernel = await self._kernel(loaded.document, kernel_name, switch=True)
        info = await kernel.info()
        async with self._choice.explained(loaded.document):
            joined = self._server is not None and info.epoch is None
            current = await join(kernel) if joined else info
            refuse_shared_restart(current, force=force, notebook_path=loaded.document.notebook_path)
            if not joined or current.origin.attached:
                await kernel.restart()
        return await self._kernel_outcome("restart_kernel", loaded, kernel, info)

    async def interrupt_kernel(self, path: PathArg) -> KernelOutcome:
        """Interrupt the cell running on the notebook's kernel (it ends with
        ``KeyboardInterrupt``; the call running it reports it ``interrupted``,
        ``interrupted_by: kernel_interrupted``, and runs no further cell). The epoch and the
        variables are kept.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when the notebook has no live kernel.
            NotebookError: the read codes of ``Document.load``.
        """
        loaded = await self._load(path)
        kernel = self._pool.get(self._kernel_path(loaded.document))
        if kernel is None:
            raise not_running(loaded.document.notebook_path)
        info = await kernel.info()
        await kernel.interrupt()
        return await self._kernel_outcome("interrupt_kernel", loaded, kernel, info)

    async def inspect_variable(
        self, path: PathArg, name: str, *, max_chars: int = DEFAULT_INSPECT_MAX_CHARS
    ) -> VariableOutcome:
        """Type, length or shape, dtype or schema and a bounded head/repr of one live global.

        Runs a silent probe (no cell added, execution count and history untouched) that
        imports nothing: pandas and numpy are used only when the user's code imported them.
        On a server the notebook's kernel is joined when none is live (a person's session
        holds their variables).

        Args:
            path: the notebook whose kernel holds the variable.
            name: a global variable name (a Python identifier).
            max_chars: bound of the returned repr, in characters (>= 1).

        Raises:
            UsageError: ``USAGE_ERROR`` for a name that is not an identifier, bad max_chars.
            KernelError: ``KERNEL_NOT_RUNNING`` (no live kernel, locally), ``VARIABLE_NOT_FOUND``,
                ``KERNEL_BUSY`` (a cell is running), ``KERNEL_DIED``.
            JcliError: ``INTERNAL_ERROR`` when the probe itself fails or times out.
        """
        expression = probe_expression(name, max_chars)
        document, kernel = await self._live_kernel(path)
        return await probe_variable(
            kernel, name, expression, path=document.path, notebook_path=document.notebook_path
        )

    async def list_variables(self, path: PathArg) -> VariablesOutcome:
        """Every user variable of the notebook's live kernel with its type and a short
        shape, length or repr (:mod:`jupyter_jcli.workbench._variables`: IPython's names,
        modules and ``_`` names hidden; at most 200 entries and 8,000 characters, the rest
        counted in ``omitted`` and named in ``omitted_names``).

        A silent probe, as :meth:`inspect_variable`'s: no cell, no execution count, no
        history, nothing imported or left in the namespace.

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` (no live kernel, locally), ``KERNEL_BUSY``,
                ``KERNEL_DIED``.
            JcliError: ``INTERNAL_ERROR`` when the probe itself fails or times out.
        """
        document, kernel = await self._live_kernel(path)
        return await probe_variables(
            kernel, path=document.path, notebook_path=document.notebook_path
        )

    async def _live_kernel(self, path: PathArg) -> tuple[Document, NotebookKernel]:
        """The notebook's document and live kernel (on a server, the notebook's kernel is
        joined when none is live here).

        Raises:
            KernelError: ``KERNEL_NOT_RUNNING`` when there is none.
        """
        document = await self._document(path)
        kernel = self._pool.get(self._kernel_path(document))
        if self._server is not None and (kernel is None or not await kernel.is_alive()):
            kernel = await self._kernel(document)
            await join(kernel)
        if kernel is None or not await kernel.is_alive():
            raise not_running(document.notebook_path)
        return document, kernel
