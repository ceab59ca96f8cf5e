"""Snapshots taken before every mutation, and ``undo`` from them.

Layout (on disk, so undo survives a restart of the process)::

    <cache>/snapshots/<sha256 of the notebook's absolute path>/
        target.txt            the notebook path, for people looking at the folder
        lock                  advisory lock serialising jupyter-jcli writers (POSIX)
        000001/manifest.json  {"operation", "created_ns", "files": [{"path", "blob",
        000001/0.bin            "before_sha256", "after_sha256"}, ...]}

``<cache>`` is ``$JUPYTER_JCLI_CACHE_DIR`` when set, else
``platformdirs.user_cache_dir("jupyter_mcp")``. The key is the ``.ipynb`` path resolved to an
absolute path without symlinks; a py:percent pair is keyed by its ``.ipynb`` and each snapshot
holds both files. The last :data:`MAX_SNAPSHOTS` snapshots per notebook are kept.

A snapshot is written *before* the files change and records the sha256 of what each file
will contain after the mutation; :func:`undo` uses it to refuse (``UNDO_CONFLICT``) when a
file was changed outside since that mutation. Reading a stack never creates anything.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._atomic import atomic_write_bytes, check_writable
from jupyter_jcli.notebook._open import UNCONFINED, read_regular

__all__ = [
    "CACHE_DIR_ENV",
    "MAX_SNAPSHOTS",
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

_MANIFEST = "manifest.json"


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


@dataclass(frozen=True)
class UndoResult:
    """What :func:`undo` restored.

    Attributes:
        operation: the undone mutation.
        restored: the files written back, in write order.
        forced: whether outside changes were overwritten (``force=True``).
        remaining: snapshots left on the stack.
    """

    operation: str
    restored: tuple[Path, ...]
    forced: bool
    remaining: int


class SnapshotStore:
    """The on-disk undo stack of one notebook.

    Args:
        notebook_path: the ``.ipynb`` (for a pair, the paired ``.ipynb``).
        base_dir: cache base folder; default :func:`cache_dir`.
    """

    def __init__(self, notebook_path: Path, *, base_dir: Path | None = None) -> None:
        self.notebook_path = Path(os.path.realpath(notebook_path))
        key = hashlib.sha256(str(self.notebook_path).encode("utf-8", "surrogatepass"))
        self.folder = (base_dir or cache_dir()) / "snapshots" / key.hexdigest()

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the notebook's advisory write lock (creates the stack folder)."""
        self._ensure_folder()
        with open(self.folder / "lock", "a+b") as handle:
            try:
                import fcntl
            except ImportError:  # pragma: no cover - Windows: no advisory lock
                yield
                return
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
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

    def push(self, operation: str, files: Sequence[tuple[Path, bytes, bytes]]) -> Snapshot:
        """Save the files' current content before a mutation, then trim the stack.

        Args:
            operation: the mutation's name.
            files: ``(path, content before, content after)`` per file, in write order.

        Returns:
            The new snapshot.

        Raises:
            NotebookError: ``NOTEBOOK_WRITE_FAILED`` if the snapshot cannot be saved (the
                mutation must then not happen).
        """
        folder: Path | None = None
        try:
            self._ensure_folder()
            existing = self.snapshots()
            seq = (existing[-1].seq if existing else 0) + 1
            while True:  # bounded by concurrent writers, who hold the lock anyway
                folder = self.folder / f"{seq:06d}"
                try:
                    folder.mkdir()
                    break
                except FileExistsError:
                    seq += 1
            entries = []
            for index, (path, before, after) in enumerate(files):
                blob = folder / f"{index}.bin"
                atomic_write_bytes(blob, before, confine=UNCONFINED)
                entries.append(
                    {
                        "path": str(path),
                        "blob": blob.name,
                        "before_sha256": hashlib.sha256(before).hexdigest(),
                        "after_sha256": hashlib.sha256(after).hexdigest(),
                    }
                )
            manifest = {"operation": operation, "created_ns": time.time_ns(), "files": entries}
            atomic_write_bytes(
                folder / _MANIFEST, json.dumps(manifest, indent=1).encode(), confine=UNCONFINED
            )
        except (OSError, NotebookError) as err:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
            if isinstance(err, NotebookError):
                raise
            raise NotebookError(
                ErrorCode.NOTEBOOK_WRITE_FAILED,
                f"Could not save a snapshot under {self.folder}: {err.strerror or err}.",
                {"path": str(self.folder), "errno": err.errno},
            ) from err
        snapshot = _read_manifest(folder)
        assert snapshot is not None
        for old in [*existing, snapshot][:-MAX_SNAPSHOTS]:
            shutil.rmtree(old.folder, ignore_errors=True)
        return snapshot

    def amend_newest(self, files: Sequence[tuple[Path, bytes, bytes]]) -> bool:
        """Record a write that is not a mutation (a cache write) on top of the newest snapshot.

        For each ``(path, content before, content after)`` whose content before is what the
        newest snapshot's mutation wrote, the snapshot now expects the content after, so that
        :func:`undo` still applies (and restores the content before that mutation, dropping the
        cache write with it). Call it holding :meth:`lock`, after the write.

        Returns:
            Whether the newest snapshot was changed. ``False`` also when its manifest cannot
            be read or rewritten: undo then refuses with ``UNDO_CONFLICT``, the safe side.
        """
        stack = self.snapshots()
        if not stack:
            return False
        newest = stack[-1]
        moved = {
            (str(path), hashlib.sha256(before).hexdigest()): hashlib.sha256(after).hexdigest()
            for path, before, after in files
        }
        try:
            manifest = json.loads((newest.folder / _MANIFEST).read_text(encoding="utf-8"))
            changed = False
            for entry in manifest["files"]:
                after_sha256 = moved.get((entry["path"], entry["after_sha256"]))
                if after_sha256 is not None:
                    entry["after_sha256"] = after_sha256
                    changed = True
            if changed:
                data = json.dumps(manifest, indent=1).encode()
                atomic_write_bytes(newest.folder / _MANIFEST, data, confine=UNCONFINED)
        except (OSError, ValueError, KeyError, TypeError, NotebookError):
            return False
        return changed

    def discard(self, snapshot: Snapshot) -> None:
        """Delete ``snapshot`` (its mutation did not happen, or it was undone)."""
        with contextlib.suppress(OSError):
            (snapshot.folder / _MANIFEST).unlink()
        shutil.rmtree(snapshot.folder, ignore_errors=True)

    def _ensure_folder(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / "target.txt"
        if not target.exists():
            target.write_text(str(self.notebook_path) + "\n", encoding="utf-8")


def undo(
    path: str | os.PathLike[str], *, force: bool = False, base_dir: Path | None = None
) -> UndoResult:
    """Restore the newest snapshot of a notebook (``.ipynb`` or paired ``.py``) and pop it.

    Each file is restored atomically (``.ipynb`` before ``.py``, as they were written).

    Args:
        path: the notebook or its paired py:percent file.
        force: restore even if a file changed outside since the mutation being undone.
        base_dir: cache base folder; default :func:`cache_dir`.

    Returns:
        What was restored.

    Raises:
        NotebookError: ``UNDO_EMPTY`` when there is nothing to undo; ``UNDO_CONFLICT``
            (details ``path``, ``expected_sha256``, ``actual_sha256``) when a file no longer
            holds what the mutation wrote and ``force`` is false; ``NOTEBOOK_READ_FAILED``
            when the snapshot's saved content cannot be read; ``NOTEBOOK_WRITE_FAILED``
            (details ``mode`` when a file is read-only: nothing is restored, the snapshot
            is kept).
    """
    key = notebook_key_path(path)
    store = SnapshotStore(key, base_dir=base_dir)
    if not store.snapshots():
        raise NotebookError(ErrorCode.UNDO_EMPTY, f"Nothing to undo for {key}.", {"path": str(key)})
    with store.lock():
        stack = store.snapshots()
        if not stack:
            raise NotebookError(
                ErrorCode.UNDO_EMPTY, f"Nothing to undo for {key}.", {"path": str(key)}
            )
        newest = stack[-1]
        contents: list[tuple[SnapshotFile, bytes]] = []
        for entry in newest.files:
            actual = _sha256_or_none(entry.path)
            if actual != entry.after_sha256 and not force:
                raise NotebookError(
                    ErrorCode.UNDO_CONFLICT,
                    f"{entry.path} was changed outside since the {newest.operation} being "
                    "undone; undo with force to discard that change.",
                    {
                        "path": str(entry.path),
                        "operation": newest.operation,
                        "expected_sha256": entry.after_sha256,
                        "actual_sha256": actual,
                    },
                )
            try:
                contents.append((entry, entry.blob.read_bytes()))
            except OSError as err:
                raise NotebookError(
                    ErrorCode.NOTEBOOK_READ_FAILED,
                    f"The snapshot of {entry.path} in {newest.folder} cannot be read.",
                    {"path": str(entry.path), "snapshot": str(newest.folder)},
                ) from err
        for entry, _content in contents:
            check_writable(entry.path)  # a read-only file: refuse before restoring any
        for entry, content in contents:
            atomic_write_bytes(entry.path, content)  # under the active confinement
        store.discard(newest)
    return UndoResult(
        operation=newest.operation,
        restored=tuple(entry.path for entry in newest.files),
        forced=force,
        remaining=len(stack) - 1,
    )


def _sha256_or_none(path: Path) -> str | None:
    """The digest of a notebook file, read by the one opener (active confinement, regular
    files only, size-bounded); ``None`` when it cannot be opened.

    Raises:
        NotebookError: ``PATH_NOT_ALLOWED``, and ``NOTEBOOK_READ_FAILED`` for a FIFO, a
            device or a file too large (never blocked on).
    """
    try:
        return hashlib.sha256(read_regular(path).raw).hexdigest()
    except OSError:
        return None


def _read_manifest(folder: Path) -> Snapshot | None:
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
            seq=int(folder.name),
            operation=str(manifest["operation"]),
            created_ns=int(manifest["created_ns"]),
            files=files,
            folder=folder,
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
