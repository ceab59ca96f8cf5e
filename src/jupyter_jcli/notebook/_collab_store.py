"""The collaborative store: a notebook open in a Jupyter Server's real-time collaboration room
(jupyter-collaboration), read and edited through the room's shared Y document, never through
its file (``store.NotebookStore``; the mapping is in the ``store`` module docstring).

``CollabStore(base_url, token)`` keeps one connection per room for its life (``_collab_room``:
a background event-loop thread; :meth:`CollabStore.close` or ``with`` ends them). A read is the
room's document (``YNotebook.get()``) and its :class:`CollabVersion`. A commit is one
``ydoc.transaction()`` under the room's lock: the cells and the revs the operations carry are
checked against the live cells first (``apply_ops`` on the cells' type and source; a metadata
write needs only its cell in place; a conflict changes nothing), then the operations are
applied to the shared cells (a source as a minimal diff of its text,
``YNotebook.set_cell(source=...)``, so a person's cursor keeps its place), and the commit
returns once the room's server acknowledged the update (``Room.flush``). The server saves the
file; this store never writes it. Undo records are kept on this machine (a ``SnapshotStore``
keyed by the ref, holding the cell-level records only); the lock is that stack's advisory lock
(one writer of a notebook at a time on this machine: other writers are kept apart by the rev
checks inside the transaction).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._collab_room import LoopThread, Room
from jupyter_jcli.notebook.snapshots import LOCK_TIMEOUT, SnapshotStore
from jupyter_jcli.notebook.store import (
    CellOp,
    DeleteCell,
    InsertCell,
    KernelPlace,
    MoveCell,
    NotebookRef,
    SetMetadata,
    SetSource,
    StoreChange,
    StoreRead,
    UndoEntry,
    apply_ops,
    rev_of,
    stale_version_error,
)

if TYPE_CHECKING:
    from jupyter_jcli.notebook._collab_outputs import LiveRoomCell

__all__ = ["CollabStore", "CollabVersion"]


@dataclass(frozen=True)
class CollabVersion:
    """The version of a live notebook: the room's document generation (a fresh join after a
    server restart is a new one) and digests of every cell's id and rev in order. A person's
    edit of any cell's source, an inserted, deleted or moved cell change it; outputs,
    metadata and the execution state (which a running cell changes many times a second) do
    not, so a write of outputs never waits on them. A commit needs only the same cells
    (:meth:`same_cells`): the revs of the cells it changes are checked one by one, and a
    person's typing in another cell is merged by the room (never lost, never a conflict)."""

    generation: int
    structure: str
    """A digest of the cells' ids in order."""
    digest: str
    """A digest of the cells' ids and revs in order."""

    def same_cells(self, other: object) -> bool:
        """Whether ``other`` has the same cells in the same order in the same document (a
        change of another cell's source is merged by the room, not a conflict)."""
        return (
            isinstance(other, CollabVersion)
            and other.generation == self.generation
            and other.structure == self.structure
        )


