"""The mutations: ``add_cell``, ``update_cell`` (and ``edit_cell_source``, built on it),
``remove_cell``, ``move_cell``, ``clear_outputs`` and ``undo_last``.

Each loads the notebook, wraps the :class:`~jupyter_jcli.notebook.document.Document` mutation
(optimistic locking by ``expected_rev``, outside-edit detection, snapshot for undo, atomic
write) and adds the cells that went stale (:mod:`jupyter_jcli.workbench._stale`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from jupyter_jcli.errors import ErrorCode, NotebookError, UsageError
from jupyter_jcli.notebook import address_fields
from jupyter_jcli.notebook.document import CellView, Document, MutationCheck, MutationResult
from jupyter_jcli.workbench._envelope import result_document
from jupyter_jcli.workbench._execution_log import ID_PREFIX, record_keys
from jupyter_jcli.workbench._load import build_cell_graph, open_document
from jupyter_jcli.workbench._stale import stale_between

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from jupyter_jcli.notebook import AddOptions, MoveOptions, UpdateOptions

__all__ = [
    "CellRef",
    "MutationOutcome",
    "UndoOutcome",
    "add_cell",
    "clear_outputs",
    "edit_cell_source",
    "move_cell",
    "remove_cell",
    "undo_last",
    "update_cell",
]


@dataclass(frozen=True)
class CellRef:
    """A cell's address and state, without its source.

    Attributes:
        index: physical zero-based position.
        name: the cell's name.
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        rev: its rev (the ``expected_rev`` for the next edit of this cell).
    """

    index: int
    name: str
    cell_type: str
    rev: str

    @classmethod
    def of(cls, view: CellView) -> CellRef:
        """The reference of a document cell."""
        return cls(**address_fields(view))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(address_fields(self))


@dataclass(frozen=True)
class MutationOutcome:
    """What a mutation did.

    Attributes:
        operation: ``"add_cell"``, ``"update_cell"``, ``"remove_cell"`` or ``"move_cell"``.
        path: the file addressed (absolute; ``.ipynb`` or paired ``.py``).
        cell: the target cell after the mutation (``None`` after a removal).
        removed: the removed cell as it was (removals only).
        previous_cell: the target cell before an update or move (else ``None``).
        structure_rev: the notebook's structure rev after the mutation.
        previous_structure_rev: the structure rev of the content the mutation applied to.
        changed: names of the cells added, edited, renamed (old and new), moved or removed.
        stale: names of the code cells that must re-run, in document order (see
            :mod:`jupyter_jcli.workbench._stale` for the rule).
        reloaded: the file changed outside since it was read; the mutation applied on top
            of the fresh content (the other edit is kept).
        written: the files rewritten (empty when the bytes did not change; then no snapshot
            was taken either).
    """

    operation: str
    path: Path
    cell: CellRef | None
    removed: CellRef | None
    previous_cell: CellRef | None
    structure_rev: str
    previous_structure_rev: str
    changed: tuple[str, ...]
    stale: tuple[str, ...]
    reloaded: bool
    written: tuple[Path, ...]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document."""
        return result_document(self.operation, self)


@dataclass(frozen=True)
class UndoOutcome:
    """What :func:`undo_last` restored.

    Attributes:
        path: the file addressed (absolute).
        operation: the mutation undone.
        restored: the files written back, in write order (empty when the notebook already
            held what the undo would write).
        forced: whether changes made since were overwritten (listed in ``conflicts``).
        remaining: snapshots left on the notebook's undo stack.
        structure_rev: the notebook's structure rev after the undo.
        cell_count: cells after the undo.
        merged: the notebook had changed since the mutation and only what the mutation
            changed was reverted (outputs and other edits made since were kept).
        changed: names of the cells the undo changed, moved, put back or removed.
        stale: code cells that must re-run after the undo (the rule of a mutation's
            ``stale``: a cell whose source went back is stale like any edited cell).
        conflicts: with ``force``, the changes made since that were overwritten.
    """

    path: Path
    operation: str
    restored: tuple[Path, ...]
    forced: bool
    remaining: int
    structure_rev: str
    cell_count: int
    merged: bool = False
    changed: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    conflicts: tuple[dict[str, Any], ...] = ()

    JSON_KEYS: ClassVar[str] = (
        "undone restored forced remaining structure_rev cell_count merged changed stale conflicts"
    )
    """The keys of :meth:`to_dict`, in order."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON document."""
        return result_document("undo_last", self, self.JSON_KEYS, undone=self.operation)


