"""Atomic file replacement: a crash leaves the old file or the new one, never half of one.

Recipe: write a temporary file in the target's folder (same filesystem, so the rename is
atomic), flush and ``fsync`` it, give it the target's permission bits, ``os.replace`` it over
the target, then ``fsync`` the folder so the rename itself is durable (POSIX; skipped where
folders cannot be opened, e.g. Windows). A symlink target is followed: the file it points to is
replaced and the link is kept.

Read-only files: replacing a file needs write permission on its folder only, and root passes
every ``os.access`` check, so a plain replace would overwrite a notebook someone made
read-only (``chmod 444``). An existing target whose mode has no write bit for its owner
(``stat.S_IWUSR``) is refused instead (:func:`check_writable`), whoever runs the process.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from jupyter_jcli.errors import ErrorCode, NotebookError

__all__ = ["atomic_write_bytes", "check_writable"]


def check_writable(path: Path) -> None:
    """Refuse to replace an existing file that its owner may not write.

    Decided by the permission bits (``st_mode & S_IWUSR``), not by ``os.access``, which is
    always true for root. A missing file passes (it will be created).

    Args:
        path: the file about to be replaced (a symlink is followed).

    Raises:
        NotebookError: ``NOTEBOOK_WRITE_FAILED`` (details ``path``, ``mode`` as an octal
            string such as ``"0o444"``, ``reason`` ``"read_only"``).
    """
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return
    if not mode & stat.S_IWUSR:
        raise NotebookError(
            ErrorCode.NOTEBOOK_WRITE_FAILED,
            f"{path} is read-only (mode {mode:#o}); make it writable to edit it.",
            {"path": str(path), "mode": f"{mode:#o}", "reason": "read_only"},
        )


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace (or create) ``path`` with ``data`` atomically.

    The new file keeps the old file's permission bits; a new file gets ``0o666`` minus the
    process umask, as ``open()`` would give it.

    Args:
        path: the file to write.
        data: its complete new content.

    Raises:
        NotebookError: ``NOTEBOOK_WRITE_FAILED``: the target is read-only (see
            :func:`check_writable`), or (details ``path``, ``errno``) a step failed; the
            target is then untouched and the temporary file removed.
    """
    target = Path(os.path.realpath(path))
    check_writable(target)
    folder = target.parent
    tmp_name: str | None = None
    try:
        try:
            mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode if mode is not None else 0o666 & ~_umask())
        os.replace(tmp_name, target)
        tmp_name = None
        _fsync_folder(folder)
    except OSError as err:
        raise NotebookError(
            ErrorCode.NOTEBOOK_WRITE_FAILED,
            f"Could not write {target}: {err.strerror or err}.",
            {"path": str(target), "errno": err.errno},
        ) from err
    finally:
        if tmp_name is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name)


def _umask() -> int:
    """The process umask; read from /proc where possible (``os.umask`` briefly changes it)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    current = os.umask(0o022)
    os.umask(current)
    return current


def _fsync_folder(folder: Path) -> None:
    if os.name == "nt":  # pragma: no cover - folders cannot be opened for fsync on Windows
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
