"""Snapshots taken with every mutation, and ``undo`` from them.

Layout (on disk, so undo survives a restart of the process)::

    <cache>/snapshots/<sha256 of the notebook's absolute path>/
        target.txt            the notebook path, for people looking at the folder
        lock                  advisory lock serialising jupyter-jcli writers (POSIX)
        000001/manifest.json  {"operation", "created_ns", "files": [{"path", "blob",
        000001/0.bin            "before_sha256", "after_sha256"}, ...]}
        000001/cells.json     what the mutation changed, cell by cell (``_revert``)
        .pending-*/           a snapshot whose mutation has not finished writing
        pair-agreed           the sha256 of the .ipynb as jupyter-jcli last wrote it with
                                its paired text file (both sides then agree: ``_pairs``)

``<cache>`` is ``$JUPYTER_JCLI_CACHE_DIR`` when set, else
``platformdirs.user_cache_dir("jupyter_mcp")``. The key is the ``.ipynb`` path resolved to an
absolute path without symlinks; a py:percent pair is keyed by its ``.ipynb`` and each snapshot
holds both files. The last :data:`MAX_SNAPSHOTS` snapshots per notebook are kept.

Life of a snapshot, all under the notebook's write lock: :meth:`SnapshotStore.prepare` writes
it (the files' content before the mutation, the sha256 of what they will hold after, the
cell-level record) into a fresh ``.pending-*`` folder; the mutation writes the notebook; only
then :meth:`SnapshotStore.commit` renames the folder to the next number, which makes it the
newest snapshot (a rename is atomic: a snapshot is complete or absent). A mutation that fails
discards it. A process killed in between leaves a pending folder that no listing sees; the
next holder of the lock commits it if every file holds what that mutation wrote (the write
happened) and deletes it otherwise, and the trim after each commit also deletes numbered
folders left without a readable manifest (by older versions). So a killed mutation never
leaves undo stuck on a change that did not happen.

Privacy: a snapshot holds a copy of the notebook, so the folders are created ``0700`` (and
tightened to it when found more open) and every file ``0600``: never readable by other users,
whatever the notebook's own mode.

Reading a stack never creates anything. Undo itself (:func:`undo`, ``Document.undo``) applies
the inverse of the newest snapshot's mutation to the notebook as it is now (see ``_revert``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._exact import loads_exact
from jupyter_jcli.notebook._jsonstyle import JsonStyle, dumps_notebook
from jupyter_jcli.notebook._snapshot_files import fsync_folder, sha256_or_none, write_private

if TYPE_CHECKING:
    from jupyter_jcli.notebook.store import UndoEntry

__all__ = [
    "CACHE_DIR_ENV",
    "LOCK_TIMEOUT",
    "MAX_SNAPSHOTS",
    "PendingSnapshot",
    "Snapshot",
    "SnapshotFile",
    "SnapshotStore",
    "UndoResult",
    "cache_dir",
    "notebook_key_path",
    "undo",
]

CACHE_DIR_ENV = "JUPYTER_JCLI_CACHE_DIR"
"""Environment variable overriding the cache base folder."""

MAX_SNAPSHOTS = 50
"""Snapshots kept per notebook; older ones are deleted."""

LOCK_TIMEOUT = 30.0
"""Longest wait, in seconds, for the notebook's write lock (a writer holds it for one write)."""
_LOCK_POLL = 0.01
_MANIFEST = "manifest.json"
_CELLS = "cells.json"
_PENDING = ".pending-"
_AGREED = "pair-agreed"
_FOLDER_MODE = 0o700
_FILE_MODE = 0o600
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_RECORD_STYLE = JsonStyle(indent=None, sort_keys=False, trailing_newline=False)
"""The record holds cell values: written by the notebook serialiser, so every value a
notebook can hold (lone surrogates included) is stored as it would be in the notebook."""


def cache_dir() -> Path:
    """The cache base folder: ``$JUPYTER_JCLI_CACHE_DIR`` or the platform user cache."""
    override = os.environ.get(CACHE_DIR_ENV)
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("jupyter_mcp"))


def notebook_key_path(path: str | os.PathLike[str]) -> Path:
    """The ``.ipynb`` whose stack holds snapshots for ``path`` (a ``.py`` maps to its pair).

    Raises:
        NotebookError: the codes of ``pairing.find_paired_notebook`` for a ``.py`` path.
    """
    target = Path(path)
    if target.suffix.lower() == ".py":
        from jupyter_jcli.notebook.pairing import find_paired_notebook

        target = find_paired_notebook(target)
    return Path(os.path.realpath(target))


@dataclass(frozen=True)
class SnapshotFile:
    """One file in a snapshot.

    Attributes:
        path: the file, absolute.
        blob: the saved file holding its content before the mutation.
        before_sha256: hex sha256 of that content.
        after_sha256: hex sha256 of what the mutation wrote.
    """

    path: Path
    blob: Path
    before_sha256: str
    after_sha256: str


