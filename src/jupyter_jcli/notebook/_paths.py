"""Input files of the read path: one place that turns a user's path into a readable file.

Every reader (``notebook.io``, ``notebook.pairing``, ``outputs.notebook``) resolves and opens
its input here, so that ordinary filesystem problems always get the same code and message,
never a raw exception:

=================================================  =========================
problem                                            code
=================================================  =========================
empty path, or a NUL byte in it                    ``USAGE_ERROR``
missing, dangling symlink, symlink loop, a name    ``FILE_NOT_FOUND``
too long, a parent that is not a folder, a folder
not a regular file (FIFO, device, socket),         ``NOTEBOOK_READ_FAILED``
permission denied, any other I/O error, not UTF-8
=================================================  =========================

Files are opened by the one helper of ``notebook._open`` (resolved once, walked without
following links, checked against the active confinement, ``PATH_NOT_ALLOWED`` outside it): a
file is checked to be regular on the opened descriptor (``fstat``), opened with
``O_NONBLOCK`` so a FIFO named ``x.ipynb`` is refused instead of blocking the read forever,
and read up to ``_open.MAX_NOTEBOOK_BYTES`` (``NOTEBOOK_READ_FAILED``, ``reason:
"too_large"``). Messages name the absolute, resolved path.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._open import Confinement, check_regular, chosen, read_regular

__all__ = [
    "decode_utf8",
    "display_path",
    "not_utf8",
    "os_error",
    "read_input_bytes",
    "require_suffix",
    "resolve_input",
]

_MISSING_ERRNOS = frozenset({errno.ENOENT, errno.ENOTDIR, errno.ELOOP, errno.ENAMETOOLONG})
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def display_path(path: str | os.PathLike[str]) -> Path:
    """The absolute, resolved form of ``path`` as far as it can be resolved (for messages).

    Never raises: a path that cannot be resolved (a loop, a NUL byte) comes back absolute.
    """
    try:
        return Path(os.path.realpath(os.fspath(path)))
    except (OSError, ValueError, RuntimeError):
        try:
            return Path(os.path.abspath(os.fspath(path)))
        except (ValueError, TypeError):
            return Path(os.fspath(path))


def require_suffix(path: str | os.PathLike[str], suffix: str, message: str) -> None:
    """Refuse ``path`` unless its suffix is ``suffix`` (any case), before anything is read.

    Raises:
        NotebookError: ``FILE_TYPE_UNSUPPORTED`` (``message`` after the resolved path; details
            ``path`` and ``suffix``).
    """
    found = Path(path).suffix
    if found.lower() != suffix:
        shown = display_path(path)
        raise NotebookError(
            ErrorCode.FILE_TYPE_UNSUPPORTED,
            f"{shown} {message}",
            {"path": str(shown), "suffix": found},
        )


def _usage(message: str, path: str) -> NotebookError:
    return NotebookError(ErrorCode.USAGE_ERROR, message, {"path": path})


def os_error(err: OSError, path: Path) -> NotebookError:
    """The coded error for an ``OSError`` met while resolving or reading ``path``.

    Args:
        err: the error.
        path: the file as the caller named it, absolute (symbolic links not resolved).

    Returns:
        ``FILE_NOT_FOUND`` for a missing file (details ``path``, ``errno``, and ``resolved``
        when symbolic links lead elsewhere: a dangling link names itself and its target, from
        whichever command met it), a link loop or a name too long; else
        ``NOTEBOOK_READ_FAILED`` (details ``path``, ``errno``).
    """
    reason = err.strerror or str(err)
    details: dict[str, object] = {"path": str(path), "errno": err.errno}
    if err.errno in _MISSING_ERRNOS:
        extra = {
            errno.ELOOP: " (a symbolic link loop)",
            errno.ENAMETOOLONG: " (the name is too long for the filesystem)",
        }.get(err.errno or 0)
        if extra is None:
            resolved = display_path(path)
            extra = ""
            if resolved != path:
                details["resolved"] = str(resolved)
                extra = f": symbolic links lead to {resolved}, which does not exist"
        return NotebookError(ErrorCode.FILE_NOT_FOUND, f"No file at {path}{extra}.", details)
    return NotebookError(
        ErrorCode.NOTEBOOK_READ_FAILED, f"Could not read {path}: {reason}.", details
    )


def _absolute(raw: str | bytes) -> Path:
    """``raw`` made absolute, its symbolic links not resolved (as the caller named it)."""
    return Path(os.path.abspath(os.fsdecode(raw)))  # no NUL byte here: checked before


def resolve_input(path: str | os.PathLike[str], *, confine: Confinement | None = None) -> Path:
    """The absolute, resolved path of an existing regular file the caller wants read.

    Args:
        path: the path as the caller gave it.
        confine: the roots it must lie in; default the active confinement (``_open``).

    Returns:
        The resolved path (symbolic links followed).

    Raises:
        NotebookError: ``USAGE_ERROR`` (empty path, NUL byte), ``PATH_NOT_ALLOWED`` (outside
            the confinement; checked before the file is looked at), ``FILE_NOT_FOUND``
            (missing, dangling link, link loop, name too long, a directory),
            ``NOTEBOOK_READ_FAILED`` (not a regular file, permission denied, other I/O
            errors).
    """
    raw = os.fspath(path)
    if raw in ("", b""):
        raise _usage("The file path is empty.", "")
    if ("\0" in raw) if isinstance(raw, str) else (b"\0" in raw):
        raise _usage("The file path contains a NUL byte, which no file name can hold.", repr(raw))
    try:
        shown = chosen(confine).check(raw)
    except (OSError, ValueError, RuntimeError):
        shown = display_path(raw)
    try:
        info = os.stat(shown)
    except OSError as err:
        raise os_error(err, _absolute(raw)) from err
    except ValueError as err:  # e.g. a name the platform cannot represent
        raise _usage(f"{raw!r} is not a valid file path: {err}.", repr(raw)) from err
    check_regular(info.st_mode, shown)
    return shown


def read_input_bytes(path: Path, *, confine: Confinement | None = None) -> bytes:
    """The content of a file checked by :func:`resolve_input`, re-checked where it is opened.

    Opened by ``_open.read_regular``: no link followed after the one resolution, the
    confinement checked again, ``O_NONBLOCK`` and ``fstat`` before any read (a file swapped
    for a FIFO or a device in between is refused, never blocked on), size-bounded.

    Raises:
        NotebookError: the codes of :func:`resolve_input`; ``NOTEBOOK_READ_FAILED`` with
            ``reason: "too_large"``.
    """
    try:
        return read_regular(path, confine=confine).raw
    except OSError as err:
        raise os_error(err, path) from err


def decode_utf8(raw: bytes, path: Path) -> str:
    """``raw`` decoded as UTF-8, or a ``NOTEBOOK_READ_FAILED`` saying where it is not UTF-8.

    Raises:
        NotebookError: ``NOTEBOOK_READ_FAILED`` with details ``position`` (byte offset).
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise not_utf8(err, raw, path) from err


def not_utf8(err: UnicodeDecodeError, raw: bytes, path: Path) -> NotebookError:
    """The error for a file that is not UTF-8 text (a UTF-16 byte order mark is named)."""
    hint = " (it starts with a UTF-16 byte order mark)" if raw[:2] in _UTF16_BOMS else ""
    return NotebookError(
        ErrorCode.NOTEBOOK_READ_FAILED,
        f"{path} is not UTF-8 text{hint}: {err.reason} at byte {err.start}.",
        {"path": str(path), "position": err.start},
    )
