"""Opening the files behind a notebook: the one helper every read and every write goes through.

Every file jupyter-jcli reads as a notebook, a paired text file or a restored snapshot, and
every folder it writes a notebook into, is opened here, with the same checks:

- **Resolve once, then open without following links.** The path is resolved once
  (``os.path.realpath``: ``..`` applied, symlinks followed, as the caller meant them); then
  every component of the *resolved* path is opened relative to its parent's descriptor
  (``os.open(name, O_NOFOLLOW | O_DIRECTORY, dir_fd=parent)``), from ``/`` down. A component
  that became a symlink after the resolution (a folder renamed away and replaced by a link)
  makes the open fail instead of being followed; the path is then resolved again and checked
  again (at most :data:`_ATTEMPTS` times). The file is reached only through folders that are,
  at the moment each is opened, the real folders of the checked path.
- **Confinement.** Under a :class:`Confinement` (the MCP servers' trusted roots), the
  resolved path must be a root or lie below one, else ``PATH_NOT_ALLOWED``, whatever the
  file is: the check is made here, where the file is opened, so both halves of a pair and
  a restored snapshot are checked like the requested path. Outside any confinement (the
  command line) the same walk is made; every path is allowed.
- **Identity re-check.** After a file is opened, the path is looked up again
  (``lstat``) and must name the file the descriptor holds (``st_dev``, ``st_ino``); a file
  swapped in between is opened again.
- **Regular files only, size-bounded.** A file is opened ``O_NONBLOCK`` and checked on its
  descriptor (``fstat``) before any read: a FIFO, a device (``/dev/zero``), a socket is
  ``NOTEBOOK_READ_FAILED``, never blocked on; at most :data:`MAX_NOTEBOOK_BYTES` are read
  (a file larger, or growing past it while read, is ``NOTEBOOK_READ_FAILED`` with
  ``reason: "too_large"``).

Which confinement applies: the one passed explicitly, else the *active* one, set for a block
of work by :func:`confined` (a ``contextvars`` variable, so it follows a call into worker
threads started with ``anyio.to_thread`` and the tasks it starts). A ``Document`` keeps the
confinement it was loaded under for all its later reads and writes. jupyter-jcli's own cache
files (snapshots) are opened with :data:`UNCONFINED` explicitly.

Remaining limits, inherent to POSIX: a hard link inside a root to a file outside is that
file (links are names of one file; nothing tells them apart), and a folder already opened
that is moved out of the root while it is used is still used (it was inside when opened).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import NamedTuple, TypeVar

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._descriptors import (
    check_regular,
    compare_descriptor,
    file_kind,
    read_descriptor,
)

__all__ = [
    "MAX_NOTEBOOK_BYTES",
    "UNCONFINED",
    "Confinement",
    "Folder",
    "Opened",
    "active",
    "check_regular",
    "chosen",
    "compare_descriptor",
    "compare_regular",
    "confined",
    "file_kind",
    "open_folder",
    "read_descriptor",
    "read_regular",
    "stat_regular",
]

_T = TypeVar("_T")

MAX_NOTEBOOK_BYTES = 512 * 1024 * 1024
"""Largest file read as a notebook or paired text file (bytes): 512 MiB."""

_ATTEMPTS = 4
"""How many times a path whose folders change while it is opened is resolved and tried."""

_RACE_ERRNOS = frozenset({errno.ELOOP, errno.ENOTDIR})
"""What opening a component with ``O_NOFOLLOW | O_DIRECTORY`` gives when it is a symlink."""

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_SEARCH = getattr(os, "O_PATH", 0) or getattr(os, "O_SEARCH", 0) or os.O_RDONLY
"""How intermediate folders are opened: ``O_PATH`` (Linux) needs no read permission."""
_DIR_FLAGS = os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
_FILE_FLAGS |= _CLOEXEC | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


class Confinement(NamedTuple):
    """The folders (or single files) every opened file must lie in; none: anywhere.

    Attributes:
        roots: resolved absolute roots (symlinks followed); empty means unconfined.
    """

    roots: tuple[Path, ...] = ()

    @classmethod
    def to_roots(cls, roots: Iterable[str | os.PathLike[str]]) -> Confinement:
        """A confinement to ``roots`` (resolved here; duplicates removed)."""
        resolved = (Path(os.path.realpath(os.fspath(root))) for root in roots)
        return cls(tuple(dict.fromkeys(resolved)))

    @property
    def is_confined(self) -> bool:
        """Whether any root is set."""
        return bool(self.roots)

    def allows(self, resolved: Path) -> bool:
        """Whether the resolved path ``resolved`` is a root or lies below one (lexically)."""
        if not self.roots:
            return True
        return any(resolved == root or root in resolved.parents for root in self.roots)

    def check(self, path: str | os.PathLike[str]) -> Path:
        """Resolve ``path`` (it need not exist) and check it is allowed.

        Returns:
            The resolved path.

        Raises:
            NotebookError: ``PATH_NOT_ALLOWED`` (details ``path``, ``roots``).
        """
        resolved = Path(os.path.realpath(os.fspath(path)))
        if not self.allows(resolved):
            raise NotebookError(
                ErrorCode.PATH_NOT_ALLOWED,
                f"{os.fspath(path)} lies outside the trusted roots (symlinks resolved).",
                {"path": os.fspath(path), "roots": [str(root) for root in self.roots]},
            )
        return resolved


UNCONFINED = Confinement()
"""No roots: every path is allowed (the command line; jupyter-jcli's own cache files)."""

_ACTIVE: ContextVar[Confinement] = ContextVar("jupyter_jcli_confinement", default=UNCONFINED)


def active() -> Confinement:
    """The confinement set by the innermost :func:`confined` block (else :data:`UNCONFINED`)."""
    return _ACTIVE.get()


def chosen(confine: Confinement | None) -> Confinement:
    """``confine`` if given, else the active confinement."""
    return confine if confine is not None else _ACTIVE.get()


@contextlib.contextmanager
def confined(confinement: Confinement) -> Iterator[Confinement]:
    """Make ``confinement`` the active one for the block (and the threads and tasks it starts)."""
    token = _ACTIVE.set(confinement)
    try:
        yield confinement
    finally:
        _ACTIVE.reset(token)


def _walk(parts: tuple[str, ...], *, last_flags: int) -> int:
    """Open the folder ``/parts[0]/.../parts[-1]`` component by component, no link followed.

    Raises:
        OSError: as ``os.open`` raises it (``ELOOP``/``ENOTDIR`` for a component that is not
            a real folder).
    """
    fd = os.open("/", _SEARCH | _DIR_FLAGS)
    try:
        for index, part in enumerate(parts):
            flags = (last_flags if index == len(parts) - 1 else _SEARCH) | _DIR_FLAGS
            child = os.open(part, flags, dir_fd=fd)
            os.close(fd)
            fd = child
        if not parts and last_flags != _SEARCH:
            child = os.open(".", last_flags | _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _split(resolved: Path) -> tuple[tuple[str, ...], str]:
    parts = resolved.parts[1:]  # drop the anchor "/"
    if not parts:
        return (), "."
    return tuple(parts[:-1]), parts[-1]


class Folder(NamedTuple):
    """The folder a file is written into, opened by :func:`open_folder`.

    Attributes:
        fd: a descriptor of the folder (readable, so it can be ``fsync``-ed).
        name: the file's name in it.
        path: the file's resolved absolute path.
    """

    fd: int
    name: str
    path: Path


@contextlib.contextmanager
def open_folder(
    path: str | os.PathLike[str], *, confine: Confinement | None = None
) -> Iterator[Folder]:
    """Resolve ``path`` once, check it, and open its folder without following links.

    A symlink at ``path`` itself is followed by the resolution (the file it points to is the
    one written, as an editor does), and that file must be allowed too.

    Raises:
        NotebookError: ``PATH_NOT_ALLOWED``.
        OSError: the folder cannot be opened (the caller codes it as a write failure).
    """
    confinement = chosen(confine)
    for attempt in range(_ATTEMPTS):
        resolved = confinement.check(path)
        folders, name = _split(resolved)
        try:
            fd = _walk(folders, last_flags=os.O_RDONLY)
        except OSError as err:
            if err.errno in _RACE_ERRNOS and attempt < _ATTEMPTS - 1:
                continue  # a folder on the way changed: resolve and check again
            raise
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            info = None
        except OSError:
            os.close(fd)
            raise
        if info is not None and stat.S_ISLNK(info.st_mode) and attempt < _ATTEMPTS - 1:
            os.close(fd)  # the file became a symlink after the resolution: resolve again
            continue
        try:
            yield Folder(fd, name, resolved)
        finally:
            os.close(fd)
        return
    raise OSError(errno.ELOOP, "the path kept changing while it was opened", os.fspath(path))


class Opened(NamedTuple):
    """A regular file read by :func:`read_regular`.

    Attributes:
        path: its resolved absolute path.
        raw: its content.
        info: ``fstat`` of the descriptor it was read from (before the read).
    """

    path: Path
    raw: bytes
    info: os.stat_result


def compare_regular(
    path: str | os.PathLike[str], expected: bytes, *, confine: Confinement | None = None
) -> str | None:
    """:func:`compare_descriptor` of the regular file ``path``, opened as
    :func:`read_regular` opens it (same checks, same errors)."""
    _resolved, found = _opened(
        path,
        chosen(confine),
        lambda fd, at: compare_descriptor(fd, at, expected, MAX_NOTEBOOK_BYTES),
    )
    return found


def read_regular(
    path: str | os.PathLike[str],
    *,
    confine: Confinement | None = None,
    limit: int | None = None,
) -> Opened:
    """Read a regular file through the checks of the module docstring.

    Args:
        path: the file (absolute, or relative to the current directory).
        confine: the roots it must lie in; default the active confinement.
        limit: the most bytes read; default :data:`MAX_NOTEBOOK_BYTES`.

    Returns:
        The resolved path, the content and the descriptor's ``fstat``.

    Raises:
        NotebookError: ``PATH_NOT_ALLOWED``; the codes of :func:`check_regular`;
            ``NOTEBOOK_READ_FAILED`` (``reason: "too_large"``).
        OSError: the file or a folder on the way cannot be opened or read (missing,
            permission denied, a symlink loop): the caller codes it.
    """
    bound = MAX_NOTEBOOK_BYTES if limit is None else limit
    resolved, (raw, info) = _opened(
        path, chosen(confine), lambda fd, at: read_descriptor(fd, at, bound)
    )
    return Opened(resolved, raw, info)


def stat_regular(
    path: str | os.PathLike[str], *, confine: Confinement | None = None
) -> tuple[Path, os.stat_result]:
    """The resolved path and ``fstat`` of a regular file, opened through the checks of the
    module docstring (confinement, no link followed, identity re-check) but not read: what
    a cache of the file's content compares with what it holds.

    Raises:
        NotebookError: ``PATH_NOT_ALLOWED``; the codes of :func:`check_regular`.
        OSError: as :func:`read_regular`.
    """

    def fstat(fd: int, at: Path) -> os.stat_result:
        info = os.fstat(fd)
        check_regular(info.st_mode, at)
        return info

    resolved, info = _opened(path, chosen(confine), fstat)
    return resolved, info


def _opened(
    path: str | os.PathLike[str],
    confinement: Confinement,
    use: Callable[[int, Path], _T],
) -> tuple[Path, _T]:
    """Open ``path`` (module docstring), give its descriptor to ``use``, close it."""
    for attempt in range(_ATTEMPTS):
        last = attempt == _ATTEMPTS - 1
        resolved = confinement.check(path)
        folders, name = _split(resolved)
        try:
            folder = _walk(folders, last_flags=_SEARCH)
        except OSError as err:
            if err.errno in _RACE_ERRNOS and not last:
                continue
            raise
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=folder)
        except OSError as err:
            if err.errno == errno.ELOOP and not last:
                continue  # the file became a symlink after the resolution
            raise
        finally:
            os.close(folder)
        try:
            value = use(fd, resolved)
            info = os.fstat(fd)
        finally:
            os.close(fd)
        if _same_file(resolved, info) or last:
            return resolved, value
    raise AssertionError("unreachable: the last attempt returns or raises")


def _same_file(resolved: Path, info: os.stat_result) -> bool:
    """Whether ``resolved`` still names the file ``info`` describes (no swap since opened)."""
    try:
        now = os.lstat(resolved)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (info.st_dev, info.st_ino)