@dataclass(frozen=True)
class Snapshot:
    """One entry of a notebook's undo stack.

    Attributes:
        seq: position in the stack (grows by one per mutation).
        operation: the mutation it precedes (``"add_cell"``, ``"update_cell"``, ...).
        created_ns: wall-clock creation time, nanoseconds since the epoch.
        files: the files the mutation changed, in write order.
        folder: where the snapshot lives.
    """

    seq: int
    operation: str
    created_ns: int
    files: tuple[SnapshotFile, ...]
    folder: Path

    def content_before(self, entry: SnapshotFile) -> bytes:
        """The saved content of one of its files.

        Raises:
            NotebookError: ``NOTEBOOK_READ_FAILED`` (details ``path``, ``snapshot``).
        """
        try:
            return entry.blob.read_bytes()
        except OSError as err:
            raise NotebookError(
                ErrorCode.NOTEBOOK_READ_FAILED,
                f"The snapshot of {entry.path} in {self.folder} cannot be read.",
                {"path": str(entry.path), "snapshot": str(self.folder)},
            ) from err

    def record(self) -> dict[str, Any] | None:
        """The cell-level record of the mutation (``_revert.record_mutation``), or ``None``
        for a snapshot written without one (older versions) or unreadable."""
        try:
            record = loads_exact((self.folder / _CELLS).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) and record.get("format") == 1 else None


@dataclass(frozen=True)
class PendingSnapshot:
    """A snapshot written for a mutation that has not finished writing (not on the stack).

    Attributes:
        operation: the mutation.
        folder: its ``.pending-*`` folder.
    """

    operation: str
    folder: Path


