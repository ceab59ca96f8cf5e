"""A document whose notebook lives in a ``store.NotebookStore``: every read and write of the
cells goes through the store, as cell operations.

:class:`StoreDocument` has the operations of :class:`~jupyter_jcli.notebook.document.Document`
(add, update, remove and move a cell, cache and output writes, undo) with the same rules and
codes: each is computed by the same pure code (``_commit.mutated`` over ``_edits``,
``_outputs`` merges, ``_revert``) on the cells the store holds now, turned into cell
operations (``store.ops_between``) and committed at the version it read, under the store's
lock. A commit refused because the notebook changed meanwhile (``WRITE_CONFLICT``,
``version_changed`` or ``cell_changed``) starts again from the fresh content, at most
``document.WRITE_ATTEMPTS`` times: the edit then checks its revs on the cells as they are
(``REV_MISMATCH``), so someone else's work is never lost. The undo records are the store's;
an undo always reverts the record on the cells now (``merged``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from jupyter_jcli.errors import ErrorCode, NotebookError, UsageError
from jupyter_jcli.notebook._files import FileState
from jupyter_jcli.notebook._views import CellView, MutationCheck, MutationResult
from jupyter_jcli.notebook.document import WRITE_ATTEMPTS, Document
from jupyter_jcli.notebook.snapshots import LOCK_TIMEOUT, UndoResult
from jupyter_jcli.notebook.store import (
    NotebookRef,
    NotebookStore,
    StoreChange,
    StoreRead,
    UndoEntry,
    ops_between,
)

__all__ = ["StoreDocument", "open_document", "open_notebook"]

T = TypeVar("T")


def open_document(ref: NotebookRef, store: NotebookStore) -> StoreDocument:
    """Load the notebook ``ref`` from ``store``. Writes nothing.

    Raises:
        NotebookError: the store's read codes (``FILE_NOT_FOUND``, ...).
    """
    return StoreDocument(ref, store, store.read(ref))


class StoreDocument(Document):
    """A :class:`Document` over a store (module docstring). Create with
    :func:`open_document`."""

    _warm_cached = False  # the warm cache knows files only

    def __init__(self, ref: NotebookRef, store: NotebookStore, read: StoreRead) -> None:
        self._ref = ref
        self._store = store
        self._version = read.version
        super().__init__(Path(ref.path), read.notebook, (), None, None)

    # ------------------------------------------------------------------ reading

    @property
    def ref(self) -> NotebookRef:
        """Which notebook, in which store."""
        return self._ref

    @property
    def store(self) -> NotebookStore:
        """The store it lives in."""
        return self._store

    @property
    def notebook_path(self) -> Path:
        """The notebook's path in its store."""
        return self._path

    @property
    def files(self) -> tuple[FileState, ...]:
        """No files: the store holds the notebook."""
        return ()

    def check_writable(self) -> None:
        """Nothing to check before a write: the store refuses at the commit."""

    def reload(self) -> None:
        """Read the notebook from the store again."""
        self._take(self._store.read(self._ref))

    def _refresh(self) -> bool:
        read = self._store.read(self._ref)
        if read.version == self._version:
            return False
        self._take(read)
        return True

    def _take(self, read: StoreRead, views: tuple[CellView, ...] | None = None) -> None:
        self._version = read.version
        self._adopt(read.notebook, (), views=views)

    # ------------------------------------------------------------------ writes

    def _attempts(self, attempt: Callable[[bool], tuple[T, StoreChange]]) -> T:
        """Under the store's lock, at most ``WRITE_ATTEMPTS`` times: refresh, let
        ``attempt(reloaded)`` compute ``(value, change)`` from the fresh content, commit the
        change at the version read, adopt what the store holds then."""
        reloaded = False
        with self._store.lock(self._ref, LOCK_TIMEOUT):
            for number in range(WRITE_ATTEMPTS):
                reloaded = self._refresh() or reloaded
                value, change = attempt(reloaded)
                if not change.ops and change.pop is None:
                    return value
                try:
                    read = self._store.commit(self._ref, change)
                except NotebookError as err:
                    if not _retry(err) or number == WRITE_ATTEMPTS - 1:
                        raise
                    continue
                self._take(read)
                return value
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _mutate(
        self,
        operation: str,
        edit: Callable[[Any], int],
        *,
        removes: bool = False,
        check: MutationCheck | None = None,
    ) -> MutationResult:
        from dataclasses import replace

        from jupyter_jcli.notebook._commit import mutated
        from jupyter_jcli.notebook._revert import record_mutation

        def attempt(reloaded: bool) -> tuple[MutationResult, StoreChange]:
            cells: list[dict[str, Any]] = self._notebook["cells"]
            work, views, result = mutated(
                cells,
                self._names,
                self._views,
                path=self._path,
                operation=operation,
                edit=edit,
                removes=removes,
                nbformat_minor=int(self._notebook.get("nbformat_minor", 0)),
                previous=self.structure_rev,
                reloaded=reloaded,
            )
            ops = ops_between(cells, work.cells, work.origins())
            result = replace(result, written=(self._path,) if ops else ())
            if check is not None:
                check(result, views)
            record = record_mutation(cells, self._names, work.cells, work.names)
            return result, StoreChange(
                self._version, ops, undo=(operation, record) if ops else None
            )

        return self._attempts(attempt)

    def _write_cells(
        self,
        change: Callable[[tuple[CellView, ...], list[dict[str, Any]]], list[str]],
        *,
        store_names: bool = False,
    ) -> tuple[str, ...]:
        def attempt(_reloaded: bool) -> tuple[tuple[str, ...], StoreChange]:
            before: list[dict[str, Any]] = self._notebook["cells"]
            cells = list(before)
            names = tuple(change(self._views, cells))
            if not names:
                return names, StoreChange(self._version, ())
            if store_names:
                from jupyter_jcli.notebook._outputs import store_names as store

                store(self._views, cells)
            return names, StoreChange(self._version, ops_between(before, cells, range(len(cells))))

        return self._attempts(attempt)

    def undo(self, *, force: bool = False) -> UndoResult:
        """Revert the newest undo record of the notebook on its cells now (see
        :meth:`Document.undo`; always ``merged``).

        Raises:
            NotebookError: ``UNDO_EMPTY``, ``UNDO_CONFLICT`` (details ``conflicts``), the
                store's write codes. On any error nothing is changed.
        """
        from jupyter_jcli.notebook._revert import revert
        from jupyter_jcli.notebook._undo import (
            undo_conflict_error,
            undo_empty_error,
            undone_names,
        )

        if not self._store.undo_entries(self._ref):
            raise undo_empty_error(self._path)
        touched: list[tuple[int, ...]] = []

        def attempt(_reloaded: bool) -> tuple[UndoResult, StoreChange]:
            entries = self._store.undo_entries(self._ref)
            if not entries:
                raise undo_empty_error(self._path)
            newest: UndoEntry = entries[-1]
            if newest.record is None:
                raise undo_conflict_error(newest.operation, self._path, [], {})
            cells: list[dict[str, Any]] = self._notebook["cells"]
            reverted = revert(newest.record, cells, self._names)
            conflicts = tuple(conflict.to_dict() for conflict in reverted.conflicts)
            if conflicts and not force:
                raise undo_conflict_error(newest.operation, self._path, list(conflicts))
            ops = ops_between(cells, reverted.cells, reverted.origins)
            touched[:] = [reverted.touched]
            result = UndoResult(
                operation=newest.operation,
                restored=(self._path,) if ops else (),
                forced=force and bool(conflicts),
                remaining=len(entries) - 1,
                merged=True,
                changed=reverted.removed,
                conflicts=conflicts,
                renamed=reverted.renamed,
            )
            return result, StoreChange(self._version, ops, pop=newest)

        result = self._attempts(attempt)
        return undone_names(result, touched[-1], self._names)