class CollabStore:
    """Notebooks of one Jupyter Server's collaboration rooms (module docstring).

    Args:
        base_url: the server's base URL, e.g. ``http://127.0.0.1:8888/``.
        token: the server's token (sent as ``Authorization: token ...``), or ``None``.
        timeout: the longest wait, in seconds, of every step (session request, join, sync,
            the acknowledgement of a commit).

    Its refs are ``NotebookRef("collab", "<server path>", location=base_url)``
    (:meth:`ref`).
    """

    kind = "collab"

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        base_dir: Path | None = None,
    ) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.token = token
        self.timeout = timeout
        self._base_dir = base_dir
        self._loop: LoopThread | None = None
        self._rooms: dict[str, Room] = {}

    # ------------------------------------------------------------------ life

    def ref(self, path: str) -> NotebookRef:
        """The ref of the notebook at server path ``path`` (``/``-separated, relative to the
        server's root)."""
        return NotebookRef(self.kind, path.strip("/"), location=self.base_url)

    def room(self, ref: NotebookRef) -> Room:
        """The open room of ``ref`` (joined on first use; the server opens the notebook's
        room if nobody has it open). A room kept from an earlier use is checked against the
        path first (``Room.file_path_now``): a notebook deleted since is ``FILE_NOT_FOUND`` (its
        room is left), never edited where nothing saves it; one renamed since is still this
        room (a run goes on into it, the server saving it at its new path); a new file at the
        path gets its own room.

        Raises:
            NotebookError: ``COLLAB_UNAVAILABLE``, ``FILE_NOT_FOUND``,
                ``COLLAB_VERSION_MISMATCH``, ``SERVER_AUTH_FAILED``, ``SERVER_UNREACHABLE``.
        """
        path = self._path(ref)
        room = self._rooms.get(path)
        if room is not None:  # kept open: is its file still at the path?
            room.wait_synced()
            now = room.file_path_now()
            if now != path and (now is None or room.path_has_file()):
                # Deleted (nothing would save what is written into its room), or another
                # file took the path: that file's room, or FILE_NOT_FOUND when there is none.
                self._forget(path)
                room = None
            # else: there, or renamed: the same notebook, saved at its new path
        if room is None:
            if self._loop is None:
                self._loop = LoopThread()
            room = Room(self._loop, self.base_url, self.token, path, self.timeout)
            try:
                room.open()
            except BaseException:
                room.close()
                raise
            self._rooms[path] = room
        room.wait_synced()
        return room

    def _forget(self, path: str) -> None:
        """Leave the room kept for ``path`` (its file is no longer there)."""
        room = self._rooms.pop(path, None)
        if room is not None:
            room.close()

    def close(self) -> None:
        """Leave every room and stop the background thread (bounded)."""
        for room in self._rooms.values():
            room.close()
        self._rooms.clear()
        if self._loop is not None:
            self._loop.stop()
            self._loop = None

    def __enter__(self) -> CollabStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # ------------------------------------------------------------------ the protocol

    def read(self, ref: NotebookRef) -> StoreRead:
        """The live notebook (what the people in the room see, saved or not) and its
        :class:`CollabVersion`. Writes nothing.

        Raises:
            NotebookError: the codes of :meth:`room`.
        """
        return _read(self.room(ref))

    def commit(self, ref: NotebookRef, change: StoreChange) -> StoreRead:
        """See ``store.NotebookStore.commit``: one transaction on the room's document,
        acknowledged by the room's server before it returns.

        Raises:
            NotebookError: ``WRITE_CONFLICT`` (``version_changed``: cells inserted, deleted or
                moved, or a new document since ``change.version``; ``cell_changed``: a
                changed cell's rev differs; nothing applied); ``NOTEBOOK_WRITE_FAILED`` (the
                undo record); ``SERVER_UNREACHABLE``
                (the room did not acknowledge in time: the change is in our copy of the
                document and is sent on a resync, or lost if the server restarted).
        """
        ops, undo, pop = change.ops, change.undo, change.pop
        room = self.room(ref)
        snapshots = self._snapshots(ref)
        pending = None
        if undo is not None and ops:
            pending = snapshots.prepare(undo[0], [], copy.deepcopy(undo[1]))
        try:
            with room.lock:
                light = _light(room)
                if not _version(room, light).same_cells(change.version):
                    raise stale_version_error(ref)
                _check_ops(light, ops, where=str(ref))  # raises, changes nothing
                if ops:
                    with room.doc.transaction(origin="jupyter-jcli"):
                        for op in ops:
                            _apply(room, op)
        except BaseException:
            if pending is not None:
                snapshots.discard(pending)
            raise
        if pending is not None:
            snapshots.commit(pending)
        if pop is not None and pop.handle is not None:
            snapshots.discard(pop.handle)
        if ops:
            room.flush()
        return _read(room)

    def create(self, ref: NotebookRef, notebook: dict[str, Any]) -> StoreRead:
        """Create the notebook through the contents API (``PUT /api/contents/<path>``, never
        replacing one), then join its room.

        Raises:
            NotebookError: ``FILE_EXISTS``; ``NOTEBOOK_WRITE_FAILED`` (the server refused);
                the codes of :meth:`room`.
        """
        import httpx

        from jupyter_jcli.server import ServerConfig, client_options, server_errors

        path = self._path(ref)
        url = f"api/contents/{_quote(path)}"
        server = ServerConfig(self.base_url, self.token)
        with (
            server_errors(f"creating {path}", self.base_url, error=NotebookError),
            httpx.Client(**client_options(server, self.timeout)) as client,
        ):
            if client.get(url, params={"content": "0"}).status_code == 200:
                raise NotebookError(
                    ErrorCode.FILE_EXISTS, f"{ref} already exists.", {"path": str(ref)}
                )
            answer = client.put(
                url, json={"type": "notebook", "format": "json", "content": notebook}
            )
        if answer.status_code not in (200, 201):
            raise NotebookError(
                ErrorCode.NOTEBOOK_WRITE_FAILED,
                f"The Jupyter Server at {self.base_url} refused to create {path} "
                f"(HTTP {answer.status_code}).",
                {"path": str(ref), "status": answer.status_code},
            )
        return self.read(ref)

    @contextmanager
    def lock(self, ref: NotebookRef, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
        """The notebook's advisory write lock on this machine (``SnapshotStore.lock``)."""
        with self._snapshots(ref).lock(timeout):
            yield

    def undo_entries(self, ref: NotebookRef) -> list[UndoEntry]:
        """The notebook's undo records on this machine, oldest first. Creates nothing."""
        return self._snapshots(ref).undo_entries()

    def kernel_place(self, ref: NotebookRef) -> KernelPlace:
        """A kernel on the server, started in the notebook's server folder."""
        path = self._path(ref)
        return KernelPlace("server", url=self.base_url, cwd=path.rpartition("/")[0])

    def live_outputs(
        self,
        ref: NotebookRef,
        cell_id: str | None,
        *,
        index: int | None = None,
        rev: str | None = None,
    ) -> LiveRoomCell | None:
        """The sink writing a running cell's outputs into the live cell
        (``notebook.live.LiveCell``, ``_collab_outputs``); entering it raises
        ``CELL_NOT_FOUND`` when no live code cell has that id.

        A notebook before nbformat 4.5 shows its cells without ids, but the room gives every
        cell one (``YNotebook.create_ycell``) and drops it on read: without ``cell_id`` the
        cell at ``index`` is taken by its room id. Either way, when the cell's rev is no
        longer ``rev`` (a person changed it after the run read it: the run executes the
        source it read), the answer is ``None``: nothing is streamed over what the person's
        cell shows now (their outputs), and the final outputs are committed by rev, as for
        every store (refused: ``cell_changed``).

        Raises:
            NotebookError: the codes of :meth:`room`.
        """
        from jupyter_jcli.notebook._collab_outputs import LiveRoomCell

        room = self.room(ref)
        if cell_id is None:
            cell_id = _room_id_at(room, index, rev)
            if cell_id is None:
                return None
        elif rev is not None and _room_rev_of(room, cell_id) not in (rev, None):
            return None  # changed since the run read it (None: gone, CELL_NOT_FOUND on entry)
        return LiveRoomCell(room, cell_id, where=str(ref))

    # ------------------------------------------------------------------ helpers

    def _path(self, ref: NotebookRef) -> str:
        if ref.store != self.kind or ref.location.rstrip("/") != self.base_url.rstrip("/"):
            raise NotebookError(
                ErrorCode.USAGE_ERROR,
                f"{ref} is not a notebook of the collaborative store at {self.base_url}.",
                {"path": ref.path, "store": ref.store},
            )
        return ref.path.strip("/")

    def _snapshots(self, ref: NotebookRef) -> SnapshotStore:
        return SnapshotStore.keyed(self.ref(self._path(ref)).key, base_dir=self._base_dir)


def _read(room: Room) -> StoreRead:
    """The room's notebook and its :class:`CollabVersion` (``CollabStore.read``)."""
    import orjson
    from jupyter_ydoc.utils import cast_all

    with room.lock:
        cells = room.cells()
        meta: dict[str, Any] = room.notebook._ymeta.to_py() or {}
        cast_all(meta, float, int)  # Y.js numbers are floats
        notebook = {
            "cells": orjson.loads(orjson.dumps(cells)),  # a copy, fast
            "metadata": meta.get("metadata", {}),
            "nbformat": int(meta.get("nbformat", 4)),
            "nbformat_minor": int(meta.get("nbformat_minor", 5)),
        }
        version = _version(room, _light(room))
    return StoreRead(notebook, version)


def _room_rev_of(room: Room, cell_id: str) -> str | None:
    """The rev of the live cell whose id is ``cell_id``, or ``None`` when there is none."""
    with room.lock:
        ycells = room.notebook.ycells
        for position in range(len(ycells)):
            ycell = ycells[position]
            if ycell.get("id") == cell_id:
                return _ycell_rev(ycell)
    return None


def _ycell_rev(ycell: Any) -> str:
    return rev_of({"cell_type": ycell.get("cell_type"), "source": str(ycell.get("source", ""))})


def _room_id_at(room: Room, index: int | None, rev: str | None) -> str | None:
    """The room's id of the cell at ``index`` if its rev is ``rev``, else ``None``."""
    if index is None or rev is None:
        return None
    with room.lock:
        ycells = room.notebook.ycells
        if not 0 <= index < len(ycells):
            return None
        ycell = ycells[index]
        found = ycell.get("id")
        return found if isinstance(found, str) and _ycell_rev(ycell) == rev else None


def _quote(path: str) -> str:
    from urllib.parse import quote

    return quote(path)


def _light(room: Room) -> list[dict[str, Any]]:
    """Each live cell's id, type and source (what revs and the version are made of)."""
    return [
        {"id": cell.get("id"), "cell_type": cell.get("cell_type"), "source": cell.get("source")}
        for cell in room.cells()
    ]


def _version(room: Room, light: list[dict[str, Any]]) -> CollabVersion:
    structure, digest = hashlib.sha256(), hashlib.sha256()
    for cell in light:
        structure.update(f"{cell['id']}\n".encode("utf-8", "surrogatepass"))
        digest.update(f"{cell['id']}\0{rev_of(cell)}\n".encode("utf-8", "surrogatepass"))
    return CollabVersion(room.generation, structure.hexdigest(), digest.hexdigest())


def _check_ops(light: list[dict[str, Any]], ops: Sequence[CellOp], *, where: str) -> None:
    """The rev checks of ``apply_ops``, operation by operation on the live cells, except
    that a metadata write (cell names, dependency caches) needs only its cell in place: the
    person's typing in that cell is no conflict for it (the cells are the ones read, in the
    same order: ``CollabVersion.same_cells``).

    Raises:
        NotebookError: ``WRITE_CONFLICT`` (``cell_changed``).
    """
    work = light
    for op in ops:
        if isinstance(op, SetMetadata):
            if not 0 <= op.index < len(work):
                apply_ops(work, [op], where=where)  # raises the out-of-range conflict
            continue
        work, _origins = apply_ops(work, [op], where=where)


def _apply(room: Room, op: CellOp) -> None:
    """One operation on the shared cells (inside the commit's transaction)."""
    from jupyter_ydoc.utils import cast_all
    from pycrdt import Map

    notebook = room.notebook
    ycells = notebook.ycells
    if isinstance(op, InsertCell):
        cell = copy.deepcopy(op.cell)
        cast_all(cell, int, float)  # Y.js numbers are floats (jupyter-ydoc's convention)
        ycells.insert(op.index, notebook.create_ycell(cell))
    elif isinstance(op, DeleteCell):
        del ycells[op.index]
    elif isinstance(op, MoveCell):
        # Delete and insert again, as jupyter-ydoc does: Y.js 13 (JupyterLab) has no move.
        cell = notebook.get_cell(op.index)
        cast_all(cell, int, float)
        del ycells[op.index]
        ycells.insert(op.to, notebook.create_ycell(cell))
    elif isinstance(op, SetSource):
        source = op.source if isinstance(op.source, str) else "".join(op.source)
        notebook.set_cell(op.index, source=source)
    elif isinstance(op, SetMetadata):
        ycell = ycells[op.index]
        ymeta = ycell.get("metadata")
        if not isinstance(ymeta, Map):
            ycell["metadata"] = Map(copy.deepcopy(op.metadata))
            return
        for key in [key for key in ymeta.keys() if key not in op.metadata]:  # noqa: SIM118
            del ymeta[key]
        for key, value in op.metadata.items():
            if ymeta.get(key) != value:
                ymeta[key] = copy.deepcopy(value)
    else:
        from jupyter_jcli.notebook._collab_outputs import same_outputs, youtput

        ycell = ycells[op.index]
        youtputs = ycell.get("outputs")
        outputs = list(op.outputs)
        if youtputs is None or not hasattr(youtputs, "extend"):
            from pycrdt import Array

            ycell["outputs"] = Array([youtput(output) for output in outputs])
        elif not same_outputs(youtputs, outputs):  # streamed already: written once
            youtputs.clear()
            youtputs.extend([youtput(output) for output in outputs])
        count = op.execution_count
        value = float(count) if count is not None else None
        if ycell.get("execution_count") != value:
            ycell["execution_count"] = value