def _run(
    path: str | os.PathLike[str],
    cache_dir: Path | None,
    mutate: Callable[[Document, MutationCheck], MutationResult],
    *,
    target: str | None = None,
) -> MutationOutcome:
    document = open_document(path, cache_dir=cache_dir)
    before_cells = document.cells
    previous = next((view for view in before_cells if view.name == target), None)
    stale: list[str] = []

    def check(result: MutationResult, cells: tuple[CellView, ...]) -> None:
        # Runs before anything is written: a notebook the analysis refuses (a cell of an
        # unknown type: INVALID_CELL_TYPE) refuses the mutation and the file stays as it was.
        # Compared with what this call loaded: if an outside edit landed in between
        # (``reloaded``), the cells it changed count as edited too.
        cell = result.cell if result.operation == "update_cell" else None
        own = ((target, cell.name),) if cell is not None and target is not None else ()
        renames = _renames(before_cells, cells, own)  # the target: also without an id
        before = build_cell_graph(before_cells, renames)
        after = build_cell_graph(cells)
        before_revs = {renames.get(view.name, view.name): view.rev for view in before_cells}
        after_revs = {view.name: view.rev for view in cells}
        stale[:] = stale_between(before, after, before_revs, after_revs)

    result = mutate(document, check)
    return MutationOutcome(
        operation=result.operation,
        path=result.path,
        cell=None if result.cell is None else CellRef.of(result.cell),
        removed=None if result.removed is None else CellRef.of(result.removed),
        previous_cell=None if previous is None or target is None else CellRef.of(previous),
        structure_rev=result.structure_rev,
        previous_structure_rev=result.previous_structure_rev,
        changed=result.changed,
        stale=tuple(stale),
        reloaded=result.reloaded,
        written=result.written,
    )


def _renames(
    before: Sequence[CellView],
    after: Sequence[CellView],
    known: Iterable[tuple[str, str]] = (),
) -> dict[str, str]:
    """``{name before: name after}`` of the cells whose name changed, matched by their
    nbformat ``id`` (one held by a single cell on each side), and the ``known`` renames:
    a renamed cell is the same cell, so it stales nothing."""
    before_keys, after_keys = record_keys(before), record_keys(after)
    name_after = {key: name for name, key in after_keys.items() if key.startswith(ID_PREFIX)}
    renames = {}
    for name, key in before_keys.items():
        found = name_after.get(key)
        if found is not None and found != name:
            renames[name] = found
    renames.update((old, new) for old, new in known if old != new)
    taken = set(renames.values())
    for name in before_keys:  # a cell whose name a renamed cell took: a key of its own
        if name not in renames and name in taken:
            renames[name] = f"{name}{ID_PREFIX}before"
    return renames


def add_cell(
    path: str | os.PathLike[str],
    source: str,
    *,
    cache_dir: Path | None = None,
    **options: Unpack[AddOptions],
) -> MutationOutcome:
    """Insert a new cell before or after a named anchor, or at the start or end (default end).

    Args:
        path: an ``.ipynb`` or a py:percent ``.py`` paired with one (both are written).
        source: the new cell's source.
        cache_dir: snapshot cache base folder (default ``$JUPYTER_JCLI_CACHE_DIR`` or the
            user cache).
        options: ``cell_type``, ``name``, ``before``, ``after``, ``position`` and
            ``expected_rev``, as :meth:`Document.add_cell
            <jupyter_jcli.notebook.document.Document.add_cell>` takes them.

    Returns:
        The outcome; ``stale`` holds the new cell (if code) and its dependents.

    Raises:
        NotebookError, UsageError: the codes of :meth:`Document.add_cell
            <jupyter_jcli.notebook.document.Document.add_cell>`.
    """
    return _run(
        path,
        cache_dir,
        lambda doc, check: doc.add_cell(source, check=check, **options),
    )


