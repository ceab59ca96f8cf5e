"""What an undo writes (``Document.undo``), computed under the lock on the fresh content.

If every file still holds exactly what the newest mutation wrote, its saved files are put
back byte for byte; otherwise the inverse of its cell-level record is applied to the fresh
content (``_revert``), keeping everything written since, or the undo is refused with
``UNDO_CONFLICT`` naming what it would overwrite (unless ``force``).

What is kept: everything written since (outputs, execution counts, caches, other cells' edits,
outside edits). An undo is an edit like any other: a cell whose source goes back keeps the
outputs its last run wrote, and is fresh again only if its restored rev is the one that last
ran on the live kernel (statuses are computed from revs, so a cell whose undone source ran
since is ``stale``, never ``fresh``).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._commit import Draft, Fresh
from jupyter_jcli.notebook._open import read_regular
from jupyter_jcli.notebook._revert import Reverted, revert
from jupyter_jcli.notebook.snapshots import SnapshotStore, UndoResult

__all__ = ["undo_conflict_error", "undo_draft", "undo_empty_error", "undone_names"]


def undo_draft(
    fresh: Fresh, store: SnapshotStore, notebook_path: Path, *, force: bool
) -> Draft[tuple[UndoResult, tuple[int, ...]]]:
    """The undo of the newest snapshot in ``store`` (popped once written), with the indexes
    of the cells it changes, moves or puts back in what it writes. The result's ``changed``
    holds the names of the cells it takes out: the caller puts the names of those indexes
    first once the written cells are named (:func:`undone_names`), so no cell list is named
    twice.

    Raises:
        NotebookError: ``UNDO_EMPTY``, ``UNDO_CONFLICT``, ``NOTEBOOK_READ_FAILED`` (see
            ``Document.undo``).
    """
    stack = store.snapshots()
    if not stack:
        raise undo_empty_error(notebook_path)
    newest = stack[-1]
    now = {entry.path: _read_or_none(entry.path) for entry in newest.files}
    held = [e for e in newest.files if _sha256(now[e.path]) == e.after_sha256]
    record = newest.record()
    reverted: Reverted | None = None
    conflicts: list[dict[str, Any]] = []
    merged = len(held) < len(newest.files) and record is not None
    if not merged:
        if len(held) < len(newest.files) and not force:
            entry = next(e for e in newest.files if e not in held)
            raise undo_conflict_error(
                newest.operation,
                entry.path,
                [],
                {"expected_sha256": entry.after_sha256, "actual_sha256": _sha256(now[entry.path])},
            )
        changed = [(e.path, now[e.path] or b"", newest.content_before(e)) for e in newest.files]
        if record is not None:
            # The files go back byte for byte; the cells that this changes are the ones the
            # record's inverse changes on the content the mutation wrote (what is there now).
            reverted = revert(record, fresh.base.cells, fresh.names)
    else:
        assert record is not None
        reverted = revert(record, fresh.base.cells, fresh.names)
        conflicts = [conflict.to_dict() for conflict in reverted.conflicts]
        if conflicts and not force:
            raise undo_conflict_error(newest.operation, notebook_path, conflicts)
        changed = fresh.changes(fresh.render(reverted.cells, reverted.origins))
    result = UndoResult(
        operation=newest.operation,
        restored=tuple(path for path, _before, _after in changed),
        forced=force and (bool(conflicts) or (not merged and len(held) < len(newest.files))),
        remaining=len(stack) - 1,
        merged=merged,
        changed=() if reverted is None else reverted.removed,
        conflicts=tuple(conflicts),
        renamed=() if reverted is None else reverted.renamed,
    )
    touched = () if reverted is None else reverted.touched
    return Draft((result, touched), changed, pops=newest)


def undone_names(result: UndoResult, touched: Sequence[int], names: Sequence[str]) -> UndoResult:
    """``result`` whose ``changed`` starts with the names of the cells at ``touched`` among
    the written cells' ``names`` (changed, moved or put back), then those taken out."""
    return dataclasses.replace(result, changed=tuple(names[i] for i in touched) + result.changed)


def _read_or_none(path: Path) -> bytes | None:
    """The file's bytes through the one opener (under the active confinement: a file outside
    it, a FIFO or a device is refused with its code), ``None`` when it cannot be read."""
    try:
        return read_regular(path).raw
    except OSError:
        return None


def _sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def undo_empty_error(path: Path) -> NotebookError:
    """``UNDO_EMPTY`` for the notebook at ``path``."""
    return NotebookError(ErrorCode.UNDO_EMPTY, f"Nothing to undo for {path}.", {"path": str(path)})


def undo_conflict_error(
    operation: str,
    path: Path,
    conflicts: list[dict[str, Any]],
    file_changed: Mapping[str, Any] | None = None,
) -> NotebookError:
    """``UNDO_CONFLICT`` naming the changes made since (``Conflict.to_dict`` forms), or for a
    snapshot without a cell record the file that changed (``file_changed``: its hashes)."""
    if file_changed is not None:
        what = f"{path} was changed since"
    else:
        what = "; ".join(
            f"cell {c['cell']!r} {c['reason'].replace('_', ' ')}"
            + (f" ({', '.join(c['fields'])})" if c["fields"] else "")
            for c in conflicts
        )
    return NotebookError(
        ErrorCode.UNDO_CONFLICT,
        f"Undoing the {operation} would overwrite changes made since: {what}. To overwrite "
        "them, undo with force (j-cli notebook undo --force; force: true in the undo_last tool).",
        {"path": str(path), "operation": operation, "conflicts": conflicts, **(file_changed or {})},
    )
