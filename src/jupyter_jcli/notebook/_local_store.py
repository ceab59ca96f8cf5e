"""The local-file store: a notebook that is a file on this machine (``store.NotebookStore``).

Reading is ``_files.read_target`` (an ``.ipynb``, or a ``.py`` with its paired notebook, read
through the one opener under the active confinement). A commit re-reads the file(s), compares
them with the version the caller read (the sha256 of each file decides; device, inode, size
and ``mtime_ns`` are carried for the caller), applies the cell operations to the lossless
write base of the ``.ipynb`` (``_writebase``: the file's JSON style, untouched cells' bytes
and values kept), renders both files of a pair (``_commit.render_files``) and writes them
through the one write path of a document (``_commit.write_draft``: compare before replace,
atomic, with the undo snapshot prepared before and made current after the write). Undo
records are the notebook's snapshot stack (``snapshots.SnapshotStore``), the lock is its
advisory lock, the kernel runs on this machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._files import FileState, read_target
from jupyter_jcli.notebook._open import Confinement, chosen, confined
from jupyter_jcli.notebook.snapshots import LOCK_TIMEOUT, SnapshotStore
from jupyter_jcli.notebook.store import (
    KernelPlace,
    NotebookRef,
    StoreChange,
    StoreRead,
    UndoEntry,
    apply_ops,
    stale_version_error,
)

__all__ = ["LocalStore", "LocalVersion"]


@dataclass(frozen=True)
class LocalVersion:
    """The version of a local notebook: the sha256 of each of its files (``.ipynb`` first;
    compared), and each file's ``(device, inode, size, mtime_ns)`` (not compared: a touch
    without change is no new version)."""

    sha256: tuple[str, ...]
    identity: tuple[tuple[int, int, int, int], ...] = field(compare=False)

    @classmethod
    def of(cls, files: Sequence[FileState]) -> LocalVersion:
        """The version of files as read."""
        return cls(
            tuple(state.sha256 for state in files),
            tuple(
                (
                    state.info.st_dev if state.info is not None else 0,
                    state.info.st_ino if state.info is not None else 0,
                    state.size,
                    state.mtime_ns,
                )
                for state in files
            ),
        )


class LocalStore:
    """Notebooks that are files on this machine (module docstring).

    Args:
        base_dir: the snapshot cache base folder (undo records, pair agreements); default
            ``snapshots.cache_dir()``.
        confine: the roots every file must lie in; default the active confinement.
    """

    kind = "local"

    def __init__(self, *, base_dir: Path | None = None, confine: Confinement | None = None) -> None:
        self._base_dir = base_dir
        self._confine = chosen(confine)

    def ref(self, path: str | os.PathLike[str]) -> NotebookRef:
        """The ref of the file at ``path``."""
        return NotebookRef.local(os.fspath(path))

    def read(self, ref: NotebookRef) -> StoreRead:
        """The notebook (a pair's combination for a ``.py``) and its :class:`LocalVersion`.

        Raises:
            NotebookError: the read codes of ``Document.load``.
        """
        notebook, files, _pair, _refusal = read_target(
            self._path(ref), confine=self._confine, base_dir=self._base_dir
        )
        return StoreRead(notebook, LocalVersion.of(files))

    def commit(self, ref: NotebookRef, change: StoreChange) -> StoreRead:
        """See ``store.NotebookStore.commit``; also the refusals of a write of the content
        (``PAIR_OUT_OF_SYNC``, a read-only file's ``NOTEBOOK_WRITE_FAILED``)."""
        from jupyter_jcli.notebook._commit import Draft, render_files, write_draft
        from jupyter_jcli.notebook._writebase import write_base

        path = self._path(ref)
        with confined(self._confine):
            notebook, files, pair, refusal = read_target(path, base_dir=self._base_dir)
            if LocalVersion.of(files) != change.version:
                raise stale_version_error(ref)
            if refusal is not None:
                raise NotebookError(refusal.code, refusal.message, refusal.details)
            base = write_base(files[0].raw, files[0].path, notebook, paired=pair is not None)
            cells, origins = apply_ops(base.cells, change.ops, where=str(ref))
            outputs = render_files(base, notebook, pair, cells, origins)
            changed = [
                (state.path, state.raw, data)
                for state, data in zip(files, outputs, strict=True)
                if state.raw != data
            ]
            draft: Draft[None] = Draft(
                None,
                changed,
                outputs,
                record=change.undo[1] if change.undo is not None else None,
                pops=change.pop.handle if change.pop is not None else None,
            )
            operation = change.undo[0] if change.undo is not None else None
            write_draft(self._snapshots(ref), draft, operation)
            if changed and pair is not None and pair.out_of_sync is None:
                self._snapshots(ref).record_agreed_pair(_sha256(outputs[0]))
        return self.read(ref)

    def create(self, ref: NotebookRef, notebook: dict[str, Any]) -> StoreRead:
        """Create the file holding ``notebook`` (nbformat's JSON), never replacing one.

        Raises:
            NotebookError: ``FILE_EXISTS``; ``NOTEBOOK_WRITE_FAILED``; ``PATH_NOT_ALLOWED``.
        """
        import nbformat

        from jupyter_jcli.notebook.io import create_file

        path = self._path(ref)
        text: str = nbformat.writes(nbformat.from_dict(notebook))  # type: ignore[no-untyped-call]
        data = (text if text.endswith("\n") else text + "\n").encode("utf-8", "surrogatepass")
        try:
            with confined(self._confine):
                create_file(path, data)
        except FileExistsError:
            raise NotebookError(
                ErrorCode.FILE_EXISTS, f"{path} already exists.", {"path": str(path)}
            ) from None
        return self.read(ref)

    @contextmanager
    def lock(self, ref: NotebookRef, timeout: float = LOCK_TIMEOUT) -> Iterator[None]:
        """The notebook's advisory write lock (``SnapshotStore.lock``), shared with every
        process that writes it through jupyter-jcli."""
        with confined(self._confine), self._snapshots(ref).lock(timeout):
            yield

    def undo_entries(self, ref: NotebookRef) -> list[UndoEntry]:
        """The notebook's snapshots, oldest first, as undo records."""
        return self._snapshots(ref).undo_entries()

    def kernel_place(self, ref: NotebookRef) -> KernelPlace:
        """A kernel on this machine, started in the notebook's folder."""
        return KernelPlace("local", cwd=str(self._path(ref).parent))

    def _path(self, ref: NotebookRef) -> Path:
        path = ref.local_path
        if path is None:
            raise NotebookError(
                ErrorCode.USAGE_ERROR,
                f"{ref} is not a notebook of the local store.",
                {"path": ref.path, "store": ref.store},
            )
        return path

    def _snapshots(self, ref: NotebookRef) -> SnapshotStore:
        from jupyter_jcli.notebook.snapshots import notebook_key_path

        with confined(self._confine):
            return SnapshotStore(notebook_key_path(self._path(ref)), base_dir=self._base_dir)


def _sha256(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
