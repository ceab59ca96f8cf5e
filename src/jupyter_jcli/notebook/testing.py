"""An in-memory notebook store for tests: notebooks with no file, in this process.

As ``httpx`` ships ``MockTransport``, this module ships :class:`MemoryStore`, a
:class:`~jupyter_jcli.notebook.store.NotebookStore` whose notebooks are dicts, so everything
above the store (documents, undo) can be driven without a disk::

    from jupyter_jcli.notebook.store import NotebookRef
    from jupyter_jcli.notebook.testing import MemoryStore, open_document

    store = MemoryStore()
    ref = NotebookRef("memory", "demo.ipynb")
    store.create(ref, {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []})
    document = open_document(ref, store)
    document.add_cell("x = 1")

Another writer is played with :meth:`MemoryStore.commit` (or :meth:`MemoryStore.replace`)
between a read and a commit of the code under test. The version is a counter; the lock is a
:class:`threading.Lock` per notebook (one writer at a time in this process); undo records
are kept per notebook in memory; the kernel place is this machine.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._store_document import StoreDocument, open_document
from jupyter_jcli.notebook.snapshots import LOCK_TIMEOUT, MAX_SNAPSHOTS
from jupyter_jcli.notebook.store import (
    KernelPlace,
    NotebookRef,
    StoreChange,
    StoreRead,
    UndoEntry,
    apply_ops,
    stale_version_error,
)

__all__ = ["MemoryStore", "StoreDocument", "open_document"]


class MemoryStore:
    """Notebooks held in memory (module docstring).

    Args:
        notebooks: path -> nbformat 4 notebook to start with (deep-copied).
    """

    kind = "memory"

    def __init__(self, notebooks: dict[str, dict[str, Any]] | None = None) -> None:
        self._notebooks: dict[str, dict[str, Any]] = {}
        self._versions: dict[str, int] = {}
        self._undo: dict[str, list[UndoEntry]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        for path, notebook in (notebooks or {}).items():
            self.create(NotebookRef(self.kind, path), notebook)

    def read(self, ref: NotebookRef) -> StoreRead:
        """A deep copy of the notebook and its version.

        Raises:
            NotebookError: ``FILE_NOT_FOUND``.
        """
        with self._guard:
            notebook = self._notebooks.get(self._key(ref))
            if notebook is None:
                raise NotebookError(
                    ErrorCode.FILE_NOT_FOUND, f"No notebook {ref}.", {"path": str(ref)}
                )
            return StoreRead(copy.deepcopy(notebook), self._versions[ref.path])

    def commit(self, ref: NotebookRef, change: StoreChange) -> StoreRead:
        """See ``store.NotebookStore.commit``."""
        with self._guard:
            key = self._key(ref)
            if key not in self._notebooks or self._versions[key] != change.version:
                raise stale_version_error(ref)
            notebook = self._notebooks[key]
            cells, _origins = apply_ops(notebook["cells"], change.ops, where=str(ref))
            if change.ops:
                self._notebooks[key] = {**notebook, "cells": cells}
                self._versions[key] += 1
            stack = self._undo.setdefault(key, [])
            if change.undo is not None and change.ops:
                stack.append(UndoEntry(change.undo[0], copy.deepcopy(change.undo[1])))
                del stack[:-MAX_SNAPSHOTS]
            if change.pop is not None and change.pop in stack:
                stack.remove(change.pop)
        return self.read(ref)

    def replace(self, ref: NotebookRef, notebook: dict[str, Any]) -> StoreRead:
        """Put ``notebook`` in place whatever is there (another program's save)."""
        with self._guard:
            key = self._key(ref)
            self._notebooks[key] = copy.deepcopy(notebook)
            self._versions[key] = self._versions.get(key, 0) + 1
        return self.read(ref)

    def create(self, ref: NotebookRef, notebook: dict[str, Any]) -> StoreRead:
        """Create a notebook.

        Raises:
            NotebookError: ``FILE_EXISTS``.
        """
        with self._guard:
            key = self._key(ref)
            if key in self._notebooks:
                raise NotebookError(
                    ErrorCode.FILE_EXISTS, f"{ref} already exists.", {"path": str(ref)}
                )
            self._notebooks[key] = copy.deepcopy(notebook)
            self._versions[key] = 1
        return self.read(ref)

    @contextmanager
    def lock(self, ref: NotebookRef, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
        """One writer at a time per notebook (not re-entrant).

        Raises:
            NotebookError: ``WRITE_CONFLICT`` (``reason: "lock_timeout"``, ``timeout_s``).
        """
        with self._guard:
            lock = self._locks.setdefault(self._key(ref), threading.Lock())
        if not lock.acquire(timeout=timeout):
            raise NotebookError(
                ErrorCode.WRITE_CONFLICT,
                f"another writer held {ref}'s write lock for {timeout:g} s; nothing was "
                "changed: try again",
                {"path": str(ref), "reason": "lock_timeout", "timeout_s": timeout},
            )
        try:
            yield
        finally:
            lock.release()

    def undo_entries(self, ref: NotebookRef) -> list[UndoEntry]:
        """The notebook's undo records, oldest first."""
        with self._guard:
            return list(self._undo.get(self._key(ref), []))

    def kernel_place(self, ref: NotebookRef) -> KernelPlace:
        """A kernel on this machine."""
        return KernelPlace("local")

    def _key(self, ref: NotebookRef) -> str:
        if ref.store != self.kind:
            raise NotebookError(
                ErrorCode.USAGE_ERROR,
                f"{ref} is not a notebook of the memory store.",
                {"path": ref.path, "store": ref.store},
            )
        return ref.path
