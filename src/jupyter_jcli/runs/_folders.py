"""The folders of saved runs: ``<cwd>/.j-cli/outputs/<run-id>/``, never through a symlink.

``.j-cli`` and ``.j-cli/outputs`` must be real folders: a symlink (or a file) in their place
is refused with ``RUN_FOLDER_UNSAFE``, for writes and for retention alike, so saving or
cleaning saved runs never reaches outside the folder the command ran in. Files are written
by the one atomic writer (:func:`jupyter_jcli.notebook.io.create_file`); folders are created
and removed here, by name, without following links (``os.unlink`` and ``os.rmdir`` act on
the entry itself).
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from jupyter_jcli.errors import ErrorCode, JcliError

__all__ = [
    "OUTPUTS_NAME",
    "ROOT_NAME",
    "make_saved_run_folder",
    "outputs_folder",
    "remove_saved_run_folder",
]

ROOT_NAME = ".j-cli"
"""The folder of jupyter-jcli's files in a project (ignored by ``j-cli setup git``)."""
OUTPUTS_NAME = "outputs"
"""The folder of saved runs inside :data:`ROOT_NAME`."""


def _unsafe(path: Path, reason: str) -> JcliError:
    return JcliError(
        ErrorCode.RUN_FOLDER_UNSAFE,
        f"{path} is {reason}: run outputs are neither saved nor cleaned through it.",
        {"path": str(path), "reason": reason.replace(" ", "_")},
    )


def _check_folder(path: Path) -> bool:
    """True when ``path`` is a real folder, False when it does not exist.

    Raises:
        JcliError: ``RUN_FOLDER_UNSAFE`` for a symlink or anything but a folder.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(info.st_mode):
        raise _unsafe(path, "a symlink")
    if not stat.S_ISDIR(info.st_mode):
        raise _unsafe(path, "not a folder")
    return True


def _write_failed(path: Path, err: OSError) -> JcliError:
    return JcliError(
        ErrorCode.FILE_WRITE_FAILED,
        f"Could not create {path}: {err.strerror or err}.",
        {"path": str(path), "errno": err.errno},
    )


def outputs_folder(cwd: Path, *, create: bool) -> Path | None:
    """``<cwd>/.j-cli/outputs``, checked (and created when ``create``).

    Args:
        cwd: the command's working directory (absolute).
        create: create the missing folders (mode 0o777 minus the umask).

    Returns:
        The folder, or None when it does not exist and ``create`` is false.

    Raises:
        JcliError: ``RUN_FOLDER_UNSAFE`` (``.j-cli`` or ``outputs`` a symlink or not a
            folder); ``FILE_WRITE_FAILED`` when a folder cannot be created.
    """
    folder = cwd
    for name in (ROOT_NAME, OUTPUTS_NAME):
        folder = folder / name
        if _check_folder(folder):
            continue
        if not create:
            return None
        try:
            os.mkdir(folder)
        except FileExistsError:
            pass  # made meanwhile by another command: checked below
        except OSError as err:
            raise _write_failed(folder, err) from err
        if not _check_folder(folder):
            raise _write_failed(folder, FileNotFoundError(2, "vanished after creation"))
    return folder


def make_saved_run_folder(outputs: Path, run_id: str) -> Path:
    """Create the folder of a new run (never an existing one).

    Raises:
        JcliError: ``FILE_WRITE_FAILED``.
    """
    folder = outputs / run_id
    try:
        os.mkdir(folder)
    except OSError as err:
        raise _write_failed(folder, err) from err
    return folder


def remove_saved_run_folder(folder: Path, names: list[str]) -> bool:
    """Remove the files ``names`` from a saved run's folder, then the folder if it is empty.

    Each entry is removed by name (a symlink is removed, never followed). A file added
    meanwhile keeps the folder (and is kept).

    Returns:
        Whether the folder is gone.
    """
    for name in names:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
            os.unlink(folder / name)
    try:
        os.rmdir(folder)
    except OSError:
        return False
    return True
