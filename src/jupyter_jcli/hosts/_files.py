"""Reading, diffing and atomically applying planned config changes.

Every change is planned from a snapshot of the file (its bytes); right before writing, the file
is read again and compared with that snapshot, so a config that someone else changed in between
is never overwritten (``CONFIG_CHANGED``). Writes go through
:func:`jupyter_jcli.notebook._atomic.atomic_write_bytes` (temporary file, ``fsync``,
``os.replace``).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.hosts._model import FileChange, SetupError

__all__ = ["apply_changes", "read_text", "unified_diff"]


def read_text(path: Path) -> str | None:
    """The file's text (UTF-8, newlines kept as they are), None when it does not exist.

    Raises:
        SetupError: ``CONFIG_INVALID`` when the file exists but is not UTF-8 text or cannot be
            read.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError as err:
        raise SetupError(
            ErrorCode.CONFIG_INVALID, f"{path} is a folder, not a config file.", {"path": str(path)}
        ) from err
    except OSError as err:
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            f"Could not read {path}: {err.strerror or err}.",
            {"path": str(path)},
        ) from err
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            f"{path} is not UTF-8 text; it was left untouched.",
            {"path": str(path), "byte": err.start},
        ) from err


def _bytes(text: str | None) -> bytes | None:
    """A change's text as the bytes of the file (binary files are held as ``surrogateescape``
    text)."""
    return None if text is None else text.encode("utf-8", "surrogateescape")


def _snapshot(path: Path) -> bytes | None:
    """The file's bytes now, None when it does not exist.

    Raises:
        SetupError: ``CONFIG_INVALID`` when it cannot be read (see :func:`read_text`).
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        read_text(path)  # raises the error that explains it
        raise


def _is_binary(text: str | None) -> bool:
    try:
        (text or "").encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def unified_diff(change: FileChange) -> str:
    """The change as a unified diff (``/dev/null`` stands for a missing file); a binary file
    (compiled bytecode an earlier version left) is one line saying so."""
    if _is_binary(change.before) or _is_binary(change.after):
        return f"Binary file {change.path} {change.action}d\n"
    before = change.before or ""
    after = change.after or ""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=str(change.path) if change.before is not None else "/dev/null",
            tofile=str(change.path) if change.after is not None else "/dev/null",
        )
    )


def apply_changes(changes: Iterable[FileChange]) -> None:
    """Write every change, each atomically, after checking that no file moved on since planning.

    All files are checked before the first is written, so a conflict writes nothing.

    Raises:
        SetupError: ``CONFIG_CHANGED`` (details ``path``) when a file differs from the text the
            change was planned on; ``FILE_WRITE_FAILED`` when a write or delete fails.
    """
    planned = list(changes)
    for change in planned:
        if _snapshot(change.path) != _bytes(change.before):
            raise SetupError(
                ErrorCode.CONFIG_CHANGED,
                f"{change.path} changed while setup was running; nothing was written. "
                "Run it again.",
                {"path": str(change.path)},
            )
    for change in planned:
        _apply_one(change)


def _apply_one(change: FileChange) -> None:
    from jupyter_jcli.notebook import atomic_write_bytes

    try:
        if change.after is None:
            change.path.unlink(missing_ok=True)
            for folder in change.prune_dirs:
                try:
                    folder.rmdir()
                except OSError:
                    break  # not empty (someone else's files) or already gone
            return
        change.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(change.path, change.after.encode("utf-8", "surrogateescape"))
    except JcliError as err:
        raise SetupError(
            ErrorCode.FILE_WRITE_FAILED, err.message, {"path": str(change.path)}
        ) from err
    except OSError as err:
        raise SetupError(
            ErrorCode.FILE_WRITE_FAILED,
            f"Could not write {change.path}: {err.strerror or err}.",
            {"path": str(change.path), "errno": err.errno or 0},
        ) from err
