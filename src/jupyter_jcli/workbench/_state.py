"""The state under :class:`~jupyter_jcli.workbench.Workbench`: its kernel pool, execution logs,
kernelspec choices, warm document cache and what its calls saw of each notebook
(``_sightings``), and the internals its operations share (loading once per operation, the
worker thread, the notebook's kernel, log and kernel info).

:class:`WorkbenchState` is the workbench's base class; the operations and their documentation
are in :mod:`jupyter_jcli.workbench._session`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio

from jupyter_jcli.errors import ErrorCode, KernelError
from jupyter_jcli.kernels import (
    KernelInfo,
    KernelPool,
    NotebookKernel,
    ServerConfig,
)
from jupyter_jcli.notebook import DocumentCache, warm
from jupyter_jcli.notebook.document import CellView, Document
from jupyter_jcli.notebook.store import NotebookStore, open_notebook
from jupyter_jcli.notebook.stores import StoreChoice, active_choice, using_store
from jupyter_jcli.workbench._batches import BatchOptions, kernel_outcome, not_started, run_cells
from jupyter_jcli.workbench._execute import Batch
from jupyter_jcli.workbench._execution_log import ExecutionLog
from jupyter_jcli.workbench._kernel_choice import KernelChoice
from jupyter_jcli.workbench._load import Loaded, load
from jupyter_jcli.workbench._outcomes import KernelOutcome
from jupyter_jcli.workbench._server import server_of_store, server_pool, store_choice_of
from jupyter_jcli.workbench._sightings import Sightings

__all__ = ["PathArg", "WorkbenchState"]

PathArg = str | os.PathLike[str]
_T = TypeVar("_T")


class WorkbenchState:
    """The per-process state of a workbench (see :class:`~jupyter_jcli.workbench.Workbench`
    for the arguments)."""

    def __init__(
        self,
        *,
        cache_dir: Path | None = None,
        pool: KernelPool | None = None,
        server: ServerConfig | None = None,
        store: NotebookStore | StoreChoice | None = None,
    ) -> None:
        self._cache_dir = cache_dir
        # no store given: the choice active where it is built (a j-cli command's --store)
        self._stores = store_choice_of(store) if store is not None else active_choice()
        if server is None and pool is None:  # a server store's kernels run on its server
            server = server_of_store(self._stores)
        self._server = server
        if pool is None:
            pool = server_pool(server) if server is not None else KernelPool()
        self._pool = pool
        self._logs: dict[Path, ExecutionLog] = {}
        self._choice = KernelChoice()
        self._seq = itertools.count(1)
        self._sightings = Sightings()
        self._documents = DocumentCache(watcher=self._sightings)

    @property
    def documents(self) -> DocumentCache:
        """The warm cache of loaded notebooks (``notebook._warm``), active in every call of
        this workbench and in :meth:`warm` blocks."""
        return self._documents

    def changed_by_others(self, path: PathArg) -> str | None:
        """One short line naming the cells someone else changed (edited, added, removed,
        moved, renamed, outputs cleared) in the notebook at ``path`` since this workbench's
        calls last saw it (``_sightings``): ``since your last call: edited a, b; added c``,
        at most 10 cells named, the others counted. Said once: the next call gets ``None``
        unless more changed. ``None`` too when this workbench never saw the notebook before,
        and for every change its own calls made. Reads nothing."""
        return self._sightings.take(path)

    @property
    def stores(self) -> StoreChoice | None:
        """The store each notebook opens in (``None``: every path is a local file)."""
        return self._stores

    @contextlib.contextmanager
    def warm(self) -> Iterator[DocumentCache]:
        """Make this workbench's document cache and store choice the active ones for the
        block (a server runs its kernel-less operations inside it, so they share the cache
        and open every notebook in the workbench's store)."""
        with warm(self._documents) as cache, using_store(self._stores):
            assert cache is not None
            yield cache

    @property
    def pool(self) -> KernelPool:
        """The kernel pool (one kernel per notebook)."""
        return self._pool

    @property
    def server(self) -> ServerConfig | None:
        """The Jupyter Server the kernels run on (``None``: local kernels)."""
        return self._server

    async def _thread(self, function: Callable[..., _T], *args: object) -> _T:
        """``function(*args)`` in a worker thread, with this workbench's cache active."""

        def call() -> _T:
            with self.warm():
                return function(*args)

        return await anyio.to_thread.run_sync(call)

    async def _document(self, path: PathArg) -> Document:
        return await self._thread(partial(open_notebook, path, cache_dir=self._cache_dir))

    def _kernel_path(self, document: Document) -> Path:
        """The path that keys the notebook's kernel, execution log and registry entry: a local
        document's ``.ipynb``; a notebook of another store its ref's
        (``StoreChoice.kernel_path``: under the server's root for a server store)."""
        ref = getattr(document, "ref", None)
        if ref is None or ref.local_path is not None:
            return document.notebook_path
        choice = self._stores or StoreChoice.of(document.store)  # type: ignore[attr-defined]
        return choice.kernel_path(ref)

    async def _load(self, path: PathArg) -> Loaded:
        """The notebook and its graph, loaded once for the operation (warm)."""
        return await self._thread(partial(load, path, cache_dir=self._cache_dir))

    async def _current(self, loaded: Loaded) -> Loaded:
        """``loaded`` as the file is now, once the kernel is held: the same content when the
        file did not change (a validation of the warm cache, nothing parsed), else loaded
        again."""
        document = loaded.document  # a notebook of another store: by its ref
        return await self._load(getattr(document, "ref", None) or document.path)

    async def _kernel(
        self, document: Document, kernel_name: str | None = None, *, switch: bool = False
    ) -> NotebookKernel:
        """The notebook's kernel object, set to start the kernelspec chosen for it.

        A ``kernel_name`` is checked before it is remembered (a name that cannot be honoured
        is refused at once and never comes back in a later call): it must be installed where
        the kernel runs, and, unless ``switch`` (a restart starts it), the notebook's live
        kernel must run it (the call would use that kernel, not the one named).

        Raises:
            UsageError: ``USAGE_ERROR`` for a blank name.
            KernelError: ``KERNELSPEC_NOT_FOUND`` (``source: "kernel_name"``),
                ``KERNELSPEC_MISMATCH``; nothing was started, stopped or remembered.
        """
        path = self._kernel_path(document)
        if kernel_name is not None:
            name = KernelChoice.checked_name(kernel_name)
            kernel = self._pool.kernel(path)
            info = await kernel.info()  # joins a kernel another process runs (never starts)
            try:
                await kernel.require_kernelspec(name)
            except KernelError as err:
                if err.code != ErrorCode.KERNELSPEC_NOT_FOUND:
                    raise
                raise self._choice.refused(err, document, name) from err
            if not switch and info.epoch is not None and info.kernelspec_name != name:
                raise KernelChoice.mismatch(document, name, info.kernelspec_name)
            self._choice.override(document, name)
        spec, _source = self._choice.kernelspec(document)
        return self._pool.kernel(path, kernelspec_name=spec)

    async def _startable(self, kernel: NotebookKernel) -> None:
        """With no live kernel, check that the kernelspec its start will launch is installed,
        before anything runs or is reported running (``KERNELSPEC_NOT_FOUND``; call it
        within :meth:`KernelChoice.explained`)."""
        if not await kernel.is_alive():
            await kernel.require_kernelspec()

    def _log(self, document: Document) -> ExecutionLog:
        path = self._kernel_path(document).resolve()
        if path not in self._logs:  # the registry's log for a shared pool
            from jupyter_jcli.workbench._shared_workbench import execution_log_for

            self._logs[path] = execution_log_for(self._pool, path, self._server)
        return self._logs[path]

    def _log_of(self, document: Document) -> ExecutionLog | None:
        """The notebook's execution log if it has one: always for a shared pool (the registry's
        log holds other processes' runs too), else once this workbench ran a cell."""
        if self._pool.records is not None or self._server is not None:
            return self._log(document)
        return self._logs.get(self._kernel_path(document).resolve())

    async def _kernel_info(self, document: Document) -> KernelInfo:
        """The notebook's kernel; ``busy`` with the registry's running cell when another
        process runs code on it, or a command that ended (killed) left its code running:
        this process's own hold knows only its own executions."""
        kernel = self._pool.get(self._kernel_path(document))
        if kernel is not None:
            info = await kernel.info()
            if info.state != "idle":  # our own hold knows what it runs
                return info
        elif self._server is not None:
            info = await self._server_kernel_info(document)
        else:
            return not_started(self._kernel_path(document), self._choice.kernelspec(document)[0])
        busy = self._kernel_busy(document, info.epoch)  # None without an epoch
        if busy is None:
            return info
        return dataclasses.replace(info, state="busy", running_cell=busy["running_cell"])

    async def _server_kernel_info(self, document: Document) -> KernelInfo:
        """The notebook's server kernel as a read sees it without joining: its session's state,
        and the epoch of the ledger's runs while the kernel is as our last process left it
        (:meth:`~jupyter_jcli.kernels.ServerLedger.trusted_epoch`), so the cells that ran in an
        earlier command are fresh; ``attached`` with no epoch otherwise (every cell
        ``never_run``, as a join would judge it); ``not_started`` without a session, or when
        the server cannot say (a read never fails on the kernel's account)."""
        from jupyter_jcli.kernels import KernelOrigin, ServerLedger, notebook_session

        assert self._server is not None
        path = self._kernel_path(document)
        spec = self._choice.kernelspec(document)[0]
        try:
            session = await notebook_session(self._server, path)
        except KernelError:  # no session to find (a gateway; a path outside the root), or
            session = None  # the server did not answer: a read reports no kernel, as it did
        if session is None or session.state == "dead":
            return not_started(path, spec)
        ledger = ServerLedger(self._server.url)
        epoch = ledger.trusted_epoch(path.resolve(), session.kernel_id, session.last_activity)
        origin = KernelOrigin(
            attached=epoch is None,
            started_by=session.started_by,
            kernel_id=session.kernel_id,
            server_url=self._server.url,
        )
        return dataclasses.replace(
            not_started(path, session.kernelspec or spec),
            state="busy" if session.state == "busy" else "idle",
            epoch=epoch,
            origin=origin,
        )

    def _kernel_busy(self, document: Document, epoch: str | None) -> dict[str, Any] | None:
        """What the registry says the kernel of ``epoch`` runs (``busy_facts``), ``None``
        when it records nothing running or the kernels are not the registry's."""
        records = self._pool.records
        if epoch is None or records is None:
            return None
        return records.running(self._kernel_path(document).resolve(), epoch)

    async def _kernel_outcome(
        self,
        operation: Literal["restart_kernel", "interrupt_kernel"],
        loaded: Loaded,
        kernel: NotebookKernel,
        before: KernelInfo,
    ) -> KernelOutcome:
        loaded = await self._current(loaded)
        info = await kernel.info()
        return kernel_outcome(
            operation,
            loaded,
            info,
            self._log_of(loaded.document),
            previous=before.epoch,
            interrupted=before.running_cell,
        )

    async def _run_cells(
        self,
        kernel: NotebookKernel,
        loaded: Loaded,
        views: Sequence[CellView],
        options: BatchOptions,
    ) -> Batch:
        """:func:`~jupyter_jcli.workbench._batches.run_cells` with this workbench's execution log
        of the notebook and its run sequence (``kernel`` held by the caller)."""
        return await run_cells(
            kernel,
            loaded,
            views,
            log=self._log(loaded.document),
            next_seq=lambda: next(self._seq),
            options=options,
        )
