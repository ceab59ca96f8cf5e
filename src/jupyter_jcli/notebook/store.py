"""The notebook store seam: where a notebook lives, at the level of cell operations.

A :class:`NotebookStore` holds notebooks named by a :class:`NotebookRef` (the store's kind
plus a path inside it). Everything above it (names, revs, edits, undo records, outputs) is
computed from cell lists by pure code; a store only reads a notebook with its
:data:`Version`, applies a small vocabulary of :data:`CellOp` in one commit (refused with
``WRITE_CONFLICT`` when the notebook is no longer at the version the caller read, or a cell an
operation targets no longer has the rev the caller saw: nothing is changed), creates
notebooks, holds a write lock with a timeout, keeps the undo records of its notebooks and says
where a kernel for a notebook runs.

The operations (each addresses the cell list as the operations before it left it):

================  ===========================================================
:class:`InsertCell`    insert a whole nbformat cell at an index
:class:`DeleteCell`    delete the cell at an index
:class:`MoveCell`      move the cell at an index to another index
:class:`SetSource`     replace a cell's source
:class:`SetOutputs`    replace a code cell's outputs and ``execution_count``
:class:`SetMetadata`   replace a cell's metadata
================  ===========================================================

Every operation on an existing cell carries that cell's rev as the caller read it
(:func:`~jupyter_jcli.notebook.revs.cell_rev` of type and source), so a store whose cells can
change under it between read and commit checks the rev in the same transaction as the edit.
A change of cell type (or of a field outside the vocabulary) is a delete and an insert.
:func:`ops_between` turns an edited cell list into operations; :func:`apply_ops` applies them
to a cell list (both pure).

How the three stores map onto the protocol:

- **local file** (:class:`~jupyter_jcli.notebook._local_store.LocalStore`, ``kind="local"``):
  version = device, inode, size, ``mtime_ns`` and sha256 of the file(s) (the hash decides);
  commit = under the notebook's advisory lock, re-read, compare, apply the operations to the
  parsed JSON with the cells' bytes kept (``_writebase``/``_layout``) and replace the file
  atomically (``_atomic``, compare before replace); undo records are the snapshot stack
  under the cache folder; the kernel runs on this machine.
- **collaborative room** (jupyter-collaboration, ``jupyter_ydoc.YNotebook`` on ``pycrdt``;
  :class:`~jupyter_jcli.notebook._collab_store.CollabStore`, ``kind="collab"``):
  read = the room's shared document after sync (``YNotebook.get()``, which drops the room's
  own ``execution_state``); each operation is one change of ``YNotebook.ycells`` inside one
  ``ydoc.transaction()``: ``InsertCell`` -> ``ycells.insert(index,
  ynotebook.create_ycell(cell))``, ``DeleteCell`` -> ``del ycells[index]``, ``MoveCell`` ->
  a delete and an insert of the same cell (as jupyter-ydoc does: JupyterLab's Y.js 13 has
  no move), ``SetSource`` -> an edit of the cell's ``source`` ``Text`` (a diff, so the
  person's cursor keeps its place), ``SetOutputs`` -> the cell's ``outputs`` ``Array`` and
  its ``execution_count`` key, ``SetMetadata`` -> its ``metadata`` ``Map``. The revs the
  operations carry are checked against the live cells inside that transaction; the version
  is the live cells' ids and revs in order (``_collab_store.CollabVersion``), so a commit
  at an older version is refused and ``StoreDocument`` merges again on the live cells,
  which keeps the person's edit. The server saves the file; the lock is local to this
  machine (other writers are kept apart by the rev checks); undo records stay on this
  machine; the kernel runs on the server.
- **contents API** (:class:`~jupyter_jcli.notebook._contents_store.ContentsStore`,
  ``kind="contents"``, Jupyter Server ``GET``/``PUT /api/contents/<path>``): read = ``GET``
  with ``content=1&hash=1`` (the model's ``content`` is the notebook, the server's ``hash``,
  else a hash of the content, is the version); commit = apply the operations to the JSON,
  check the version again, ``PUT`` with ``type: "notebook"`` (the API has no conditional
  write: a save landing between the check and the ``PUT`` is overwritten, see there);
  create = ``PUT`` of a new model; the lock is local to this machine (the server has none);
  undo records stay on this machine; the kernel runs on the server.

An in-memory store for tests ships in :mod:`jupyter_jcli.notebook.testing`. A document of any
store is opened with :func:`open_notebook` (a path or a local ref: ``Document.load``, the
local store's document; another ref: a ``StoreDocument`` whose commits go through the store).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.io import cell_source
from jupyter_jcli.notebook.revs import cell_rev

if TYPE_CHECKING:
    from jupyter_jcli.notebook._collab_store import CollabStore
    from jupyter_jcli.notebook._contents_store import ContentsStore
    from jupyter_jcli.notebook._local_store import LocalStore
    from jupyter_jcli.notebook.document import Document
    from jupyter_jcli.notebook.live import LiveCell, LiveOutputs
    from jupyter_jcli.notebook.stores import StoreChoice, open_store, resolve_ref

__all__ = [
    "CellOp",
    "CollabStore",
    "ContentsStore",
    "DeleteCell",
    "InsertCell",
    "KernelPlace",
    "LiveCell",
    "LiveOutputs",
    "LocalStore",
    "MoveCell",
    "NotebookRef",
    "NotebookStore",
    "SetMetadata",
    "SetOutputs",
    "SetSource",
    "StoreChange",
    "StoreChoice",
    "StoreRead",
    "UndoEntry",
    "Version",
    "apply_ops",
    "open_notebook",
    "open_store",
    "ops_between",
    "resolve_ref",
    "rev_of",
    "stale_version_error",
]


def __getattr__(name: str) -> Any:
    """``LocalStore`` (``_local_store``), ``CollabStore`` (``_collab_store``) and
    ``ContentsStore`` (``_contents_store``), loaded on first access (PEP 562): they bring the
    write machinery, the collaboration client and ``httpx``, which a read of a local notebook
    never needs."""
    if name == "LocalStore":
        from jupyter_jcli.notebook._local_store import LocalStore

        return LocalStore
    if name == "CollabStore":
        from jupyter_jcli.notebook._collab_store import CollabStore

        return CollabStore
    if name == "ContentsStore":
        from jupyter_jcli.notebook._contents_store import ContentsStore

        return ContentsStore
    if name in ("LiveCell", "LiveOutputs"):
        from jupyter_jcli.notebook import live

        return getattr(live, name)
    if name in ("StoreChoice", "open_store", "resolve_ref"):
        from jupyter_jcli.notebook import stores

        return getattr(stores, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Version = Any
"""What a store says a notebook's content is at: compared with ``==`` only (a store's own
value: a file fingerprint, a counter, ``last_modified`` and a hash)."""


@dataclass(frozen=True)
class NotebookRef:
    """Which notebook: the store's kind and the path inside that store.

    Attributes:
        store: ``"local"`` (a file on this machine), ``"memory"`` (tests), later the
            collaborative room and the contents API of a server.
        path: for ``"local"`` an absolute file path; else the path the store knows
            (``/``-separated, relative to the server's root).
        location: where the store is (a server's base URL); ``""`` for this machine.
    """

    store: str
    path: str
    location: str = ""

    @classmethod
    def local(cls, path: str | os.PathLike[str]) -> NotebookRef:
        """The ref of a file on this machine (made absolute, not resolved)."""
        return cls("local", os.path.abspath(path))

    @property
    def local_path(self) -> Path | None:
        """The file on this machine, for a local ref; else ``None``. Keys kept on this
        machine (kernel registry, execution logs, warm cache, roots) use it for a local notebook."""
        return Path(self.path) if self.store == "local" else None

    @property
    def key(self) -> str:
        """A string naming the notebook across stores (``store:location:path``), for keys
        of records kept on this machine about a notebook of another store."""
        return f"{self.store}:{self.location}:{self.path}"

    def __str__(self) -> str:
        return self.path if self.store == "local" else self.key


@dataclass(frozen=True)
class KernelPlace:
    """Where a kernel for a notebook runs.

    Attributes:
        where: ``"local"`` (a kernel process on this machine) or ``"server"``.
        url: the server's base URL for ``"server"``.
        cwd: the working folder the kernel starts in (local path or server path).
    """

    where: Literal["local", "server"]
    url: str = ""
    cwd: str = ""


@dataclass(frozen=True)
class StoreRead:
    """A notebook as read from a store.

    Attributes:
        notebook: the nbformat 4 model (never changed in place by the store's caller).
        version: its version (:data:`Version`).
    """

    notebook: dict[str, Any]
    version: Version


@dataclass(frozen=True)
class UndoEntry:
    """One undo record of a notebook: the operation's name and the cell-level record of
    what it changed (``_revert.record_mutation``); ``handle`` is the store's own (e.g. the
    snapshot it lives in)."""

    operation: str
    record: dict[str, Any] | None
    handle: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class StoreChange:
    """What one commit writes: the version of the notebook it was computed from, the cell
    operations, applied in order, and what the change does to the notebook's undo records.

    Attributes:
        version: the :data:`Version` read; the commit is refused unless the notebook is
            still at it.
        ops: the :data:`CellOp` s.
        undo: ``(operation, record)`` to push as an undo record with the change.
        pop: an undo record (from ``undo_entries``) to discard once the change is made.
    """

    version: Version
    ops: Sequence[CellOp]
    undo: tuple[str, dict[str, Any]] | None = None
    pop: UndoEntry | None = None


# ---------------------------------------------------------------------- operations


@dataclass(frozen=True)
class InsertCell:
    """Insert ``cell`` (an nbformat 4 cell dict) at ``index``."""

    index: int
    cell: dict[str, Any]


@dataclass(frozen=True)
class DeleteCell:
    """Delete the cell at ``index``, whose rev is ``rev``."""

    index: int
    rev: str


@dataclass(frozen=True)
class MoveCell:
    """Move the cell at ``index`` (rev ``rev``) so that it ends up at ``to``."""

    index: int
    rev: str
    to: int


@dataclass(frozen=True)
class SetSource:
    """Replace the source of the cell at ``index`` (rev ``rev``)."""

    index: int
    rev: str
    source: str | list[str]


@dataclass(frozen=True)
class SetOutputs:
    """Replace the outputs and ``execution_count`` of the code cell at ``index``."""

    index: int
    rev: str
    outputs: list[dict[str, Any]]
    execution_count: int | None


@dataclass(frozen=True)
class SetMetadata:
    """Replace the metadata of the cell at ``index`` (rev ``rev``)."""

    index: int
    rev: str
    metadata: dict[str, Any]


CellOp = InsertCell | DeleteCell | MoveCell | SetSource | SetOutputs | SetMetadata
"""One cell operation of a commit."""

_OWN = frozenset({"source", "outputs", "execution_count", "metadata"})


def rev_of(cell: dict[str, Any]) -> str:
    """The rev of an nbformat cell dict (``revs.cell_rev`` of its type and joined source)."""
    return cell_rev(str(cell.get("cell_type", "")), cell_source(cell))


def ops_between(
    before: Sequence[dict[str, Any]],
    after: Sequence[dict[str, Any]],
    origins: Sequence[int | None],
) -> list[CellOp]:
    """The operations that turn ``before`` into ``after``.

    Args:
        before: the cells read.
        after: the cells to write.
        origins: for each of ``after``, its index in ``before`` (``None``: a new cell).

    Returns:
        Deletes (highest index first), then per position of ``after`` an insert or a move,
        then the field changes of the kept cells. A kept cell whose type or another field
        outside the vocabulary changed is deleted and inserted again.
    """
    kept = {origin for origin in origins if origin is not None}
    replaced = {
        origin
        for cell, origin in zip(after, origins, strict=True)
        if origin is not None and _needs_replace(before[origin], cell)
    }
    ops: list[CellOp] = []
    current: list[int | None] = list(range(len(before)))
    for index in sorted(set(range(len(before))) - kept | replaced, reverse=True):
        ops.append(DeleteCell(index, rev_of(before[index])))
        del current[index]
    for position, (cell, origin) in enumerate(zip(after, origins, strict=True)):
        if origin is None or origin in replaced:
            ops.append(InsertCell(position, copy.deepcopy(cell)))
            current.insert(position, None)
            continue
        at = current.index(origin)
        if at != position:
            ops.append(MoveCell(at, rev_of(before[origin]), position))
            current.insert(position, current.pop(at))
    for position, (cell, origin) in enumerate(zip(after, origins, strict=True)):
        if origin is None or origin in replaced:
            continue
        old = before[origin]
        rev = rev_of(old)
        if old.get("source") != cell.get("source"):
            ops.append(SetSource(position, rev, copy.deepcopy(cell.get("source", ""))))
            rev = rev_of(cell)
        if old.get("metadata") != cell.get("metadata"):
            ops.append(SetMetadata(position, rev, copy.deepcopy(cell.get("metadata", {}))))
        if old.get("outputs") != cell.get("outputs") or old.get("execution_count") != cell.get(
            "execution_count"
        ):
            outputs = copy.deepcopy(cell.get("outputs", []))
            ops.append(SetOutputs(position, rev, outputs, cell.get("execution_count")))
    return ops


def _needs_replace(old: dict[str, Any], new: dict[str, Any]) -> bool:
    keys = (set(old) | set(new)) - _OWN
    return any(old.get(key) != new.get(key) for key in keys)


def apply_ops(
    cells: Sequence[dict[str, Any]], ops: Sequence[CellOp], *, where: str
) -> tuple[list[dict[str, Any]], list[int | None]]:
    """Apply ``ops`` to ``cells`` (not changed: changed cells are new dicts).

    Args:
        cells: the cells now.
        ops: the operations, in order.
        where: the notebook, for errors.

    Returns:
        The new cells, and for each its index in ``cells`` (``None``: inserted).

    Raises:
        NotebookError: ``WRITE_CONFLICT`` (details ``reason: "cell_changed"``, ``index``,
            ``expected_rev``, ``actual_rev``) when a targeted cell is missing or has another
            rev (an index out of range is the same conflict). Nothing is applied.
    """
    work = list(cells)
    origins: list[int | None] = list(range(len(cells)))
    for op in ops:
        if isinstance(op, InsertCell):
            if not 0 <= op.index <= len(work):
                raise _cell_changed(where, op.index, None, None)
            work.insert(op.index, copy.deepcopy(op.cell))
            origins.insert(op.index, None)
            continue
        _check(work, op.index, op.rev, where)
        if isinstance(op, DeleteCell):
            del work[op.index]
            del origins[op.index]
        elif isinstance(op, MoveCell):
            if not 0 <= op.to < len(work):
                raise _cell_changed(where, op.to, op.rev, None)
            work.insert(op.to, work.pop(op.index))
            origins.insert(op.to, origins.pop(op.index))
        else:
            cell = dict(work[op.index])
            if isinstance(op, SetSource):
                cell["source"] = copy.deepcopy(op.source)
            elif isinstance(op, SetMetadata):
                cell["metadata"] = copy.deepcopy(op.metadata)
            else:
                cell["outputs"] = copy.deepcopy(op.outputs)
                cell["execution_count"] = op.execution_count
            work[op.index] = cell
    return work, origins


def _check(work: list[dict[str, Any]], index: int, rev: str, where: str) -> None:
    if not 0 <= index < len(work):
        raise _cell_changed(where, index, rev, None)
    actual = rev_of(work[index])
    if actual != rev:
        raise _cell_changed(where, index, rev, actual)


def _cell_changed(
    where: str, index: int, expected: str | None, actual: str | None
) -> NotebookError:
    return NotebookError(
        ErrorCode.WRITE_CONFLICT,
        f"cell {index} of {where} is not the cell this change was computed for; nothing was "
        "changed: read the notebook again",
        {
            "path": where,
            "reason": "cell_changed",
            "index": index,
            "expected_rev": expected,
            "actual_rev": actual,
        },
    )


def stale_version_error(ref: NotebookRef) -> NotebookError:
    """``WRITE_CONFLICT`` (details ``path``, ``reason: "version_changed"``): the notebook is
    no longer at the version a commit expected; nothing was changed."""
    return NotebookError(
        ErrorCode.WRITE_CONFLICT,
        f"{ref} changed since it was read; nothing was changed: read it again",
        {"path": str(ref), "reason": "version_changed"},
    )


# ---------------------------------------------------------------------- the protocol


class NotebookStore(Protocol):
    """Where notebooks live (module docstring). Every method may raise ``NotebookError``
    with the read codes of ``Document.load`` (``FILE_NOT_FOUND``, ``NOTEBOOK_READ_FAILED``,
    ``PATH_NOT_ALLOWED``)."""

    kind: str
    """The :attr:`NotebookRef.store` of its refs."""

    def read(self, ref: NotebookRef) -> StoreRead:
        """The notebook and its version. Writes nothing."""
        ...

    def commit(self, ref: NotebookRef, change: StoreChange) -> StoreRead:
        """Apply ``change.ops`` in one change if the notebook is still at ``change.version``
        (call it holding :meth:`lock`);
        with ``change.undo`` (operation, record) push an undo record with the change, with
        ``change.pop`` discard that record once the change is made. Returns what was written.

        Raises:
            NotebookError: ``WRITE_CONFLICT`` (``reason``: ``version_changed``,
                ``cell_changed``, ``lock_timeout``); ``NOTEBOOK_WRITE_FAILED``. Nothing is
                changed.
        """
        ...

    def create(self, ref: NotebookRef, notebook: dict[str, Any]) -> StoreRead:
        """Create a notebook.

        Raises:
            NotebookError: ``FILE_EXISTS`` if it exists; ``NOTEBOOK_WRITE_FAILED``.
        """
        ...

    def lock(self, ref: NotebookRef, timeout: float) -> AbstractContextManager[None]:
        """Hold the notebook's write lock (one writer at a time across processes where the
        store can say so).

        Raises:
            NotebookError: ``WRITE_CONFLICT`` (``reason: "lock_timeout"``, ``timeout_s``)
                after ``timeout`` seconds.
        """
        ...

    def undo_entries(self, ref: NotebookRef) -> list[UndoEntry]:
        """The notebook's undo records, oldest first (kept on this machine). Creates
        nothing."""
        ...

    def kernel_place(self, ref: NotebookRef) -> KernelPlace:
        """Where a kernel for the notebook should run."""
        ...


def open_notebook(
    target: str | os.PathLike[str] | NotebookRef,
    *,
    store: NotebookStore | None = None,
    cache_dir: Path | None = None,
) -> Document:
    """The document of a notebook named by a path or a ref (``_store_document.open_notebook``).

    Raises:
        UsageError: a ref of another store without ``store``.
        NotebookError: the read codes of ``Document.load`` or of the store.
    """
    local = target.local_path if isinstance(target, NotebookRef) else target
    if store is None and local is not None:
        from jupyter_jcli.notebook.stores import active_choice

        choice = active_choice()
        if choice is None or choice.local_only or isinstance(target, NotebookRef):
            from jupyter_jcli.notebook.document import Document  # a file: no store machinery

            return Document.load(local, cache_dir=cache_dir)
    from jupyter_jcli.notebook._store_document import open_notebook as opened

    return opened(target, store=store, cache_dir=cache_dir)