def update_cell(
    path: str | os.PathLike[str],
    name: str,
    *,
    expected_rev: str,
    cache_dir: Path | None = None,
    **options: Unpack[UpdateOptions],
) -> MutationOutcome:
    """Change a cell's source, type and/or name (``None`` keeps that part).

    Args:
        path: the notebook or paired ``.py``.
        name: the cell to change.
        expected_rev: that cell's rev as last read.
        cache_dir: snapshot cache base folder.
        options: ``source``, ``cell_type`` and ``new_name``, as :meth:`Document.update_cell
            <jupyter_jcli.notebook.document.Document.update_cell>` takes them.

    Returns:
        The outcome; ``stale`` is ``stale_after_edit`` of the cell when its rev changed
        (a rename alone stales nothing).

    Raises:
        NotebookError: the codes of :meth:`Document.update_cell
            <jupyter_jcli.notebook.document.Document.update_cell>` and of
            :meth:`Document.load <jupyter_jcli.notebook.document.Document.load>`.
    """
    return _run(
        path,
        cache_dir,
        lambda doc, check: doc.update_cell(name, expected_rev=expected_rev, check=check, **options),
        target=name,
    )


def edit_cell_source(
    path: str | os.PathLike[str],
    name: str,
    *,
    expected_rev: str,
    old_string: str,
    new_string: str,
    replace_all: bool = False,
    cache_dir: Path | None = None,
) -> MutationOutcome:
    """Replace ``old_string`` by ``new_string`` in a cell's source: :func:`update_cell` with
    the new source (staleness, undo snapshot, paired ``.py``, ``REV_MISMATCH`` alike), its
    outcome's ``operation`` ``"edit_cell_source"``.

    Args:
        path: the notebook or paired ``.py``.
        name: the cell to edit.
        expected_rev: that cell's rev as last read.
        old_string: the text to find (not empty); it must occur exactly once unless
            ``replace_all``.
        new_string: its replacement.
        replace_all: replace every occurrence (at least one).
        cache_dir: snapshot cache base folder.

    Returns:
        :func:`update_cell`'s outcome.

    Raises:
        UsageError: ``USAGE_ERROR`` for an empty ``old_string``.
        NotebookError: ``OLD_STRING_COUNT`` when ``old_string`` occurs zero times or (without
            ``replace_all``) several times (details ``count``, ``name``, ``rev``; nothing
            written); the codes of :func:`update_cell` (``CELL_NOT_FOUND``,
            ``REV_MISMATCH``...).
    """
    if not old_string:
        raise UsageError("old_string must not be empty.", {"name": name})
    view = open_document(path, cache_dir=cache_dir).cell(name)
    if view.rev != expected_rev:  # refused by update_cell's own check, with its details
        update_cell(path, name, expected_rev=expected_rev, cache_dir=cache_dir, source=None)
        view = open_document(path, cache_dir=cache_dir).cell(name)
    count = view.source.count(old_string)
    if count == 0 or (count > 1 and not replace_all):
        want = "at least once" if replace_all else "exactly once"
        raise NotebookError(
            ErrorCode.OLD_STRING_COUNT,
            f"old_string occurs {count} times in cell {name!r}; it must occur {want}"
            + ("" if count == 0 else " (add context to make it unique, or replace_all)")
            + ". Nothing was changed.",
            {"name": name, "rev": view.rev, "count": count, "replace_all": replace_all},
        )
    source = view.source.replace(old_string, new_string, -1 if replace_all else 1)
    outcome = update_cell(path, name, expected_rev=expected_rev, cache_dir=cache_dir, source=source)
    return replace(outcome, operation="edit_cell_source")


