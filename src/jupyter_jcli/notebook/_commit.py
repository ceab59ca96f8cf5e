"""The parts of ``Document._commit``, the one write path of a document (mutations, cache and
output writes, undo): what an attempt sees (:class:`Fresh`), what it would write
(:class:`Draft`), and the write itself, with or without an undo snapshot.

A write compares each file with what the attempt read right before replacing it
(``_files.write_all``); a save by another program found then raises :class:`FileChanged` and
the caller starts again from the fresh content, at most ``WRITE_ATTEMPTS`` times, then
``WRITE_CONFLICT`` (:func:`raise_if_last`). What remains: a save landing between that last
comparison and the rename system call (microseconds; a rename cannot compare and swap) is
overwritten.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from jupyter_jcli.errors import NotebookError
from jupyter_jcli.notebook._atomic import FileChanged, check_writable
from jupyter_jcli.notebook._files import FileState, write_all, written_state
from jupyter_jcli.notebook._views import CellView
from jupyter_jcli.notebook._writebase import WriteBase
from jupyter_jcli.notebook.snapshots import PendingSnapshot, Snapshot, SnapshotStore

__all__ = ["Change", "Draft", "Fresh", "raise_if_last", "write_draft", "written"]

T = TypeVar("T")

Change = tuple[Path, bytes, bytes]
"""One file to replace: ``(path, bytes read, bytes to write)``."""


@dataclass(frozen=True)
class Fresh:
    """What one attempt works on, read under the lock.

    Attributes:
        disk: the files as just read (``.ipynb`` first).
        base: the lossless write base of the ``.ipynb`` (``_writebase``).
        names: every cell's name.
        views: every cell's view.
        nbformat_minor: the notebook's ``nbformat_minor``.
        reloaded: an outside edit was found by this attempt or an earlier one.
        render: the bytes of every file holding given cells (and their origins).
    """

    disk: tuple[FileState, ...]
    base: WriteBase
    names: list[str]
    views: tuple[CellView, ...]
    nbformat_minor: int
    reloaded: bool
    render: Callable[[list[dict[str, Any]], Sequence[int | None]], list[bytes]]

    def changes(self, outputs: Sequence[bytes]) -> list[Change]:
        """The files whose bytes ``outputs`` change."""
        return [
            (state.path, state.raw, data)
            for state, data in zip(self.disk, outputs, strict=True)
            if state.raw != data
        ]


@dataclass(frozen=True)
class Draft(Generic[T]):
    """What one attempt would write, computed (and checked) before anything is written.

    Attributes:
        value: what the operation returns once written.
        changed: the files to replace, in write order.
        outputs: every file's new bytes, adopted as the document's files after the write;
            ``None``: the document re-reads the files instead.
        record: the cell-level record of a mutation (``_revert.record_mutation``): the
            write goes through a pending undo snapshot that becomes current once it succeeded.
        pops: an undo snapshot to discard once the write succeeded.
    """

    value: T
    changed: list[Change]
    outputs: list[bytes] | None = None
    record: dict[str, Any] | None = None
    pops: Snapshot | None = None


def write_draft(
    store: SnapshotStore, draft: Draft[Any], operation: str | None
) -> dict[Path, os.stat_result]:
    """Write ``draft`` (through a snapshot of ``operation`` when it has a record), then pop
    its ``pops``. Returns each written file's ``fstat``.

    Raises:
        FileChanged: ``WRITE_CONFLICT``: another program saved a file meanwhile; nothing
            stays written.
        NotebookError: ``NOTEBOOK_WRITE_FAILED`` (a read-only file is refused before the
            snapshot) and the snapshot's codes.
    """
    if not draft.changed:
        stats: dict[Path, os.stat_result] = {}
    elif operation is not None and draft.record is not None:
        for path, _before, _after in draft.changed:
            check_writable(path)  # refuse a read-only file before snapshotting
        pending = store.prepare(operation, draft.changed, draft.record)
        stats = _write_recorded(store, pending, draft.changed)
    else:
        stats = write_all(draft.changed)
    if draft.pops is not None:
        store.discard(draft.pops)
    return stats


def _write_recorded(
    store: SnapshotStore, pending: PendingSnapshot, changed: list[Change]
) -> dict[Path, os.stat_result]:
    """Write a mutation's files, then make its snapshot current; if either fails, nothing
    stays changed (the files are put back, the pending snapshot is discarded)."""
    try:
        stats = write_all(changed)
    except NotebookError:
        store.discard(pending)
        raise
    try:
        store.commit(pending)
    except NotebookError:
        write_all([(path, after, before) for path, before, after in changed])
        raise
    return stats


def written(
    disk: tuple[FileState, ...], outputs: list[bytes], stats: Mapping[Path, os.stat_result]
) -> tuple[FileState, ...]:
    """The fingerprints of ``disk``'s files once ``outputs`` were written."""
    return tuple(
        written_state(state, data, stats.get(state.path))
        for state, data in zip(disk, outputs, strict=True)
    )


def raise_if_last(err: FileChanged, attempt: int, attempts: int) -> None:
    """Re-raise a write's ``WRITE_CONFLICT`` after the last attempt (details ``attempts``)."""
    if attempt < attempts - 1:
        return
    raise FileChanged(
        err.code,
        f"{err.details.get('path')} kept being saved by another program while jupyter-jcli "
        f"wrote it ({attempts} attempts); nothing was written. Retry when it is quiet.",
        {**err.details, "attempts": attempts},
    ) from err
