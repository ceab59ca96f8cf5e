"""The notebook as a safe document: named cells, revs, optimistic locking, atomic writes.

``Document.load(path)`` reads an ``.ipynb`` (or a py:percent file paired with one) and never
writes. Each cell gets a name (:mod:`~jupyter_jcli.notebook.names`) and a rev
(:mod:`~jupyter_jcli.notebook.revs`). A mutation names its target cell and carries the rev the
caller read; the document then, under the notebook's write lock:

1. re-reads the file(s) and compares them with what was loaded (size, ``mtime_ns`` and
   sha256; the content hash decides, so a touch without change is not an outside edit). If
   they changed, it reloads and applies the mutation on top of the fresh content only if the
   target cell (and the anchor for an add) still has the expected rev, else refuses with
   ``REV_MISMATCH`` carrying the cell's current state: someone else's work is never lost;
2. validates and applies the edit on copies (nothing is partly applied);
3. stores every cell's name in its metadata (a notebook is named in the file on its first
   mutation, never on a read);
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

Owned fields: a cell's ``source``, ``cell_type``, ``metadata.jupyter_mcp.name``, and for new
cells ``id`` (only when ``nbformat_minor >= 5``), ``execution_count`` (``None``) and
``outputs`` (``[]``). Changing a cell's source keeps its outputs and execution count: they
describe the previous source and are stale until the cell runs again (freshness is the kernel
layer's job). Changing the type drops what nbformat forbids for the new type (outputs and
execution count for Markdown/raw, attachments for code).

Caches (such as ``metadata.jupyter_mcp.summary``) are written by :meth:`Document.set_cell_metadata`
under the same lock and outside-edit check, but without an undo snapshot: a cache write is not
a user mutation. Execution results (outputs, ``execution_count``, display updates) are written
the same way by :meth:`Document.write_outputs`.

Undo (:meth:`Document.undo`) reverts what the newest mutation changed and keeps everything
written since (outputs, execution counts, caches, other cells' edits, outside edits), or
refuses with ``UNDO_CONFLICT`` naming the changes it would overwrite. An undo is an edit like
any other: a cell whose source goes back keeps the outputs its last run wrote, and is fresh
again only if its restored rev is the one that last ran on the live kernel (statuses are
computed from revs, so a cell whose undone source ran since is ``stale``, never ``fresh``).

For a py:percent file paired with an ``.ipynb`` (jupytext rules, see ``_pairs``) the model is
jupytext's combination of both, and a mutation rewrites both: ``.ipynb`` first, outputs kept,
then the ``.py``. Snapshots hold both, so undo restores both. An ``.ipynb`` whose
``metadata.jupytext.formats`` pairs it with an existing text file is the same pair seen from
the notebook: loading it reads both and a mutation writes both, so the text file never keeps
older inputs that jupytext would later restore. A pair whose ``.ipynb`` is newer than its text
file with different inputs (edited by a tool that ignores the pairing) is refused with
``PAIR_OUT_OF_SYNC`` (jupytext's own rule) rather than edited on the text file's older inputs.

A file without a write bit for its owner (``chmod 444``) is never replaced
(``NOTEBOOK_WRITE_FAILED``, details ``mode``), checked before the snapshot: replacing a file
only needs the folder's permission, and root passes ``os.access``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, NotebookError, UsageError
from jupyter_jcli.notebook import _edits
from jupyter_jcli.notebook._atomic import FileChanged, check_writable
from jupyter_jcli.notebook._edits import Position, Working
from jupyter_jcli.notebook._exact import plain_numbers
from jupyter_jcli.notebook._files import FileState, read_file, read_target, write_all, written_state
from jupyter_jcli.notebook._open import Confinement, chosen, confined, read_regular
from jupyter_jcli.notebook._pairs import PairContext, render_py
from jupyter_jcli.notebook._revert import (
    record_mutation,
    revert,
    undo_conflict_error,
    undo_empty_error,
)
from jupyter_jcli.notebook._writebase import WriteBase, render_ipynb, write_base
from jupyter_jcli.notebook.io import cell_source, parse_notebook
from jupyter_jcli.notebook.names import METADATA_KEY, assign_names, stored_name
from jupyter_jcli.notebook.revs import cell_rev, structure_rev
from jupyter_jcli.notebook.snapshots import PendingSnapshot, SnapshotStore, UndoResult

__all__ = ["WRITE_ATTEMPTS", "CellView", "Document", "FileState", "MutationCheck", "MutationResult"]

WRITE_ATTEMPTS = 4
"""How many times a write merges again when another program saves the file meanwhile."""


@dataclass(frozen=True)
class CellView:
    """One cell as a caller sees it.

    Attributes:
        index: physical zero-based position.
        name: unique kebab-case name.
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        rev: content hash of type and source (12 hex digits).
        source: the joined source text.
        cell_id: the nbformat cell ``id`` (nbformat >= 4.5), else ``None``.
        name_stored: whether the name is already stored in the file (else computed).
    """

    index: int
    name: str
    cell_type: str
    rev: str
    source: str
    cell_id: str | None
    name_stored: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "index": self.index,
            "name": self.name,
            "cell_type": self.cell_type,
            "rev": self.rev,
            "source": self.source,
            "cell_id": self.cell_id,
            "name_stored": self.name_stored,
        }


@dataclass(frozen=True)
class MutationResult:
    """What a mutation did.

    Attributes:
        operation: ``"add_cell"``, ``"update_cell"``, ``"remove_cell"`` or ``"move_cell"``.
        path: the target file (``.ipynb`` or ``.py``).
        cell: the target cell after the mutation (``None`` after a removal).
        removed: the removed cell as it was (removals only).
        structure_rev: the notebook's structure rev after the mutation.
        previous_structure_rev: the structure rev of the content the mutation applied to.
        changed: names of the cells added, edited, renamed (old and new name), moved or
            removed.
        reloaded: an outside edit was found and the mutation applied on top of it.
        written: the files rewritten (empty if the bytes did not change).
    """

    operation: str
    path: Path
    cell: CellView | None
    removed: CellView | None
    structure_rev: str
    previous_structure_rev: str
    changed: tuple[str, ...]
    reloaded: bool
    written: tuple[Path, ...]


MutationCheck = Callable[[MutationResult, tuple[CellView, ...]], None]
"""A caller's validation of a mutation before anything is written: called under the lock
with the result the mutation will return and every cell as it will be; whatever it raises
refuses the mutation, with no file, snapshot or temporary file written."""


class Document:
    """A notebook loaded for safe editing. Create with :meth:`load`.

    The document always reflects the content its last load, reload or mutation saw; a
    mutation that finds an outside edit adopts the fresh content even when it then refuses.
    """

    def __init__(
        self,
        path: Path,
        notebook: dict[str, Any],
        files: tuple[FileState, ...],
        pair: PairContext | None,
        base_dir: Path | None,
        *,
        refusal: NotebookError | None = None,
        confine: Confinement | None = None,
    ) -> None:
        self._path = path
        self._confine = chosen(confine)
        self._pair = pair
        self._refusal = refusal
        self._base_dir = base_dir
        self._adopt(notebook, files)

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        *,
        cache_dir: Path | None = None,
        confine: Confinement | None = None,
    ) -> Document:
        """Load a notebook (``.ipynb``) or a py:percent file paired with one. Writes nothing.

        Args:
            path: the ``.ipynb`` or ``.py`` file.
            cache_dir: snapshot cache base folder (default: ``snapshots.cache_dir()``).
            confine: the roots every file of the document (both halves of a pair) must lie
                in, checked where each file is opened, for this load and every later read,
                write and undo snapshot of the document (``notebook._open``); default the
                active confinement.

        Raises:
            NotebookError: ``FILE_NOT_FOUND``, ``FILE_TYPE_UNSUPPORTED`` (another suffix, or a
                ``.py`` not in the percent format), ``NOTEBOOK_READ_FAILED``,
                ``NOTEBOOK_PAIR_NOT_FOUND`` (a ``.py`` without paired notebook),
                ``PATH_NOT_ALLOWED`` (outside ``confine``). A pair that may be read but not
                edited loads; its mutations raise ``PAIR_OUT_OF_SYNC`` or the paired file's
                ``PATH_NOT_ALLOWED`` (see ``_files.read_target``).
        """
        target = Path(os.path.abspath(path))
        confinement = chosen(confine)
        notebook, files, pair, refusal = read_target(target, confine=confinement)
        return cls(target, notebook, files, pair, cache_dir, refusal=refusal, confine=confinement)

    # ------------------------------------------------------------------ reading

    @property
    def path(self) -> Path:
        """The file the document was loaded from (absolute)."""
        return self._path

    @property
    def notebook_path(self) -> Path:
        """The ``.ipynb`` holding the cells and outputs (the pair's notebook for a ``.py``)."""
        return self._files[0].path

    @property
    def paired_py(self) -> Path | None:
        """The text file edited alongside (a py:percent file, or the text file an ``.ipynb``
        is paired with by its ``jupytext.formats``), or ``None``."""
        return self._pair.py_path if self._pair is not None else None

    @property
    def files(self) -> tuple[FileState, ...]:
        """The files as last read or written (``.ipynb`` first)."""
        return self._files

    @property
    def cells(self) -> tuple[CellView, ...]:
        """Every cell, in document order."""
        return self._views

    @property
    def structure_rev(self) -> str:
        """Hash of the ordered ``(name, rev)`` pairs (see ``revs.structure_rev``)."""
        return structure_rev((view.name, view.rev) for view in self._views)

    def cell(self, name: str) -> CellView:
        """The cell called ``name``.

        Raises:
            NotebookError: ``CELL_NOT_FOUND``.
        """
        for view in self._views:
            if view.name == name:
                return view
        raise NotebookError(
            ErrorCode.CELL_NOT_FOUND,
            f"{self._path} has no cell named {name!r}.",
            {"path": str(self._path), "name": name, "cell_count": len(self._views)},
        )

    @property
    def metadata(self) -> dict[str, Any]:
        """A deep copy of the notebook-level metadata (``kernelspec``, ``language_info``, ...)."""
        metadata = self._notebook.get("metadata")
        return copy.deepcopy(metadata) if isinstance(metadata, dict) else {}

    def notebook_dict(self) -> dict[str, Any]:
        """A deep copy of the notebook model (nbformat 4 dict)."""
        import copy

        return copy.deepcopy(self._notebook)

    def reload(self) -> None:
        """Re-read the file(s) from disk."""
        notebook, files, pair, refusal = read_target(self._path, confine=self._confine)
        self._pair = pair
        self._refusal = refusal
        self._adopt(notebook, files)

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
        _edits.check_source(source)

        def edit(work: Working) -> int:
            return _edits.add_cell(
                work,
                source,
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
        if source is not None:
            _edits.check_source(source)

        def edit(work: Working) -> int:
            return _edits.update_cell(
                work,
                name,
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
        removed: list[CellView] = []

        def edit(work: Working) -> int:
            index = work.index_of(name)
            removed.append(_view(work.cells[index], work.names[index], index))
            return _edits.remove_cell(work, name, expected_rev=expected_rev)

        def checked(result: MutationResult, cells: tuple[CellView, ...]) -> None:
            if check is not None:
                check(_with_removed(result, removed[-1]), cells)

        result = self._mutate("remove_cell", edit, removes=True, check=checked)
        return _with_removed(result, removed[-1])

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

        def edit(work: Working) -> int:
            return _edits.move_cell(
                work, name, expected_rev=expected_rev, before=before, after=after, position=position
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
        if not key or key == "name":
            raise UsageError(f"Cannot set metadata.jupyter_mcp.{key or '<empty>'} as a cache.")

        def change(views: tuple[CellView, ...], cells: list[dict[str, Any]]) -> list[str]:
            written: list[str] = []
            for view in views:
                rev, value = values.get(view.name, ("", None))
                if rev != view.rev or _metadata_entry(cells[view.index], key) == value:
                    continue
                cells[view.index] = _with_metadata_entry(cells[view.index], key, value)
                written.append(view.name)
            return written

        return self._write_without_snapshot(change)

    def write_outputs(
        self,
        results: Mapping[str, tuple[str, list[dict[str, Any]], int | None]],
        display_updates: Sequence[tuple[str, int, dict[str, Any], dict[str, Any]]] = (),
    ) -> tuple[str, ...]:
        """Store what executions produced: the outputs and ``execution_count`` of code cells,
        and new MIME bundles for outputs of other cells (``update_display_data``).

        A write of the kernel's results, not a user mutation: the lock, outside-edit check and
        atomic write of :meth:`set_cell_metadata`, no undo snapshot (undo keeps what this
        writes). A cell that no longer exists, is no longer code, or whose rev is not the one
        that ran is skipped: its outputs would describe a source that is gone.

        Args:
            results: cell name -> ``(rev that ran, nbformat v4 outputs, execution_count)``;
                the outputs replace the cell's outputs.
            display_updates: ``(cell name, output index, data, metadata)``: the new ``data``
                and ``metadata`` of that ``display_data``/``execute_result`` output (other
                output types and missing indexes are skipped), applied after ``results``.

        Returns:
            The names of the cells written, in document order.

        Raises:
            NotebookError: ``NOTEBOOK_WRITE_FAILED`` and the read codes of :meth:`load`.
        """

        def change(views: tuple[CellView, ...], cells: list[dict[str, Any]]) -> list[str]:
            written: set[str] = set()
            by_name = {view.name: view for view in views}
            for name, (rev, outputs, count) in results.items():
                view = by_name.get(name)
                if view is None or view.cell_type != "code" or view.rev != rev:
                    continue
                cell = dict(cells[view.index])
                cell["outputs"] = copy.deepcopy(outputs)
                cell["execution_count"] = count
                cells[view.index] = cell
                written.add(name)
            for name, output_index, data, metadata in display_updates:
                view = by_name.get(name)
                if view is None or view.cell_type != "code":
                    continue
                outputs_ = cells[view.index].get("outputs")
                if not isinstance(outputs_, list) or not 0 <= output_index < len(outputs_):
                    continue
                output = outputs_[output_index]
                if not isinstance(output, dict) or output.get("output_type") not in (
                    "display_data",
                    "execute_result",
                ):
                    continue
                if output.get("data") == data and output.get("metadata") == metadata:
                    continue
                new_outputs = list(outputs_)
                new_outputs[output_index] = {
                    **output,
                    "data": copy.deepcopy(data),
                    "metadata": copy.deepcopy(metadata),
                }
                cells[view.index] = {**cells[view.index], "outputs": new_outputs}
                written.add(name)
            return [view.name for view in views if view.name in written]

        return self._write_without_snapshot(change)

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
        store = SnapshotStore(self.notebook_path, base_dir=self._base_dir)
        if store.is_empty():
            raise undo_empty_error(self.notebook_path)
        with confined(self._confine), store.lock():
            stack = store.snapshots()
            if not stack:
                raise undo_empty_error(self.notebook_path)
            newest = stack[-1]
            now = {entry.path: _read_or_none(entry.path) for entry in newest.files}
            held = [e for e in newest.files if _sha256(now[e.path]) == e.after_sha256]
            record = newest.record()
            names: tuple[str, ...] = ()
            conflicts: list[dict[str, Any]] = []
            merged = len(held) < len(newest.files) and record is not None
            if not merged:
                if len(held) < len(newest.files) and not force:
                    entry = next(e for e in newest.files if e not in held)
                    raise undo_conflict_error(
                        newest.operation,
                        entry.path,
                        [],
                        {
                            "expected_sha256": entry.after_sha256,
                            "actual_sha256": _sha256(now[entry.path]),
                        },
                    )
                changed = [
                    (e.path, now[e.path] or b"", newest.content_before(e)) for e in newest.files
                ]
            else:
                assert record is not None
                changed, names, conflicts = self._reverted(record, newest.operation, force=force)
            write_all(changed)
            store.discard(newest)
            self.reload()
        return UndoResult(
            operation=newest.operation,
            restored=tuple(path for path, _before, _after in changed),
            forced=force and (bool(conflicts) or (not merged and len(held) < len(newest.files))),
            remaining=len(stack) - 1,
            merged=merged,
            changed=names,
            conflicts=tuple(conflicts),
        )

    # ------------------------------------------------------------------ internals

    def _write_without_snapshot(
        self, change: Callable[[tuple[CellView, ...], list[dict[str, Any]]], list[str]]
    ) -> tuple[str, ...]:
        """Apply ``change`` (edits ``cells`` in place, returns the names it changed) to the
        fresh content under the lock and write it atomically. A save by another program
        found right before the replace is merged again (see :meth:`_mutate`)."""
        store = SnapshotStore(self.notebook_path, base_dir=self._base_dir)
        with confined(self._confine), store.lock():
            for attempt in range(WRITE_ATTEMPTS):
                self._refresh()
                disk = self._files
                base = self._write_base(disk)
                cells = list(base.cells)
                written = change(self._views, cells)
                if not written:
                    return ()
                outputs = self._render(base, cells, range(len(cells)))
                changed = [
                    (state.path, state.raw, data)
                    for state, data in zip(disk, outputs, strict=True)
                    if state.raw != data
                ]
                model = self._written_model(disk, outputs)
                try:
                    stats = write_all(changed)
                except FileChanged as err:
                    _raise_if_last(err, attempt)
                    continue
                self._adopt_written(disk, outputs, model, stats)
                break
        return tuple(written)

    def _refresh(self) -> bool:
        """Under the lock: re-read the target if a file changed on disk (returns whether)
        or if the content is refused (the refusal may be gone, e.g. after ``jupytext
        --sync`` or a touch); then raise the refusal if there still is one."""
        disk = tuple(read_file(state.path, confine=self._confine) for state in self._files)
        changed = [state.sha256 for state in disk] != [state.sha256 for state in self._files]
        if changed or self._refusal is not None:
            notebook, files, pair, refusal = read_target(self._path, confine=self._confine)
            self._pair = pair
            self._refusal = refusal
            self._adopt(notebook, files)
        if self._refusal is not None:
            refusal = self._refusal
            raise NotebookError(refusal.code, refusal.message, refusal.details)
        return changed

    def _reverted(
        self, record: dict[str, Any], operation: str, *, force: bool
    ) -> tuple[list[tuple[Path, bytes, bytes]], tuple[str, ...], list[dict[str, Any]]]:
        """Under the lock: the files with ``record`` reverted on the fresh content, the
        names of the cells changed and the conflicts (raised unless ``force``)."""
        self._refresh()
        base = self._write_base(self._files)
        reverted = revert(record, base.cells, self._names)
        conflicts = [conflict.to_dict() for conflict in reverted.conflicts]
        if conflicts and not force:
            raise undo_conflict_error(operation, self.notebook_path, conflicts)
        rendered = self._render(base, reverted.cells, reverted.origins)
        changed = [
            (state.path, state.raw, data)
            for state, data in zip(self._files, rendered, strict=True)
            if state.raw != data
        ]
        new_names = assign_names(reverted.cells)
        names = tuple(new_names[i] for i in reverted.touched) + reverted.removed
        return changed, names, conflicts

    def _adopt(self, notebook: dict[str, Any], files: tuple[FileState, ...]) -> None:
        self._notebook = notebook
        self._files = files
        cells: list[dict[str, Any]] = notebook["cells"]
        self._names = assign_names(cells)
        self._views = tuple(
            _view(cell, name, index)
            for index, (cell, name) in enumerate(zip(cells, self._names, strict=True))
        )

    def _mutate(
        self,
        operation: str,
        edit: Callable[[Working], int],
        *,
        removes: bool = False,
        check: MutationCheck | None = None,
    ) -> MutationResult:
        """Apply ``edit`` to the fresh content and write it: the whole change (cells, names,
        bytes of every file, the result) is computed and checked (``check``) before the
        snapshot and the write, so a refused mutation leaves no trace.

        The write compares each file with what was read right before replacing it
        (``_files.write_all``); a save by another program found then discards the pending
        snapshot, and the mutation starts again from the fresh content (``reloaded``), at most
        :data:`WRITE_ATTEMPTS` times, then ``WRITE_CONFLICT``. What remains: a save landing
        between that last comparison and the rename system call (microseconds; a rename
        cannot compare and swap) is overwritten.
        """
        store = SnapshotStore(self.notebook_path, base_dir=self._base_dir)
        reloaded = False
        with confined(self._confine), store.lock():
            for attempt in range(WRITE_ATTEMPTS):
                reloaded = self._refresh() or reloaded
                disk = self._files
                base = self._write_base(disk)
                work = Working(
                    path=self._path,
                    cells=list(base.cells),
                    names=list(self._names),
                    nbformat_minor=int(self._notebook.get("nbformat_minor", 0)),
                )
                previous = work.structure_rev()
                index = edit(work)
                _edits.persist_names(work)
                outputs = self._render(base, work.cells, work.origins())
                changed = [
                    (state.path, state.raw, data)
                    for state, data in zip(disk, outputs, strict=True)
                    if state.raw != data
                ]
                views = tuple(
                    _view(cell, name, position)
                    for position, (cell, name) in enumerate(
                        zip(work.cells, work.names, strict=True)
                    )
                )
                result = MutationResult(
                    operation=operation,
                    path=self._path,
                    cell=None if removes else views[index],
                    removed=None,
                    structure_rev=structure_rev((view.name, view.rev) for view in views),
                    previous_structure_rev=previous,
                    changed=tuple(dict.fromkeys(work.changed)),
                    reloaded=reloaded,
                    written=tuple(path for path, _before, _after in changed),
                )
                model = self._written_model(disk, outputs)
                if check is not None:
                    check(result, views)
                stats: dict[Path, os.stat_result] = {}
                if changed:
                    for path, _before, _after in changed:
                        check_writable(path)  # refuse a read-only file before snapshotting
                    record = record_mutation(base.cells, self._names, work.cells, work.names)
                    pending = store.prepare(operation, changed, record)
                    try:
                        stats = _write_recorded(store, pending, changed)
                    except FileChanged as err:
                        _raise_if_last(err, attempt)
                        continue
                self._adopt_written(disk, outputs, model, stats)
                break
        return result

    def _write_base(self, disk: tuple[FileState, ...]) -> WriteBase:
        return write_base(disk[0].raw, disk[0].path, self._notebook, paired=self._pair is not None)

    def _render(
        self, base: WriteBase, cells: list[dict[str, Any]], origins: Sequence[int | None]
    ) -> list[bytes]:
        """The bytes of every file (``.ipynb`` first) holding ``cells``."""
        rendered = [render_ipynb(base, cells, origins)]
        if self._pair is not None:
            notebook = dict(self._notebook)
            notebook["cells"] = plain_numbers(cells)
            rendered.append(render_py(notebook, self._pair))
        return rendered

    def _written_model(self, disk: tuple[FileState, ...], outputs: list[bytes]) -> dict[str, Any]:
        """The model of the files about to be written, computed before writing: the
        ``.ipynb``'s new bytes read back with the read path's parser, as a fresh load would
        read them."""
        if outputs[0] == disk[0].raw:
            return self._notebook
        notebook = dict(self._notebook)
        notebook["cells"] = parse_notebook(outputs[0], path=disk[0].path)["cells"]
        return notebook

    def _adopt_written(
        self,
        disk: tuple[FileState, ...],
        outputs: list[bytes],
        notebook: dict[str, Any],
        stats: Mapping[Path, os.stat_result],
    ) -> None:
        self._adopt(notebook, _written(disk, outputs, stats))


def _written(
    disk: tuple[FileState, ...], outputs: list[bytes], stats: Mapping[Path, os.stat_result]
) -> tuple[FileState, ...]:
    return tuple(
        written_state(state, data, stats.get(state.path))
        for state, data in zip(disk, outputs, strict=True)
    )


def _raise_if_last(err: FileChanged, attempt: int) -> None:
    """Re-raise a write's ``WRITE_CONFLICT`` after the last attempt (details ``attempts``)."""
    if attempt < WRITE_ATTEMPTS - 1:
        return
    raise FileChanged(
        err.code,
        f"{err.details.get('path')} kept being saved by another program while jupyter-jcli "
        f"wrote it ({WRITE_ATTEMPTS} attempts); nothing was written. Retry when it is quiet.",
        {**err.details, "attempts": WRITE_ATTEMPTS},
    ) from err


def _view(cell: dict[str, Any], name: str, index: int) -> CellView:
    cell_type = str(cell.get("cell_type", ""))
    source = cell_source(cell)
    cell_id = cell.get("id")
    return CellView(
        index=index,
        name=name,
        cell_type=cell_type,
        rev=cell_rev(cell_type, source),
        source=source,
        cell_id=cell_id if isinstance(cell_id, str) else None,
        name_stored=stored_name(cell) == name,
    )


def _metadata_entry(cell: dict[str, Any], key: str) -> Any:
    metadata = cell.get("metadata")
    section = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    return section.get(key) if isinstance(section, dict) else None


def _with_metadata_entry(cell: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of ``cell`` with ``metadata.jupyter_mcp.<key> = value`` (other keys kept)."""
    metadata = cell.get("metadata")
    new_metadata = dict(metadata) if isinstance(metadata, dict) else {}
    section = new_metadata.get(METADATA_KEY)
    new_section = dict(section) if isinstance(section, dict) else {}
    new_section[key] = copy.deepcopy(value)
    new_metadata[METADATA_KEY] = new_section
    new_cell = dict(cell)
    new_cell["metadata"] = new_metadata
    return new_cell


def _with_removed(result: MutationResult, removed: CellView) -> MutationResult:
    from dataclasses import replace

    return replace(result, removed=removed)


def _write_recorded(
    store: SnapshotStore, pending: PendingSnapshot, changed: list[tuple[Path, bytes, bytes]]
) -> dict[Path, os.stat_result]:
    """Write a mutation's files, then make its snapshot current; if either fails, nothing
    stays changed (the files are put back, the pending snapshot is discarded). Returns each
    written file's ``fstat``.

    Raises:
        NotebookError: the write's codes (``WRITE_CONFLICT`` when another program saved a
            file meanwhile: nothing was written) or the snapshot's.
    """
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


def _read_or_none(path: Path) -> bytes | None:
    """The file's bytes through the one opener (under the active confinement: a file outside
    it, a FIFO or a device is refused with its code), ``None`` when it cannot be read."""
    try:
        return read_regular(path).raw
    except OSError:
        return None


def _sha256(data: bytes | None) -> str | None:
    import hashlib

    return None if data is None else hashlib.sha256(data).hexdigest()
