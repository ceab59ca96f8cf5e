"""Reading an open file descriptor: regular files only, size-bounded (``notebook._open``).

What :mod:`jupyter_jcli.notebook._open` does once it holds a descriptor: check on ``fstat``
that it is a regular file (a FIFO, a device, a socket is refused, never blocked on), and read
or compare at most a given number of bytes (a file larger, or growing past it while read, is
``NOTEBOOK_READ_FAILED`` with ``reason: "too_large"``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from jupyter_jcli.errors import ErrorCode, NotebookError

__all__ = ["check_regular", "compare_descriptor", "file_kind", "read_descriptor"]

_CHUNK = 1024 * 1024

_KINDS = {
    "directory": "a directory",
    "fifo": "a FIFO (named pipe)",
    "device": "a device",
    "socket": "a socket",
    "special": "a special file",
}


def file_kind(mode: int) -> str:
    """``"regular"``, ``"directory"``, ``"fifo"``, ``"device"``, ``"socket"`` or ``"special"``."""
    if stat.S_ISREG(mode):
        return "regular"
    if stat.S_ISDIR(mode):
        return "directory"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "special"


def check_regular(mode: int, path: Path) -> None:
    """Refuse anything but a regular file.

    Raises:
        NotebookError: ``FILE_NOT_FOUND`` for a directory, ``NOTEBOOK_READ_FAILED`` for a
            FIFO, device, socket or other special file (details ``path``, ``file_type``).
    """
    kind = file_kind(mode)
    if kind == "regular":
        return
    details = {"path": str(path), "file_type": kind}
    if kind == "directory":
        raise NotebookError(
            ErrorCode.FILE_NOT_FOUND, f"No file at {path}: it is a directory.", details
        )
    raise NotebookError(
        ErrorCode.NOTEBOOK_READ_FAILED,
        f"Cannot read {path}: it is {_KINDS[kind]}, not a regular file.",
        details,
    )


def _too_large(path: Path, size: int, limit: int) -> NotebookError:
    return NotebookError(
        ErrorCode.NOTEBOOK_READ_FAILED,
        f"{path} is larger than {limit} bytes, the most jupyter-jcli reads from one file.",
        {"path": str(path), "reason": "too_large", "size": size, "limit": limit},
    )


def read_descriptor(fd: int, path: Path, limit: int) -> tuple[bytes, os.stat_result]:
    """Check the open ``fd`` is a regular file of at most ``limit`` bytes and read it all.

    Raises:
        NotebookError: the codes of :func:`check_regular`; ``NOTEBOOK_READ_FAILED`` with
            ``reason: "too_large"``.
        OSError: a read failed.
    """
    info = os.fstat(fd)
    check_regular(info.st_mode, path)
    if info.st_size > limit:
        raise _too_large(path, info.st_size, limit)
    # one read of the size fstat gave, so a large file is not copied a second time by a
    # join; then chunks, for a file that grew meanwhile (or reports no size)
    first = os.read(fd, min(info.st_size, limit) + 1) if info.st_size else b""
    chunks = [first]
    total = len(first)
    while True:
        if total > limit:
            raise _too_large(path, total, limit)
        chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return (first if len(chunks) == 1 else b"".join(chunks)), info


def compare_descriptor(fd: int, path: Path, expected: bytes, limit: int) -> str | None:
    """Whether the open ``fd`` (a regular file of at most ``limit`` bytes) holds exactly
    ``expected``, read in chunks (never the whole file at once): ``None`` when it does, else
    the SHA-256 hex digest of what it holds.

    Raises:
        NotebookError: as :func:`read_descriptor`.
        OSError: a read failed.
    """
    info = os.fstat(fd)
    check_regular(info.st_mode, path)
    if info.st_size > limit:
        raise _too_large(path, info.st_size, limit)
    want = memoryview(expected)
    digest = None
    total = 0
    while chunk := os.read(fd, min(_CHUNK, limit + 1 - total)):
        # bytes against bytes (a memcmp); a memoryview compares item by item
        if digest is None and expected[total : total + len(chunk)] != chunk:
            import hashlib

            digest = hashlib.sha256(want[:total])
        if digest is not None:
            digest.update(chunk)
        total += len(chunk)
        if total > limit:
            raise _too_large(path, total, limit)
    if digest is None and total == len(expected):
        return None
    if digest is None:
        import hashlib

        digest = hashlib.sha256(want[:total])
    return digest.hexdigest()
