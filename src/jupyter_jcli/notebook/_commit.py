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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from jupyter_jcli.errors import NotebookError
from jupyter_jcli.notebook import _edits
from jupyter_jcli.notebook._atomic import FileChanged
from jupyter_jcli.notebook._edits import Working
from jupyter_jcli.notebook._exact import plain_numbers
from jupyter_jcli.notebook._files import FileState, write_all, written_state
from jupyter_jcli.notebook._layout import spliced_cells
from jupyter_jcli.notebook._pairs import PairContext, render_py
from jupyter_jcli.notebook._revert import record_mutation
from jupyter_jcli.notebook._views import CellView, MutationCheck, MutationResult, cell_views
from jupyter_jcli.notebook._writebase import WriteBase, render_ipynb
from jupyter_jcli.notebook.io import parse_notebook
from jupyter_jcli.notebook.revs import structure_rev
from jupyter_jcli.notebook.snapshots import PendingSnapshot, Snapshot, SnapshotStore

__all__ = [
    "Change",
    "Draft",
    "Fresh",
    "mutated",
    "mutation_draft",
    "raise_if_last",
    "render_files",
    "write_draft",
    "written",
    "written_model",
]

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
        structure_rev: the structure rev of ``views`` (kept with the content's version).
    """

    disk: tuple[FileState, ...]
    base: WriteBase
    names: list[str]
    views: tuple[CellView, ...]
    nbformat_minor: int
    reloaded: bool
    render: Callable[[list[dict[str, Any]], Sequence[int | None]], list[bytes]]
    structure_rev: str

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
        views: the views of the cells as written (their names, revs, ids), when known: the
            document adopts them instead of naming and hashing every cell again.
    """

    value: T
    changed: list[Change]
    outputs: list[bytes] | None = None
    record: dict[str, Any] | None = None
    pops: Snapshot | None = None
    views: tuple[CellView, ...] | None = None


def mutation_draft(
    fresh: Fresh,
    path: Path,
    operation: str,
    edit: Callable[[Working], int],
    *,
    removes: bool,
    check: MutationCheck | None,
) -> Draft[MutationResult]:
    """A mutation of the fresh content by ``edit`` (returns the target cell's index): its
    cells, names, bytes and result, checked by ``check`` before anything is written."""
    work, views, result = mutated(
        fresh.base.cells,
        fresh.names,
        fresh.views,
        path=path,
        operation=operation,
        edit=edit,
        removes=removes,
        nbformat_minor=fresh.nbformat_minor,
        previous=fresh.structure_rev,
        reloaded=fresh.reloaded,
    )
    outputs = fresh.render(work.cells, work.origins())
    changed = fresh.changes(outputs)
    result = replace(result, written=tuple(written_path for written_path, _b, _a in changed))
    if check is not None:
        check(result, views)
    record = None
    if changed:
        record = record_mutation(fresh.base.cells, fresh.names, work.cells, work.names)
    return Draft(result, changed, outputs, record=record, views=views)


def mutated(
    cells: Sequence[dict[str, Any]],
    names: Sequence[str],
    views: tuple[CellView, ...],
    *,
    path: Path,
    operation: str,
    edit: Callable[[Working], int],
    removes: bool,
    nbformat_minor: int,
    previous: str,
    reloaded: bool,
) -> tuple[Working, tuple[CellView, ...], MutationResult]:
    """The cells, their views and the result (``written`` still empty) of ``edit`` applied
    to ``cells`` (named ``names``, seen as ``views``; ``previous``: their structure rev),
    with every name stored (``_edits.persist_names``). Pure: shared by every store."""
    work = Working(path=path, cells=list(cells), names=list(names), nbformat_minor=nbformat_minor)
    index = edit(work)
    _edits.persist_names(work, cells, views)
    new_views = cell_views(work.cells, work.names, cells, views)
    result = MutationResult(
        operation=operation,
        path=path,
        cell=None if removes else new_views[index],
        removed=None,
        structure_rev=structure_rev((view.name, view.rev) for view in new_views),
        previous_structure_rev=previous,
        changed=tuple(dict.fromkeys(work.changed)),
        reloaded=reloaded,
        written=(),
    )
    return work, new_views, result


def render_files(
    base: WriteBase,
    notebook: dict[str, Any],
    pair: PairContext | None,
    cells: list[dict[str, Any]],
    origins: Sequence[int | None],
) -> list[bytes]:
    """The bytes of every file (``.ipynb`` first, then the paired text file) holding
    ``cells`` (``origins``: each cell's index in ``base``, ``None`` for a new cell)."""
    rendered = [render_ipynb(base, cells, origins)]
    if pair is not None:
        combined = dict(notebook)
        combined["cells"] = plain_numbers(cells)
        rendered.append(render_py(combined, pair))
    return rendered


def written_model(
    notebook: dict[str, Any], disk: tuple[FileState, ...], outputs: list[bytes], base: WriteBase
) -> tuple[dict[str, Any], WriteBase | None]:
    """The model of the files about to be written, computed before writing, as a fresh load
    would read them: with the base's layout, the cells whose bytes did not change are the
    model's own and only the others are parsed (``_layout.spliced_cells``); else the new
    bytes are parsed whole. Also returns the write base of the new bytes when it follows
    from the old one (the read path's values reproduce them: the next write needs no
    detection), else ``None``."""
    if outputs[0] == disk[0].raw:
        return notebook, base
    model = dict(notebook)
    if base.layout is not None:
        found = spliced_cells(base.layout, notebook["cells"], outputs[0], base.style, disk[0].path)
        if found is not None:
            cells, layout = found
            model["cells"] = cells
            if not base.plain:
                return model, None
            return model, WriteBase(model, list(cells), base.style, None, [], layout, plain=True)
    model["cells"] = parse_notebook(outputs[0], path=disk[0].path)["cells"]
    return model, None


def write_draft(
    store: SnapshotStore, draft: Draft[Any], operation: str | None
) -> dict[Path, os.stat_result]:
    """Write ``draft``, then pop its ``pops``; with a record (and ``operation``), through a
    pending snapshot prepared once every file passed the write's checks (compared with what
    was read, not read-only) and made current once the files are written: if either fails,
    nothing stays changed (files put back, pending snapshot discarded). Returns each written
    file's ``fstat``.

    Raises:
        FileChanged: ``WRITE_CONFLICT``: another program saved a file meanwhile; nothing
            stays written.
        NotebookError: ``NOTEBOOK_WRITE_FAILED`` (a read-only file is refused before the
            snapshot) and the snapshot's codes.
    """
    stats: dict[Path, os.stat_result] = {}
    if draft.changed and operation is not None and draft.record is not None:
        stats = _write_recorded(store, operation, draft.changed, draft.record)
    elif draft.changed:
        stats = write_all(draft.changed)
    if draft.pops is not None:
        store.discard(draft.pops)
    return stats


def _write_recorded(
    store: SnapshotStore, operation: str, changed: list[Change], record: dict[str, Any]
) -> dict[Path, os.stat_result]:
    pending: list[PendingSnapshot] = []

    def snapshot() -> None:
        pending.append(store.prepare(operation, changed, record))

    try:
        stats = write_all(changed, checked=snapshot)
    except NotebookError:
        if pending:
            store.discard(pending[0])
        raise
    try:
        store.commit(pending[0])
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
