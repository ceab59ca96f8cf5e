"""The files of the undo snapshot store (``snapshots``): private, durable, read safely."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from jupyter_jcli.notebook._open import read_regular

__all__ = ["fsync_folder", "sha256_or_none", "write_private"]

_FILE_MODE = 0o600
"""Snapshot files are private to their owner."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def fsync_folder(folder: Path) -> None:
    """Make a rename or a file creation in the cache ``folder`` durable (POSIX)."""
    if os.name == "nt":  # pragma: no cover - folders cannot be opened for fsync on Windows
        return
    fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_private(path: Path, data: bytes) -> None:
    """Create ``path`` (it must not exist) with mode 0600, write ``data`` and fsync it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, _FILE_MODE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def sha256_or_none(path: Path) -> str | None:
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
