"""Atomic file replacement: a crash leaves the old file or the new one, never half of one.

Recipe: resolve the target once and open its folder by descriptor (``_open.open_folder``:
every component walked with ``O_NOFOLLOW``, the confinement checked), write a temporary file
in that folder (same filesystem, so the rename is atomic) through the same descriptor
(``O_CREAT | O_EXCL | O_NOFOLLOW``), flush and ``fsync`` it, give it the target's permission
bits, ``os.replace`` it over the target relative to the folder descriptor (``src_dir_fd`` /
``dst_dir_fd``), then ``fsync`` the folder so the rename itself is durable (POSIX). A folder
swapped for a symlink while the write runs is never written through: the temporary file and
the rename both live in the folder that was checked. A symlink target is followed by the one
resolution: the file it points to is replaced and the link is kept.

Compare before replace (``expected``): a caller that read the file and computed the new
content from it passes what it read; right before the rename, under the caller's lock, the
file is read again through the folder descriptor and compared by content; if another program
saved it in between, nothing is replaced and :class:`FileChanged` is raised, so the caller can
merge again. A rename cannot compare and swap atomically: a save that lands in the few
microseconds between that last comparison and the ``rename`` system call is still
overwritten. That window is the one that remains.

Temporary files are named ``.<name>.jcli-<pid>-<scope>-<random>.tmp``, where ``<scope>``
names this kernel boot and pid namespace (a hash of Linux's ``boot_id`` and the pid
namespace's inode; absent where they cannot be read). A write first removes stale ones beside
its target (a writer killed mid-write leaves its temporary file; the next write clears it):

- ours, written in this scope, whose pid is not a live process: at once, since no writer can
  still be using it (a reused pid only keeps the file longer);
- otherwise (another machine or container sharing the folder, whose pids we cannot see, or
  ``.<name>.<8 chars>.tmp``, the name of earlier versions): once older than
  :data:`STALE_SECONDS`, and, when the name carries a pid, no live process with that pid.

Read-only files: replacing a file needs write permission on its folder only, and root passes
every ``os.access`` check, so a plain replace would overwrite a notebook someone made
read-only (``chmod 444``). An existing target whose mode has no write bit for its owner
(``stat.S_IWUSR``) is refused instead (:func:`check_writable`), whoever runs the process.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import re
import secrets
import stat
import time
from pathlib import Path

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._open import (
    MAX_NOTEBOOK_BYTES,
    Confinement,
    Folder,
    compare_descriptor,
    open_folder,
)

__all__ = ["STALE_SECONDS", "FileChanged", "atomic_write_bytes", "check_writable"]

STALE_SECONDS = 60.0
"""Age (by modification time) after which a temporary file of ours may be removed."""

_TMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
_TMP_FLAGS |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
_READ_FLAGS |= getattr(os, "O_CLOEXEC", 0)
_MAX_STALE_REMOVED = 100
"""Most stale temporary files one write removes (a bound on the work of one write)."""


class FileChanged(NotebookError):
    """The file no longer holds what the caller read: another program saved it.

    Raised by :func:`atomic_write_bytes` with ``expected``, before anything is replaced.
    Code ``WRITE_CONFLICT``; details ``path``, ``expected_sha256``, ``actual_sha256``
    (``None`` when the file is gone).
    """


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
    _refuse_read_only(path, mode)


def _refuse_read_only(path: Path, mode: int) -> None:
    if not mode & stat.S_IWUSR:
        raise NotebookError(
            ErrorCode.NOTEBOOK_WRITE_FAILED,
            f"{path} is read-only (mode {mode:#o}); make it writable to edit it.",
            {"path": str(path), "mode": f"{mode:#o}", "reason": "read_only"},
        )


def atomic_write_bytes(
    path: Path,
    data: bytes,
    *,
    expected: bytes | None = None,
    exclusive: bool = False,
    confine: Confinement | None = None,
) -> os.stat_result:
    """Replace (or create) ``path`` with ``data`` atomically.

    The new file keeps the old file's permission bits; a new file gets ``0o666`` minus the
    process umask, as ``open()`` would give it.

    Args:
        path: the file to write.
        data: its complete new content.
        expected: the content the caller read and derived ``data`` from; the file must still
            hold it right before the replace (see the module docstring). ``None``: no check.
        exclusive: create the file, never replace one: the temporary file is hard-linked to
            the name (``linkat``, which fails if the name exists), or where hard links are
            not supported, renamed after a check that the name is free.
        confine: the roots the file must lie in; default the active confinement.

    Returns:
        The ``fstat`` of the written file (its identity and modification time).

    Raises:
        FileChanged: ``WRITE_CONFLICT``: with ``expected``, the file changed; nothing written.
        FileExistsError: with ``exclusive``, the name exists (nothing written).
        NotebookError: ``PATH_NOT_ALLOWED`` (outside the confinement); ``NOTEBOOK_WRITE_FAILED``:
            the target is read-only (see :func:`check_writable`), or (details ``path``,
            ``errno``) a step failed; the target is then untouched and the temporary file
            removed.
    """
    shown = Path(os.path.abspath(path))
    try:
        with open_folder(path, confine=confine) as folder:
            shown = folder.path
            return _write_in(folder, data, expected, exclusive=exclusive)
    except FileExistsError as err:
        if exclusive:
            raise
        raise _write_failed(shown, err) from err
    except OSError as err:
        raise _write_failed(shown, err) from err


def _write_failed(shown: Path, err: OSError) -> NotebookError:
    return NotebookError(
        ErrorCode.NOTEBOOK_WRITE_FAILED,
        f"Could not write {shown}: {err.strerror or err}.",
        {"path": str(shown), "errno": err.errno},
    )


def _write_in(
    folder: Folder, data: bytes, expected: bytes | None, *, exclusive: bool
) -> os.stat_result:
    try:
        current: int | None = stat.S_IMODE(os.stat(folder.name, dir_fd=folder.fd).st_mode)
    except FileNotFoundError:
        current = None
    if current is not None and exclusive:
        raise FileExistsError(errno.EEXIST, "File exists", str(folder.path))
    if current is not None:
        _refuse_read_only(folder.path, current)
    remove_stale_temporaries(folder)
    scope = writer_scope()
    tag = f"{os.getpid()}-{scope}" if scope is not None else str(os.getpid())
    tmp_name = f".{folder.name}.jcli-{tag}-{secrets.token_hex(4)}.tmp"
    fd = os.open(tmp_name, _TMP_FLAGS, 0o600, dir_fd=folder.fd)
    replaced = False
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
            os.fchmod(fd, current if current is not None else 0o666 & ~_umask())
            info = os.fstat(fd)
        finally:
            os.close(fd)
        if expected is not None:
            _compare(folder, expected)
        if exclusive:
            replaced = _link_new(folder, tmp_name)
        else:
            os.replace(tmp_name, folder.name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
            replaced = True
        os.fsync(folder.fd)
        return info
    finally:
        if not replaced:
            with contextlib.suppress(OSError):
                os.unlink(tmp_name, dir_fd=folder.fd)


def _link_new(folder: Folder, tmp_name: str) -> bool:
    """Give the temporary file the target's name without replacing anything.

    Returns:
        Whether the temporary name is gone (renamed); False when it was linked (the caller
        removes it).

    Raises:
        FileExistsError: the name exists.
    """
    try:
        os.link(tmp_name, folder.name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
        return False
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
    try:  # no hard links on this filesystem: check, then rename
        os.stat(folder.name, dir_fd=folder.fd, follow_symlinks=False)
    except FileNotFoundError:
        os.replace(tmp_name, folder.name, src_dir_fd=folder.fd, dst_dir_fd=folder.fd)
        return True
    raise FileExistsError(errno.EEXIST, "File exists", str(folder.path))


def _compare(folder: Folder, expected: bytes) -> None:
    """Raise :class:`FileChanged` unless ``folder.name`` holds exactly ``expected`` (read in
    chunks: the file is never held whole beside the bytes being written)."""
    try:
        fd = os.open(folder.name, _READ_FLAGS, dir_fd=folder.fd)
    except FileNotFoundError:
        actual: str | None = None
    else:
        try:
            actual = compare_descriptor(fd, folder.path, expected, MAX_NOTEBOOK_BYTES)
        finally:
            os.close(fd)
        if actual is None:
            return
    raise FileChanged(
        ErrorCode.WRITE_CONFLICT,
        f"{folder.path} was saved by another program while this write was prepared.",
        {
            "path": str(folder.path),
            "expected_sha256": hashlib.sha256(expected).hexdigest(),
            "actual_sha256": actual,
        },
    )


def _stale_pattern(name: str) -> re.Pattern[str]:
    escaped = re.escape(name)
    return re.compile(
        rf"\.{escaped}\.(?:jcli-(?P<pid>\d+)-(?:(?P<scope>[0-9a-f]{{12}})-)?[0-9a-f]+"
        rf"|[a-z0-9_]{{8}})\.tmp"
    )


@functools.cache
def writer_scope() -> str | None:
    """A token for this kernel boot and pid namespace (12 hex digits), in which the pid in a
    temporary file's name can be checked for a live writer; ``None`` off Linux."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as handle:
            boot = handle.read().strip()
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except (OSError, ValueError):
        return None
    return hashlib.sha256(f"{boot}:{namespace}".encode()).hexdigest()[:12]


