"""Files that are not notebooks, read through the one opener (``notebook._open``).

Text files (a script, a run manifest), bytes (an image a run saved), and code or a cell's
source given as a file or on standard input (``--code-file``, ``--source-file``), each with
the checks of a notebook read: resolved once, a regular file only (a FIFO or a device is
refused at once, never blocked on), no link followed after the resolution, size-bounded.
Re-exported by :mod:`jupyter_jcli.notebook.io`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._paths import decode_utf8, not_utf8, read_input_bytes, resolve_input

__all__ = [
    "MAX_SOURCE_STREAM_BYTES",
    "read_binary_file",
    "read_source_file",
    "read_source_stream",
    "read_text_file",
]

MAX_SOURCE_STREAM_BYTES = 64 * 1024 * 1024
"""The most bytes of code or source read from a stream (standard input)."""


def read_text_file(path: str | os.PathLike[str]) -> str:
    """Read a UTF-8 text file (a cell's source given as a file) through the one opener.

    The same checks as a notebook read: resolved once, a regular file only (a FIFO or a device
    is refused at once, never blocked on or read without end), size-bounded.

    Raises:
        NotebookError: ``FILE_NOT_FOUND``; ``NOTEBOOK_READ_FAILED`` (not a regular file, too
            large, unreadable, not UTF-8); ``USAGE_ERROR`` (empty path, NUL byte).
    """
    file_path = resolve_input(path)
    return decode_utf8(read_input_bytes(file_path), file_path)


def read_source_file(path: str | os.PathLike[str]) -> str:
    """Read code or a cell's source given as a file (``--code-file``, ``--source-file``)
    through the one opener, with :func:`read_text_file`'s checks (a FIFO or a device refused
    at once, never blocked on; size-bounded); a file that cannot serve as source is a bad
    source, not a bad notebook.

    Raises:
        NotebookError: ``INVALID_SOURCE`` (details ``path`` and ``reason``: ``"not_regular"``
            with ``file_type``, ``"too_large"`` with ``size`` and ``limit``, ``"unreadable"``
            with ``errno``, ``"not_utf8"`` with ``position``, the byte offset);
            ``FILE_NOT_FOUND``; ``USAGE_ERROR`` (empty path, NUL byte).
    """
    try:
        file_path = resolve_input(path)
        raw = read_input_bytes(file_path)
    except NotebookError as err:
        if err.code != ErrorCode.NOTEBOOK_READ_FAILED:
            raise
        raise _bad_source(err) from err
    return _decode_source(raw, file_path)


def read_source_stream(stream: BinaryIO, *, name: str = "stdin") -> str:
    """Read code or a cell's source from ``stream`` (standard input for ``--code-file -``,
    ``--source-file -``): at most :data:`MAX_SOURCE_STREAM_BYTES`, UTF-8, refused as
    :func:`read_source_file` refuses a file (``name`` stands for its path).

    Raises:
        NotebookError: ``INVALID_SOURCE`` (details ``path``: ``name``, and ``reason``
            ``"too_large"`` with ``limit``, or ``"not_utf8"`` with ``position``).
    """
    raw = stream.read(MAX_SOURCE_STREAM_BYTES + 1)
    if len(raw) > MAX_SOURCE_STREAM_BYTES:
        raise NotebookError(
            ErrorCode.INVALID_SOURCE,
            f"{name} holds more than {MAX_SOURCE_STREAM_BYTES} bytes of source.",
            {"path": name, "reason": "too_large", "limit": MAX_SOURCE_STREAM_BYTES},
        )
    return _decode_source(raw, Path(name))


def _decode_source(raw: bytes, path: Path) -> str:
    """``raw`` as UTF-8 text, or ``INVALID_SOURCE`` (``reason`` ``"not_utf8"``)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise _bad_source(not_utf8(err, raw, path), "not_utf8") from err


def _bad_source(err: NotebookError, reason: str | None = None) -> NotebookError:
    """``err`` (a ``NOTEBOOK_READ_FAILED`` of a source file) as ``INVALID_SOURCE``, its
    ``reason`` named (see :func:`read_source_file`)."""
    details = dict(err.details)
    if reason is None:
        given = details.get("reason")
        reason = given if isinstance(given, str) else None
    if reason is None:
        reason = "not_regular" if "file_type" in details else "unreadable"
    return NotebookError(ErrorCode.INVALID_SOURCE, err.message, {**details, "reason": reason})


def read_binary_file(path: str | os.PathLike[str]) -> bytes:
    """Read a file's bytes (an image a run saved) through the one opener, like
    :func:`read_text_file` but without decoding.

    Raises:
        NotebookError: ``FILE_NOT_FOUND``; ``NOTEBOOK_READ_FAILED`` (not a regular file, too
            large, unreadable); ``USAGE_ERROR`` (empty path, NUL byte).
    """
    return read_input_bytes(resolve_input(path))