def clear_outputs(
    path: str | os.PathLike[str], names: Sequence[str], *, cache_dir: Path | None = None
) -> MutationOutcome:
    """Empty the saved outputs and execution counts of the named code cells (a mutation:
    :func:`undo_last` puts them back). No cell goes stale: the kernel keeps what they did.

    Args:
        path: the notebook or paired ``.py``.
        names: code cell names (one or more).
        cache_dir: snapshot cache base folder.

    Returns:
        The outcome: ``changed`` names the cells that had outputs or a count (nothing is
        written when none had); ``cell`` is None.

    Raises:
        NotebookError: ``CELL_NOT_FOUND``, and the codes of :meth:`Document.clear_outputs
            <jupyter_jcli.notebook.document.Document.clear_outputs>`.
        UsageError: ``USAGE_ERROR`` for no names or a Markdown or raw cell (nothing changes).
    """
    if isinstance(names, str) or not names:
        raise UsageError("clear_outputs needs a list of one or more cell names.")
    outcome = _run(path, cache_dir, lambda doc, check: doc.clear_outputs(names, check=check))
    return replace(outcome, cell=None)


def remove_cell(
    path: str | os.PathLike[str],
    name: str,
    *,
    expected_rev: str,
    cache_dir: Path | None = None,
) -> MutationOutcome:
    """Delete a cell.

    Returns:
        The outcome; ``stale`` holds the removed cell's former dependents and theirs.

    Raises:
        NotebookError: the codes of :meth:`Document.remove_cell
            <jupyter_jcli.notebook.document.Document.remove_cell>` and of
            :meth:`Document.load <jupyter_jcli.notebook.document.Document.load>`.
    """
    return _run(
        path,
        cache_dir,
        lambda doc, check: doc.remove_cell(name, expected_rev=expected_rev, check=check),
    )


def move_cell(
    path: str | os.PathLike[str],
    name: str,
    *,
    expected_rev: str,
    cache_dir: Path | None = None,
    **options: Unpack[MoveOptions],
) -> MutationOutcome:
    """Move a cell before or after a named anchor, or to the start or end (default end);
    ``options``: ``before``, ``after`` and ``position``, as :meth:`Document.move_cell
    <jupyter_jcli.notebook.document.Document.move_cell>` takes them.

    Returns:
        The outcome; ``stale`` holds the cells whose parents changed and their dependents.

    Raises:
        NotebookError, UsageError: the codes of :meth:`Document.move_cell
            <jupyter_jcli.notebook.document.Document.move_cell>` and of
            :meth:`Document.load <jupyter_jcli.notebook.document.Document.load>`.
    """
    return _run(
        path,
        cache_dir,
        lambda doc, check: doc.move_cell(name, expected_rev=expected_rev, check=check, **options),
        target=name,
    )


def undo_last(
    path: str | os.PathLike[str], *, force: bool = False, cache_dir: Path | None = None
) -> UndoOutcome:
    """Revert the last mutation of the notebook (and its paired ``.py``), keeping what was
    written since.

    ``Document.undo``: what the mutation changed (sources, types, names, cells added, removed
    or moved) goes back; outputs, execution counts, caches and other edits made since stay.
    The undo stack is on disk (see :mod:`jupyter_jcli.notebook.snapshots`), so this works
    across processes; each call pops one snapshot.

    Args:
        path: the notebook or paired ``.py``.
        force: overwrite the changes made since that conflict with the undo.
        cache_dir: snapshot cache base folder.

    Returns:
        The :class:`UndoOutcome`.

    Raises:
        NotebookError: the codes of :meth:`Document.undo
            <jupyter_jcli.notebook.document.Document.undo>` and of
            :meth:`Document.load <jupyter_jcli.notebook.document.Document.load>`.
    """
    document = open_document(path, cache_dir=cache_dir)
    before_cells = document.cells
    result = document.undo(force=force)
    # an undone rename stales nothing (the undo names it also for a cell without an id)
    renames = _renames(before_cells, document.cells, result.renamed)
    before = build_cell_graph(before_cells, renames)
    after = build_cell_graph(document.cells)
    stale = stale_between(
        before,
        after,
        {renames.get(view.name, view.name): view.rev for view in before_cells},
        {view.name: view.rev for view in document.cells},
    )
    return UndoOutcome(
        path=document.path,
        operation=result.operation,
        restored=result.restored,
        forced=result.forced,
        remaining=result.remaining,
        structure_rev=document.structure_rev,
        cell_count=len(document.cells),
        merged=result.merged,
        changed=result.changed,
        stale=tuple(stale),
        conflicts=result.conflicts,
    )
