"""Exclusive ``fcntl.flock`` locks on files that their holder may remove.

A lock file is removed only by a process holding its lock; a locker checks, once it holds a
lock, that the file it locked is still the one at the path (:func:`flock_path`), else it locks
the file there now. So removing a lock file never lets two processes hold "the" lock: one on
the removed file and one on its replacement.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

__all__ = ["ExecLock", "flock_path"]

_POLL = 0.01


def flock_path(path: Path, *, blocking_until: float | None) -> int | None:
    """An open descriptor of ``path`` holding its exclusive ``flock``, ``None`` when it is
    taken (and ``blocking_until``, a ``time.monotonic()`` deadline, passed or not given).

    Once locked, the descriptor's file is checked to still be the one at ``path``: a holder
    may have removed the file (it does so only while holding the lock), and a lock on the
    removed file would exclude nobody, so the new file is locked instead."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if blocking_until is None or time.monotonic() >= blocking_until:
                        os.close(fd)
                        return None
                    time.sleep(_POLL)
            held = os.fstat(fd)
            try:
                current = os.stat(path)
            except FileNotFoundError:
                current = None
        except BaseException:
            os.close(fd)
            raise
        if current is not None and (current.st_ino, current.st_dev) == (held.st_ino, held.st_dev):
            return fd
        os.close(fd)  # the file was removed while we waited: lock the one there now


class ExecLock:
    """The execution lock of one notebook's kernel (``<key>.exec``): held by the one process
    that executes on it; released when its holder closes it or dies.

    Args:
        path: the lock file.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """Whether this object holds the lock."""
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if it is free (never waits); ``True`` when held afterwards."""
        if self._fd is not None:
            return True
        self._path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._fd = flock_path(self._path, blocking_until=None)
        return self._fd is not None

    def taken_elsewhere(self) -> bool:
        """Whether another holder has the lock now (checked by taking it for an instant)."""
        if self._fd is not None:
            return False
        if self.try_acquire():
            self.release()
            return False
        return True

    def release(self) -> None:
        """Let the lock go (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)