@dataclass(frozen=True)
class UndoResult:
    """What an undo did.

    Attributes:
        operation: the undone mutation.
        restored: the files written back, in write order (empty when the notebook already
            held what the undo would write).
        forced: whether changes made since that conflicted were overwritten (``force``).
        remaining: snapshots left on the stack.
        merged: the notebook had changed since the mutation (outputs of a run, other edits)
            and the undo reverted only what the mutation changed, keeping the rest; ``False``
            when the files still held exactly what the mutation wrote and were restored.
        changed: current names of the cells the undo changed, moved, put back or removed.
        conflicts: with ``force``, the changes made since that were overwritten
            (``{"cell", "reason", "fields"}``, see ``_revert.Conflict``).
        renamed: ``(name before the undo, name after it)`` of each cell whose rename the
            undo reverted (the same cell: it keeps its run status).
    """

    operation: str
    restored: tuple[Path, ...]
    forced: bool
    remaining: int
    merged: bool = False
    changed: tuple[str, ...] = ()
    conflicts: tuple[dict[str, Any], ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()


class SnapshotStore:
    """The on-disk undo stack of one notebook.

    Args:
        notebook_path: the ``.ipynb`` (for a pair, the paired ``.ipynb``).
        base_dir: cache base folder; default :func:`cache_dir`.
    """

    def __init__(self, notebook_path: Path, *, base_dir: Path | None = None) -> None:
        self.notebook_path = Path(os.path.realpath(notebook_path))
        self._target = str(self.notebook_path)
        key = hashlib.sha256(self._target.encode("utf-8", "surrogatepass"))
        self.base_dir = base_dir or cache_dir()
        self.folder = self.base_dir / "snapshots" / key.hexdigest()

    @classmethod
    def keyed(
        cls, key: str, name: str | None = None, *, base_dir: Path | None = None
    ) -> SnapshotStore:
        """The stack of a notebook that is no file on this machine (a server's notebook),
        named by ``key`` (``store.NotebookRef.key``; kept in ``target.txt``) and called
        ``name`` in messages (default ``key``). Its snapshots hold no file, only the
        cell-level record; a pending one left by a killed writer is deleted (whether that
        write happened cannot be told from here, and a lost record is better than a record
        of nothing)."""
        name = key if name is None else name
        store = cls(Path(name), base_dir=base_dir)
        store.notebook_path = Path(name)
        store._target = key
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        store.folder = store.base_dir / "snapshots" / digest
        return store

    @contextlib.contextmanager
    def lock(self, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
        """Hold the notebook's advisory write lock (creates the stack folder), after settling
        what a killed writer left (module docstring).

        Args:
            timeout: longest wait for the lock, seconds (default :data:`LOCK_TIMEOUT`).

        Raises:
            NotebookError: ``WRITE_CONFLICT`` (details ``reason: "lock_timeout"``, ``path``,
                ``timeout_s``) when another writer holds the lock for ``timeout`` seconds;
                nothing was written.
        """
        self._ensure_folder()
        fd = os.open(self.folder / "lock", os.O_RDWR | os.O_CREAT | _NOFOLLOW, _FILE_MODE)
        with os.fdopen(fd, "r+b") as handle:
            try:
                import fcntl
            except ImportError:  # pragma: no cover - Windows: no advisory lock, no recovery
                yield
                return
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise NotebookError(
                            ErrorCode.WRITE_CONFLICT,
                            f"another jupyter-jcli writer held {self.notebook_path.name}'s write"
                            f" lock for {timeout:g} s; nothing was changed: try again",
                            {
                                "path": str(self.notebook_path),
                                "reason": "lock_timeout",
                                "timeout_s": timeout,
                            },
                        ) from None
                    time.sleep(_LOCK_POLL)
            try:
                self._settle_pending()
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def snapshots(self) -> list[Snapshot]:
        """Every complete snapshot, oldest first. Creates nothing."""
        if not self.folder.is_dir():
            return []
        found: list[Snapshot] = []
        for entry in self.folder.iterdir():
            if entry.name.isdigit() and (entry / _MANIFEST).is_file():
                snapshot = _read_manifest(entry)
                if snapshot is not None:
                    found.append(snapshot)
        return sorted(found, key=lambda snapshot: snapshot.seq)

    def undo_entries(self) -> list[UndoEntry]:
        """Every complete snapshot, oldest first, as a store's undo records
        (``store.NotebookStore.undo_entries``; the snapshot is the record's handle). Creates
        nothing."""
        from jupyter_jcli.notebook.store import UndoEntry

        return [
            UndoEntry(snapshot.operation, snapshot.record(), snapshot)
            for snapshot in self.snapshots()
        ]

    def agreed_pair(self) -> str | None:
        """The sha256 (hex) of the ``.ipynb`` as jupyter-jcli last wrote it together with its
        paired text file (:meth:`record_agreed_pair`), or ``None``. Creates nothing."""
        try:
            raw = (self.folder / _AGREED).read_bytes()
        except OSError:
            return None
        text = raw.decode("ascii", "replace").strip()
        return text if len(text) == 64 else None

    def record_agreed_pair(self, sha256: str) -> None:
        """Record that the ``.ipynb`` holding ``sha256`` was just written with its paired text
        file, both from one model (call under :meth:`lock`; atomic; a failure only loses
        the record, which makes a later write on differing sides refuse rather than guess)."""
        pending = self.folder / f".{_AGREED}-{os.getpid()}-{time.time_ns()}"
        with contextlib.suppress(OSError):
            write_private(pending, sha256.encode("ascii") + b"\n")
            os.replace(pending, self.folder / _AGREED)
        with contextlib.suppress(OSError):
            pending.unlink(missing_ok=True)

    def is_empty(self) -> bool:
        """No snapshot, complete or pending (a pending one may become current under the
        lock, see the module docstring). Creates nothing."""
        if not self.folder.is_dir():
            return True
        return not any(
            entry.name.startswith(_PENDING) or (entry.name.isdigit() and entry.is_dir())
            for entry in self.folder.iterdir()
        )

    def prepare(
        self,
        operation: str,
        files: Sequence[tuple[Path, bytes, bytes]],
        record: dict[str, Any] | None = None,
    ) -> PendingSnapshot:
        """Save the files' current content before a mutation, as a pending snapshot.

        Call it holding :meth:`lock`; then write the files and :meth:`commit` (or
        :meth:`discard` if the write failed).

        Args:
            operation: the mutation's name.
            files: ``(path, content before, content after)`` per file, in write order.
            record: what the mutation changes, cell by cell (``_revert.record_mutation``).

        Raises:
            NotebookError: ``NOTEBOOK_WRITE_FAILED`` (details ``path``, ``errno``) if the
                snapshot cannot be saved (the mutation must then not happen); nothing is left.
        """
        folder: Path | None = None
        try:
            self._ensure_folder()
            folder = Path(tempfile.mkdtemp(prefix=_PENDING, dir=self.folder))
            entries = []
            for index, (path, before, after) in enumerate(files):
                write_private(folder / f"{index}.bin", before)
                entries.append(
                    {
                        "path": str(path),
                        "blob": f"{index}.bin",
                        "before_sha256": hashlib.sha256(before).hexdigest(),
                        "after_sha256": hashlib.sha256(after).hexdigest(),
                    }
                )
            if record is not None:
                write_private(folder / _CELLS, dumps_notebook(record, _RECORD_STYLE))
            manifest = {"operation": operation, "created_ns": time.time_ns(), "files": entries}
            write_private(folder / _MANIFEST, json.dumps(manifest, indent=1).encode())
            fsync_folder(folder)
        except (OSError, ValueError, TypeError) as err:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            errno = err.errno if isinstance(err, OSError) else None
            raise NotebookError(
                ErrorCode.NOTEBOOK_WRITE_FAILED,
                f"Could not save a snapshot under {self.folder}: {err}.",
                {"path": str(self.folder), "errno": errno},
            ) from err
        return PendingSnapshot(operation=operation, folder=folder)

    def commit(self, pending: PendingSnapshot) -> Snapshot:
        """Make a pending snapshot the newest one (its mutation was written), then trim.

        Raises:
            NotebookError: ``NOTEBOOK_WRITE_FAILED`` when the folder cannot be renamed (the
                pending folder is then removed).
        """
        existing = self.snapshots()
        seq = (existing[-1].seq if existing else 0) + 1
        try:
            while True:  # bounded: numbered folders without a manifest are skipped once each
                target = self.folder / f"{seq:06d}"
                try:
                    os.rename(pending.folder, target)
                    break
                except OSError:
                    if not target.exists():
                        raise
                    seq += 1
            fsync_folder(self.folder)
        except OSError as err:
            shutil.rmtree(pending.folder, ignore_errors=True)
            raise NotebookError(
                ErrorCode.NOTEBOOK_WRITE_FAILED,
                f"Could not record the snapshot under {self.folder}: {err.strerror or err}.",
                {"path": str(self.folder), "errno": err.errno},
            ) from err
        snapshot = _read_manifest(target)
        assert snapshot is not None
        self._trim()
        return snapshot

    def discard(self, snapshot: Snapshot | PendingSnapshot) -> None:
        """Delete a snapshot (its mutation did not happen, or it was undone)."""
        with contextlib.suppress(OSError):
            (snapshot.folder / _MANIFEST).unlink()
        shutil.rmtree(snapshot.folder, ignore_errors=True)

    def _trim(self) -> None:
        """Keep the newest :data:`MAX_SNAPSHOTS`; delete numbered folders without a readable
        manifest (a snapshot an older version did not finish). Holding the lock."""
        complete = {snapshot.folder.name for snapshot in self.snapshots()}
        for entry in list(self.folder.iterdir()):
            if entry.name.isdigit() and entry.name not in complete and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
        for old in self.snapshots()[:-MAX_SNAPSHOTS]:
            shutil.rmtree(old.folder, ignore_errors=True)

    def _settle_pending(self) -> None:
        """Holding the lock, every pending folder is a killed writer's: commit it when each
        of its files holds what that mutation wrote, else delete it."""
        for entry in sorted(self.folder.iterdir()):
            if not entry.name.startswith(_PENDING) or not entry.is_dir():
                continue
            snapshot = _read_manifest(entry, seq=0)
            written = (
                snapshot is not None
                and bool(snapshot.files)
                and all(sha256_or_none(item.path) == item.after_sha256 for item in snapshot.files)
            )
            if snapshot is not None and written:
                with contextlib.suppress(NotebookError):
                    self.commit(PendingSnapshot(snapshot.operation, entry))
                    continue
            shutil.rmtree(entry, ignore_errors=True)

    def _ensure_folder(self) -> None:
        self.base_dir.mkdir(parents=True, exist_ok=True, mode=_FOLDER_MODE)
        for folder in (self.folder.parent, self.folder):
            try:
                folder.mkdir(mode=_FOLDER_MODE)
            except FileExistsError:
                info = folder.stat()
                if stat.S_IMODE(info.st_mode) & 0o077 and info.st_uid == os.geteuid():
                    os.chmod(folder, _FOLDER_MODE)
        target = self.folder / "target.txt"
        if not target.exists():
            with contextlib.suppress(FileExistsError):
                write_private(target, os.fsencode(self._target) + b"\n")


def undo(
    path: str | os.PathLike[str], *, force: bool = False, base_dir: Path | None = None
) -> UndoResult:
    """Undo the newest mutation of a notebook (``.ipynb`` or paired ``.py``) and pop it.

    The same as ``Document.load(path, cache_dir=base_dir).undo(force=force)``; see there.
    """
    from jupyter_jcli.notebook.document import Document

    return Document.load(path, cache_dir=base_dir).undo(force=force)


def _read_manifest(folder: Path, *, seq: int | None = None) -> Snapshot | None:
    try:
        manifest = json.loads((folder / _MANIFEST).read_text(encoding="utf-8"))
        files = tuple(
            SnapshotFile(
                path=Path(entry["path"]),
                blob=folder / entry["blob"],
                before_sha256=entry["before_sha256"],
                after_sha256=entry["after_sha256"],
            )
            for entry in manifest["files"]
        )
        return Snapshot(
            seq=int(folder.name) if seq is None else seq,
            operation=str(manifest["operation"]),
            created_ns=int(manifest["created_ns"]),
            files=files,
            folder=folder,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