def remove_stale_temporaries(folder: Folder, *, now: float | None = None) -> list[str]:
    """Remove the temporary files a killed writer of ``folder.name`` left (module docstring).

    Returns:
        The names removed. Files that cannot be inspected or removed are left alone.
    """
    pattern = _stale_pattern(folder.name)
    cutoff = (time.time() if now is None else now) - STALE_SECONDS
    removed: list[str] = []
    try:
        names = os.listdir(folder.fd)
    except OSError:
        return removed
    for entry in names:
        match = pattern.fullmatch(entry)
        if match is None:
            continue
        try:
            info = os.stat(entry, dir_fd=folder.fd, follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        pid = match.group("pid")
        if pid is not None and _alive(int(pid)):
            continue
        scope = writer_scope()
        ours = pid is not None and scope is not None and match.group("scope") == scope
        if not ours and info.st_mtime > cutoff:
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry, dir_fd=folder.fd)
            removed.append(entry)
        if len(removed) >= _MAX_STALE_REMOVED:
            break
    return removed


def _alive(pid: int) -> bool:
    """Whether a process with ``pid`` exists (a pid we may not signal exists too)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


def _umask() -> int:
    """The process umask; read from /proc where possible (``os.umask`` briefly changes it)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    current = os.umask(0o022)
    os.umask(current)
    return current
