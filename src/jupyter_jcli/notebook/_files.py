"""Reading the files behind a Document, with fingerprints, and writing them back atomically."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._atomic import atomic_write_bytes, check_writable
from jupyter_jcli.notebook._pairs import PairContext, combine_pair
from jupyter_jcli.notebook.io import parse_notebook

__all__ = ["FileState", "read_file", "read_target", "write_all", "written_state"]


@dataclass(frozen=True)
class FileState:
    """A file as it was read or written: its fingerprint and bytes.

    Attributes:
        path: the file, absolute.
        size: bytes.
        mtime_ns: modification time, nanoseconds.
        sha256: hex digest of ``raw``.
        raw: the content.
    """

    path: Path
    size: int
    mtime_ns: int
    sha256: str
    raw: bytes


def read_file(path: Path) -> FileState:
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            raw = handle.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as err:
        raise NotebookError(
            ErrorCode.FILE_NOT_FOUND, f"No file at {path}.", {"path": str(path)}
        ) from err
    except OSError as err:
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"Could not read {path}: {err.strerror or err}.",
            {"path": str(path), "errno": err.errno},
        ) from err
    return FileState(
        path=path,
        size=len(raw),
        mtime_ns=info.st_mtime_ns,
        sha256=hashlib.sha256(raw).hexdigest(),
        raw=raw,
    )


def read_target(
    target: Path,
) -> tuple[dict[str, Any], tuple[FileState, ...], PairContext | None]:
    suffix = target.suffix.lower()
    if suffix == ".ipynb":
        state = read_file(target)
        return parse_notebook(state.raw, path=target), (state,), None
    if suffix == ".py":
        from jupyter_jcli.notebook.pairing import find_paired_notebook

        py_state = read_file(target)
        ipynb_path = Path(os.path.abspath(find_paired_notebook(target)))
        ipynb_state = read_file(ipynb_path)
        notebook, pair = combine_pair(target, py_state.raw, ipynb_path, ipynb_state.raw)
        return notebook, (ipynb_state, py_state), pair
    raise NotebookError(
        ErrorCode.FILE_TYPE_UNSUPPORTED,
        f"{target} is neither a .ipynb notebook nor a paired .py file.",
        {"path": str(target), "suffix": target.suffix},
    )


def write_all(changed: list[tuple[Path, bytes, bytes]]) -> None:
    """Write each file atomically; if a later one fails, put the earlier ones back.

    Raises:
        NotebookError: ``NOTEBOOK_WRITE_FAILED``; a read-only file (``check_writable``) is
            found before any file is written.
    """
    for path, _before, _after in changed:
        check_writable(path)
    done: list[tuple[Path, bytes]] = []
    try:
        for path, before, after in changed:
            atomic_write_bytes(path, after)
            done.append((path, before))
    except NotebookError:
        for path, before in reversed(done):
            atomic_write_bytes(path, before)
        raise


def written_state(state: FileState, data: bytes) -> FileState:
    if data == state.raw:
        return state
    try:
        mtime_ns = os.stat(state.path).st_mtime_ns
    except OSError:
        mtime_ns = 0
    return FileState(
        path=state.path,
        size=len(data),
        mtime_ns=mtime_ns,
        sha256=hashlib.sha256(data).hexdigest(),
        raw=data,
    )