def _retry(err: NotebookError) -> bool:
    """A commit refused because the notebook changed meanwhile: merge again."""
    return err.code == ErrorCode.WRITE_CONFLICT and err.details.get("reason") != "lock_timeout"


def open_notebook(
    target: str | os.PathLike[str] | NotebookRef,
    *,
    store: NotebookStore | None = None,
    cache_dir: Path | None = None,
) -> Document:
    """The document of a notebook named by a path or a :class:`~.store.NotebookRef`.

    A path is resolved to a ref of ``store``, or of the store the active
    ``stores.StoreChoice`` gives for it (``stores.using_store``; none: a local file). A
    path opening in the local store, or a ``"local"`` ref without ``store``, is
    ``Document.load(path, cache_dir=cache_dir)``: the local store's document, with its
    ``.py`` pairing, warm cache and byte-exact undo. Any other ref is opened in ``store``
    (:func:`open_document`).

    Raises:
        UsageError: a ref of another store without ``store``, or of another kind than it.
        NotebookError: the read codes of ``Document.load`` or of the store.
    """
    if not isinstance(target, NotebookRef):
        from jupyter_jcli.notebook.stores import active_choice, resolve_ref

        choice = active_choice() if store is None else None
        if choice is not None:
            store = choice.store_for(target)
        if store is None or store.kind == "local":  # a file: the local document
            return Document.load(target, cache_dir=cache_dir)
        target = resolve_ref(target, store, server_root=choice.path_root if choice else None)
    if store is None and target.local_path is not None:
        return Document.load(target.local_path, cache_dir=cache_dir)
    if store is None:  # a ref of another store: the active choice's store of its kind
        from jupyter_jcli.notebook.stores import active_choice

        choice = active_choice()
        store = None if choice is None else choice.store_of(target)
    if store is None or store.kind != target.store:
        raise UsageError(
            f"{target} is a notebook of the {target.store!r} store; open it with that store.",
            {"path": target.path, "store": target.store},
        )
    return open_document(target, store)
