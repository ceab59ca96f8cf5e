"""The notebook as a safe document: named cells, revs, optimistic locking, atomic writes.

``Document.load(path)`` reads an ``.ipynb`` (or a ``.py`` file paired with one) and never
writes. Each cell gets a name (:mod:`~jupyter_jcli.notebook.names`) and a rev
(:mod:`~jupyter_jcli.notebook.revs`). A mutation names its target cell and carries the rev the
caller read; the document then, under the notebook's write lock:

1. re-reads the file(s) and compares them with what was loaded (size, ``mtime_ns`` and
   sha256; the content hash decides, so a touch without change is not an outside edit). If
   they changed, it reloads and applies the mutation on top of the fresh content only if the
   target cell (and the anchor for an add) still has the expected rev, else refuses with
   ``REV_MISMATCH`` carrying the cell's current state: someone else's work is never lost;
2. validates and applies the edit on copies (nothing is partly applied);
3. stores every cell's name in its metadata, bound to the cell's nbformat id (a notebook is
   named in the file on its first mutation or, for a plain ``.ipynb``, the first write of a
   run's outputs; never on a read);
4. snapshots the files (:mod:`~jupyter_jcli.notebook.snapshots`) with a cell-level record of
   the change (``_revert``) and writes them atomically, each compared with what step 1 read
   right before its rename: a save by another program that landed meanwhile discards the
   attempt and starts again at step 1 (``reloaded``), at most :data:`WRITE_ATTEMPTS` times,
   then ``WRITE_CONFLICT`` (what remains of the window is said in ``_atomic``); the snapshot
   becomes current only once the write succeeded.

Every file is opened through ``notebook._open`` under the document's confinement (the MCP
servers' roots: ``PATH_NOT_ALLOWED`` outside them, for both halves of a pair too).

Serialisation keeps the nbformat version, the notebook metadata and every field jupyter-jcli
does not own, in the file's own JSON style (see ``_jsonstyle``): saving an unchanged Jupyter
notebook gives back the same bytes and an edit changes only the lines of the cells it touches.
Writes are in proportion to the change: the file's style and cell layout are found once per
version of the file (kept with it, through the warm cache in a long-lived process), an edit
serialises only the cells it changed and copies the bytes of the others (``_layout``), and
the document adopts the written content without parsing the whole file again.
Values are kept exactly: a write works on a lossless parse whenever the read path's values do
not reproduce the file (integers beyond 64 bits, number literals a double cannot hold or
Python spells differently; see ``_writebase`` and ``_exact``). An nbformat 3 notebook
(upgraded in memory by ``notebook.io``) is written back as nbformat 3, with its notebook
metadata (``name``) and its untouched cells as stored (``_v3write``); Jupyter would upgrade it.

Everything a mutation does is computed before anything touches disk: the edited cells, their
names, the bytes of every file and the result; a caller's ``check`` (:data:`MutationCheck`)
then sees the result and the cells, and only then are the snapshot and the files written. A
refused mutation (by a check, a rev, a name, a read-only file) writes no file, snapshot or
temporary file.

Which fields a mutation owns is said in ``_edits``.

Caches (:meth:`Document.set_cell_metadata`) and execution results
(:meth:`Document.write_outputs`) are written under the same lock and outside-edit check, but
without an undo snapshot: they are not user mutations. Undo (:meth:`Document.undo`, see
``_undo``) reverts only what the newest mutation changed. Mutations, these writes and undo
all go through one path, ``Document._commit`` (its parts in ``_commit``; the pure merges in
``_edits``, ``_outputs`` and ``_undo``).

For a ``.py`` file paired with an ``.ipynb`` (jupytext rules, see ``_pairs``) the model is
jupytext's combination of both, and a mutation rewrites both: ``.ipynb`` first, outputs kept,
then the ``.py``. Snapshots hold both, so undo restores both. An ``.ipynb`` whose
``metadata.jupytext.formats`` pairs it with an existing text file is the same pair seen from
the notebook: loading it reads both and a mutation writes both, so the text file never keeps
older inputs that jupytext would later restore. A pair whose two sides hold different inputs
(one was edited by a tool that ignores the pairing) is refused with ``PAIR_OUT_OF_SYNC``,
whichever side is newer, rather than written on one side's inputs over the other's change;
unless the ``.ipynb`` is what jupyter-jcli wrote when the two last agreed (recorded at every
write of a pair: ``SnapshotStore.record_agreed_pair``), so that only the text file changed
since and a write takes its inputs (``_pairs``). Reads say it (:attr:`pair_out_of_sync`).

A file without a write bit for its owner (``chmod 444``) is never replaced
(``NOTEBOOK_WRITE_FAILED``, details ``mode``), checked before the snapshot: replacing a file
only needs the folder's permission, and root passes ``os.access``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from jupyter_jcli.errors import UsageError
from jupyter_jcli.notebook._atomic import FileChanged
from jupyter_jcli.notebook._files import FileState
from jupyter_jcli.notebook._loaded import LoadedNotebook
from jupyter_jcli.notebook._open import confined
from jupyter_jcli.notebook._views import CellView, MutationCheck, MutationResult, cell_view

if TYPE_CHECKING:  # the write machinery loads at the first write (a read never needs it)
    from jupyter_jcli.notebook._commit import Draft, Fresh
    from jupyter_jcli.notebook._edits import Position, Working
    from jupyter_jcli.notebook._outputs import CellOutputs, OutputUpdate
    from jupyter_jcli.notebook._writebase import WriteBase
    from jupyter_jcli.notebook.snapshots import UndoResult

__all__ = [
    "WRITE_ATTEMPTS",
    "CellOutputs",
    "CellView",
    "Document",
    "FileState",
    "MutationCheck",
    "MutationResult",
    "OutputUpdate",
]

T = TypeVar("T")


def __getattr__(name: str) -> Any:
    """``CellOutputs`` and ``OutputUpdate``, from the output merge rules, loaded on first
    access (PEP 562): a read never needs them."""
    if name in ("CellOutputs", "OutputUpdate"):
        from jupyter_jcli.notebook import _outputs

        return getattr(_outputs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


WRITE_ATTEMPTS = 4
"""How many times a write merges again when another program saves the file meanwhile."""


class Document(LoadedNotebook):
    """A notebook loaded for safe editing. Create with :meth:`load` (the reading side is
    ``_loaded.LoadedNotebook``).

    The document always reflects the content its last load, reload or mutation saw; a
    mutation that finds an outside edit adopts the fresh content even when it then refuses.
    """

    # ------------------------------------------------------------------ mutations

    def add_cell(
        self,
        source: str,
        *,
        cell_type: str = "code",
        name: str | None = None,
        before: str | None = None,
        after: str | None = None,
        position: Position | None = None,
        expected_rev: str | None = None,
        check: MutationCheck | None = None,
    ) -> MutationResult:
        """Insert a new cell before or after a named anchor, or at the start or end.

        Args:
            source: the new cell's source.
            cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
            name: its name; default derived from the source (``names`` rules), made unique.
            before: name of the anchor cell to insert before.
            after: name of the anchor cell to insert after.
            position: ``"start"`` or ``"end"`` (the default when no anchor is given).
            expected_rev: with an anchor, the anchor's rev (required); with a position,
                ``None`` (insert whatever the notebook holds: nothing can be overwritten) or
                the notebook's ``structure_rev`` (refuse if anything changed).
            check: a :data:`MutationCheck` run before anything is written (every mutation
                takes one).

        Raises:
            NotebookError: ``INVALID_SOURCE`` (a lone surrogate; checked before anything is
                read or written), ``CELL_NOT_FOUND`` (anchor), ``REV_MISMATCH``,
                ``NAME_CONFLICT``, ``INVALID_NAME``, ``INVALID_CELL_TYPE``,
                ``NOTEBOOK_WRITE_FAILED`` and the read codes of :meth:`load`.
            UsageError: several of before/after/position, or an anchor without expected_rev.
        """
        from jupyter_jcli.notebook import _edits  # the edit rules load at the first edit

        _edits.check_source(source)

        edit = functools.partial(
            _edits.add_cell,
            source=source,
            cell_type=cell_type,
            name=name,
            before=before,
            after=after,
            position=position,
            expected_rev=expected_rev,
        )
        return self._mutate("add_cell", edit, check=check)

    def update_cell(
        self,
        name: str,
        *,
        expected_rev: str,
        source: str | None = None,
        cell_type: str | None = None,
        new_name: str | None = None,
        check: MutationCheck | None = None,
    ) -> MutationResult:
        """Change a cell's source, type and/or name (``None`` keeps that part).

        Raises:
            NotebookError: ``INVALID_SOURCE`` (a lone surrogate; checked before anything is
                read or written), ``CELL_NOT_FOUND``, ``REV_MISMATCH``, ``NAME_CONFLICT``,
                ``INVALID_NAME``, ``INVALID_CELL_TYPE``, ``NOTEBOOK_WRITE_FAILED``.
        """
        from jupyter_jcli.notebook import _edits  # the edit rules load at the first edit

        if source is not None:
            _edits.check_source(source)

        edit = functools.partial(
            _edits.update_cell,
            name=name,
            expected_rev=expected_rev,
            source=source,
            cell_type=cell_type,
            new_name=new_name,
        )
        return self._mutate("update_cell", edit, check=check)

    def remove_cell(
        self, name: str, *, expected_rev: str, check: MutationCheck | None = None
    ) -> MutationResult:
        """Delete a cell.

        Raises:
            NotebookError: ``CELL_NOT_FOUND``, ``REV_MISMATCH``, ``NOTEBOOK_WRITE_FAILED``.
        """
        from jupyter_jcli.notebook import _edits  # the edit rules load at the first edit

        removed: list[CellView] = []

        def edit(work: Working) -> int:
            index = work.index_of(name)
            removed.append(cell_view(work.cells[index], work.names[index], index))
            return _edits.remove_cell(work, name, expected_rev=expected_rev)

        def checked(result: MutationResult, cells: tuple[CellView, ...]) -> None:
            if check is not None:
                check(_with_removed(result, removed[-1]), cells)

        result = self._mutate("remove_cell", edit, removes=True, check=checked)
        return _with_removed(result, removed[-1])

    def clear_outputs(
        self, names: Sequence[str], *, check: MutationCheck | None = None
    ) -> MutationResult:
        """Empty the saved ``outputs`` and ``execution_count`` of the named code cells: a
        mutation (undo snapshot; ``undo`` puts them back). ``changed`` names the cells that
        had any; ``cell`` is the first named cell.

        Raises:
            NotebookError: ``CELL_NOT_FOUND``, ``NOTEBOOK_WRITE_FAILED``.
            UsageError: ``USAGE_ERROR`` for no names or a Markdown or raw cell (nothing
                changes).
        """
        from jupyter_jcli.notebook import _edits  # the edit rules load at the first edit

        edit = functools.partial(_edits.clear_outputs, names=list(names))
        return self._mutate("clear_outputs", edit, check=check)

    def move_cell(
        self,
        name: str,
        *,
        expected_rev: str,
        before: str | None = None,
        after: str | None = None,
        position: Position | None = None,
        check: MutationCheck | None = None,
    ) -> MutationResult:
        """Move a cell before or after a named anchor, or to the start or end (default end).

        Args:
            name: the cell to move.
            expected_rev: that cell's rev.
            before: anchor cell name to move before.
            after: anchor cell name to move after.
            position: ``"start"`` or ``"end"``.

        Raises:
            NotebookError: ``CELL_NOT_FOUND`` (cell or anchor), ``REV_MISMATCH``,
                ``NOTEBOOK_WRITE_FAILED``.
            UsageError: several of before/after/position, or the cell as its own anchor.
        """
        from jupyter_jcli.notebook import _edits  # the edit rules load at the first edit

        edit = functools.partial(
            _edits.move_cell,
            name=name,
            expected_rev=expected_rev,
            before=before,
            after=after,
            position=position,
        )
        return self._mutate("move_cell", edit, check=check)

    def set_cell_metadata(self, key: str, values: Mapping[str, tuple[str, Any]]) -> tuple[str, ...]:
        """Store ``metadata.jupyter_mcp.<key>`` on cells: a cache write, not a user mutation.

        Same lock, outside-edit check (reload on a changed file) and atomic write as a
        mutation, but no undo snapshot, no name persisting and no refusal: a cell that no
        longer exists or whose rev is not the one the value was computed for is skipped (the
        value describes content that is gone). Cells whose entry already equals the value are
        not rewritten; nothing is written when no cell changes. Undo keeps the value (it
        reverts only what its mutation changed).

        Args:
            key: the entry under ``metadata.jupyter_mcp`` (not ``"name"``, which mutations own).
            values: cell name -> ``(rev the value was computed for, JSON value)``.

        Returns:
            The names of the cells whose metadata was written, in document order.

        Raises:
            UsageError: ``USAGE_ERROR`` for an empty key or ``"name"``.
            NotebookError: ``NOTEBOOK_WRITE_FAILED`` and the read codes of :meth:`load`.
        """
        from jupyter_jcli.notebook._outputs import merge_metadata

        if not key or key == "name":
            raise UsageError(f"Cannot set metadata.jupyter_mcp.{key or '<empty>'} as a cache.")
        return self._write_cells(lambda views, cells: merge_metadata(views, cells, key, values))

    def write_outputs(
        self, results: Mapping[str, CellOutputs], display_updates: Sequence[OutputUpdate] = ()
    ) -> tuple[str, ...]:
        """Store what executions produced: the outputs and ``execution_count`` of code cells,
        and new MIME bundles for outputs of other cells (``update_display_data``).

        A write of the kernel's results, not a user mutation: the lock, outside-edit check and
        atomic write of :meth:`set_cell_metadata`, no undo snapshot (undo keeps what this
        writes). A cell that no longer exists, is no longer code, or whose rev is not the one
        that ran is skipped: its outputs would describe a source that is gone. A write of a
        plain ``.ipynb`` also stores every cell's name (``_outputs.store_names``), so the
        names the run used stay the cells' own; a pair's ``.py`` is not rewritten for that
        (its names are stored by the first edit).

        Args:
            results: cell name -> what its run produced (the outputs replace the cell's).
            display_updates: new ``data`` and ``metadata`` of ``display_data``/
                ``execute_result`` outputs (other output types and missing indexes are
                skipped), applied after ``results`` (see ``_outputs.merge_outputs``).

        Returns:
            The names of the cells written, in document order.

        Raises:
            NotebookError: ``NOTEBOOK_WRITE_FAILED`` and the read codes of :meth:`load`.
        """
        from jupyter_jcli.notebook._outputs import merge_outputs

        return self._write_cells(
            lambda views, cells: merge_outputs(views, cells, results, display_updates),
            store_names=self._pair is None,
        )

    def undo(self, *, force: bool = False) -> UndoResult:
        """Undo the newest mutation recorded for this notebook and pop its snapshot.

        Under the write lock: if every file still holds exactly what the mutation wrote, the
        saved files are restored as they were (byte for byte). Otherwise the inverse of the
        mutation's cell-level record is applied to the fresh content (``_revert``): the
        sources, types, names, cells added, removed or moved go back, and everything written
        since stays (outputs, execution counts, caches, other cells' and outside edits). Both
        files of a pair are written, ``.ipynb`` first.

        Args:
            force: overwrite the changes made since that touch what the undo restores (the
                result lists them in ``conflicts``).

        Returns:
            What was restored (see :class:`~jupyter_jcli.notebook.snapshots.UndoResult`).

        Raises:
            NotebookError: ``UNDO_EMPTY`` when there is nothing to undo; ``UNDO_CONFLICT``
                (details ``path``, ``operation``, ``conflicts``: ``{"cell", "reason",
                "fields"}`` per change made since that would be overwritten, ``reason`` one
                of ``edited_since``, ``removed_since``, ``moved_since``, ``name_taken``;
                for a snapshot without a cell record, ``expected_sha256`` and
                ``actual_sha256``); ``NOTEBOOK_READ_FAILED`` (snapshot unreadable);
                ``NOTEBOOK_WRITE_FAILED`` (details ``mode`` for a read-only file: nothing
                is restored, the snapshot is kept) and the refusals of a mutation
                (``PAIR_OUT_OF_SYNC``). On any error nothing is written.
        """
        from jupyter_jcli.notebook._undo import undo_draft, undo_empty_error, undone_names
        from jupyter_jcli.notebook.snapshots import SnapshotStore

        store = SnapshotStore(self.notebook_path, base_dir=self._base_dir)
        if store.is_empty():
            raise undo_empty_error(self.notebook_path)
        path = self.notebook_path
        result, touched = self._commit(lambda fresh: undo_draft(fresh, store, path, force=force))
        return undone_names(result, touched, self._names)

    # ------------------------------------------------------------------ internals

    def _commit(self, change: Callable[[Fresh], Draft[T]], *, snapshot: str | None = None) -> T:
        """The one write path. Under the notebook's write lock and the document's
        confinement, at most :data:`WRITE_ATTEMPTS` times: refresh from disk
        (:meth:`_refresh`), let ``change`` compute (and check) everything it would write
        from the fresh content, write it (through a pending undo snapshot of ``snapshot``
        when the draft has a record; each file compared with what was read right before its
        replace), adopt what was written. A save by another program found at the write
        starts again from the fresh content (``reloaded``), then ``WRITE_CONFLICT``."""
        from jupyter_jcli.notebook._commit import (
            Fresh,
            raise_if_last,
            render_files,
            write_draft,
            written,
            written_model,
        )
        from jupyter_jcli.notebook.snapshots import SnapshotStore

        store = SnapshotStore(self.notebook_path, base_dir=self._base_dir)
        reloaded = False
        with confined(self._confine), store.lock():
            for attempt in range(WRITE_ATTEMPTS):
                reloaded = self._refresh() or reloaded
                disk = self._files
                base = self._write_base()
                draft = change(
                    Fresh(
                        disk=disk,
                        base=base,
                        names=list(self._names),
                        views=self._views,
                        nbformat_minor=int(self._notebook.get("nbformat_minor", 0)),
                        reloaded=reloaded,
                        render=functools.partial(render_files, base, self._notebook, self._pair),
                        structure_rev=self.structure_rev,
                    )
                )
                model, next_base = (
                    (None, None)
                    if draft.outputs is None
                    else written_model(self._notebook, disk, draft.outputs, base)
                )
                try:
                    stats = write_draft(store, draft, snapshot)
                except FileChanged as err:
                    raise_if_last(err, attempt, WRITE_ATTEMPTS)
                    continue
                if draft.outputs is None or model is None:
                    self._reload(written=True)
                else:
                    # the draft's views hold for the parsed-back model on the spliced path
                    views = draft.views if next_base is not None else None
                    self._adopt(model, written(disk, draft.outputs, stats), views=views)
                    if next_base is not None:
                        self._state.derived["base"] = (self._files[0].sha256, next_base)
                    self._seen(written=True)
                if draft.changed and self._pair is not None and _agree_after_write(self._pair):
                    store.record_agreed_pair(self._files[0].sha256)  # both sides agree now
                return draft.value
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _write_base(self) -> WriteBase:
        """The write base of the content as last read or written (``_writebase``), computed
        once per version of the file and kept with it (shared through the warm cache)."""
        from jupyter_jcli.notebook._writebase import write_base

        sha256 = self._files[0].sha256
        memo = self._state.derived.get("base")
        if memo is not None and memo[0] == sha256:
            base: WriteBase = memo[1]
            return base
        disk = self._files[0]
        base = write_base(disk.raw, disk.path, self._notebook, paired=self._pair is not None)
        self._state.derived["base"] = (sha256, base)
        return base

    def _write_cells(
        self,
        change: Callable[[tuple[CellView, ...], list[dict[str, Any]]], list[str]],
        *,
        store_names: bool = False,
    ) -> tuple[str, ...]:
        """A write without undo snapshot: ``change`` edits the fresh cells in place and
        returns the names it changed (nothing is written when it changed none);
        ``store_names``: a write also stores every cell's name (``_outputs.store_names``)."""
        from jupyter_jcli.notebook._commit import Draft

        def draft(fresh: Fresh) -> Draft[tuple[str, ...]]:
            cells = list(fresh.base.cells)
            names = tuple(change(fresh.views, cells))
            if not names:
                return Draft(names, [], [state.raw for state in fresh.disk])
            # outputs and caches change no name, type, source or id: the views stay (but
            # for ``name_stored`` when the names are stored)
            views = fresh.views
            if store_names:
                from jupyter_jcli.notebook._outputs import store_names as store

                views = store(views, cells)
            outputs = fresh.render(cells, range(len(cells)))
            return Draft(names, fresh.changes(outputs), outputs, views=views)

        return self._commit(draft)

    def _mutate(
        self,
        operation: str,
        edit: Callable[[Working], int],
        *,
        removes: bool = False,
        check: MutationCheck | None = None,
    ) -> MutationResult:
        """Apply ``edit`` to the fresh content and write it with an undo snapshot: the whole
        change is computed and checked (``check``) before the snapshot and the write, so a
        refused mutation leaves no trace (``_commit.mutation_draft``)."""
        from jupyter_jcli.notebook._commit import mutation_draft

        def draft(fresh: Fresh) -> Draft[MutationResult]:
            return mutation_draft(fresh, self._path, operation, edit, removes=removes, check=check)

        return self._commit(draft, snapshot=operation)


def _with_removed(result: MutationResult, removed: CellView) -> MutationResult:
    return replace(result, removed=removed)


def _agree_after_write(pair: Any) -> bool:
    """Whether a pair's two files agree once a write went through: they agreed before it, or
    the write took the text file's inputs (only the text file had changed since the last
    write of ours: ``writes: "take_text"``), so the notebook now holds them too."""
    facts = pair.out_of_sync
    return facts is None or facts.get("writes") == "take_text"
