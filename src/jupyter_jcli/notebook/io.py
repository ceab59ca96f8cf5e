"""Tolerant, read-only loading of ``.ipynb`` files.

The read path parses with orjson and checks only the structure the readers rely on (a JSON
object with a ``cells`` list of objects and a supported ``nbformat``); it does not run the
full nbformat JSON-schema validation, so real notebooks with small schema deviations still
read. Every nbformat 4 minor version is returned as stored (cells without ``id``, as in 4.0 to
4.4, are normal). nbformat 3 notebooks are upgraded in memory with nbformat's own converter
(``nbformat.v4.upgrade``), imported only when such a notebook is met.

Nothing here writes: no file, cache or folder is created by a read.

Format reference: https://nbformat.readthedocs.io/en/latest/format_description.html
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import orjson

from jupyter_jcli.errors import ErrorCode, NotebookError

__all__ = [
    "NOTEBOOK_SUFFIX",
    "cell_source",
    "check_cell_index",
    "parse_notebook",
    "read_notebook",
]

NOTEBOOK_SUFFIX = ".ipynb"
"""The file suffix of a Jupyter notebook document (compared case-insensitively)."""

_SUPPORTED_MAJOR_VERSIONS = (3, 4)

LEAN_PARSE_BYTES = 32 * 1024 * 1024
"""Files at least this large (bytes) are parsed on the memory-lean path.

orjson holds the input bytes, its own parse buffer and the Python objects at once (about 3x
the file size at peak). Past this size :func:`read_notebook` decodes the file to one string,
drops the bytes and parses with the standard library, which peaks near 2x; for notebooks that
big, whose bulk is long output strings (images, logs), it parses about as fast."""


def read_notebook(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read an ``.ipynb`` file into a notebook dict (nbformat 4 layout).

    Args:
        path: path of the ``.ipynb`` file.

    Returns:
        The notebook as plain JSON values: ``{"nbformat": 4, "nbformat_minor": int,
        "metadata": dict, "cells": [cell dict, ...]}``; nbformat 3 input comes back upgraded
        (see :func:`parse_notebook`).

    Raises:
        NotebookError: ``FILE_NOT_FOUND`` if the path does not exist or is a directory;
            ``FILE_TYPE_UNSUPPORTED`` if its suffix is not ``.ipynb``; ``NOTEBOOK_READ_FAILED``
            if it cannot be read or is not a notebook.
    """
    file_path = Path(path)
    if file_path.suffix.lower() != NOTEBOOK_SUFFIX:
        raise NotebookError(
            ErrorCode.FILE_TYPE_UNSUPPORTED,
            f"{file_path} is not a Jupyter notebook: expected a {NOTEBOOK_SUFFIX} file.",
            {"path": str(file_path), "suffix": file_path.suffix},
        )
    try:
        if file_path.stat().st_size >= LEAN_PARSE_BYTES:
            return _parse_document(_read_text(file_path), path=file_path)
        raw = file_path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as err:
        raise NotebookError(
            ErrorCode.FILE_NOT_FOUND,
            f"No notebook file at {file_path}.",
            {"path": str(file_path)},
        ) from err
    except OSError as err:
        if file_path.is_dir():
            # Windows reports a directory read as PermissionError.
            raise NotebookError(
                ErrorCode.FILE_NOT_FOUND,
                f"No notebook file at {file_path}: it is a directory.",
                {"path": str(file_path)},
            ) from err
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"Could not read {file_path}: {err.strerror or err}.",
            {"path": str(file_path), "errno": err.errno},
        ) from err
    return parse_notebook(raw, path=file_path)


def parse_notebook(raw: bytes, *, path: Path) -> dict[str, Any]:
    """Parse the bytes of an ``.ipynb`` file into a notebook dict.

    Accepted: nbformat 4 with any minor version (returned as stored) and nbformat 3 (upgraded
    in memory through ``nbformat.v4.upgrade``; the result carries no cell ids, since v3 has
    none and freshly generated ones would differ on every read, so it reports
    ``nbformat_minor`` 4 and keeps ``metadata.orig_nbformat`` 3).

    Args:
        raw: the file's bytes (UTF-8 JSON).
        path: the file the bytes came from, for error details only.

    Returns:
        The notebook dict, nbformat 4 layout (see :func:`read_notebook`).

    Raises:
        NotebookError: ``NOTEBOOK_READ_FAILED`` for invalid JSON (details carry ``position``,
            ``line`` and ``column``), a top-level value that is not an object, a missing or
            non-integer ``nbformat``, an unsupported major version, a missing or non-list
            ``cells`` or a cell that is not an object (details carry ``cell_index``).
    """
    try:
        parsed: object = orjson.loads(raw)
    except orjson.JSONDecodeError as err:
        # orjson refuses valid JSON that escapes a lone surrogate ("\ud800"), which real
        # notebooks hold when a cell printed undecodable bytes; the standard library reads it
        # (the output protocol later replaces such code points with U+FFFD). When both
        # refuse, orjson's error (byte position) is the one reported.
        try:
            parsed = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise NotebookError(
                ErrorCode.NOTEBOOK_READ_FAILED,
                f"{path} is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno}).",
                {"path": str(path), "position": err.pos, "line": err.lineno, "column": err.colno},
            ) from err
    return _check_document(parsed, path)


def _read_text(path: Path) -> str:
    """The whole file as text, without keeping its bytes (the lean path)."""
    try:
        with path.open(encoding="utf-8") as handle:
            return handle.read()
    except UnicodeDecodeError as err:
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path} is not UTF-8 text: {err.reason} at byte {err.start}.",
            {"path": str(path), "position": err.start},
        ) from err


def _parse_document(text: str, *, path: Path) -> dict[str, Any]:
    """Parse notebook text with the standard library, then check it as a notebook."""
    try:
        parsed: object = json.loads(text)
    except json.JSONDecodeError as err:
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path} is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno}).",
            {"path": str(path), "position": err.pos, "line": err.lineno, "column": err.colno},
        ) from err
    except RecursionError as err:
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path} nests JSON too deeply to be a notebook.",
            {"path": str(path)},
        ) from err
    return _check_document(parsed, path)


def _check_document(parsed: object, path: Path) -> dict[str, Any]:
    """Check the parsed JSON is a supported notebook; upgrade nbformat 3 in memory."""
    if not isinstance(parsed, dict):
        raise _not_a_notebook(path, f"its top-level JSON value is {_json_kind(parsed)}")
    document: dict[str, Any] = parsed
    major = document.get("nbformat")
    if isinstance(major, bool) or not isinstance(major, int):
        raise _not_a_notebook(path, "it has no integer 'nbformat' version")
    if major not in _SUPPORTED_MAJOR_VERSIONS:
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path} is nbformat {major}; only nbformat 4 and 3 notebooks can be read.",
            {"path": str(path), "nbformat": major, "supported": list(_SUPPORTED_MAJOR_VERSIONS)},
        )
    if major == 3:
        document = _upgrade_v3(document, path)
    _check_cells(document, path)
    return document


def check_cell_index(cell_index: object, cell_count: int, *, path: Path) -> int:
    """Check that ``cell_index`` is a physical zero-based index into ``cell_count`` cells.

    Args:
        cell_index: the requested index; must be an ``int`` (not a ``bool``).
        cell_count: how many cells the file holds.
        path: the file the cells come from, for the error details.

    Returns:
        ``cell_index`` itself.

    Raises:
        NotebookError: ``CELL_NOT_FOUND`` (details ``path``, ``cell_index``, ``cell_count``)
            for a non-integer, boolean, negative or out-of-range index.
    """
    if isinstance(cell_index, bool) or not isinstance(cell_index, int):
        raise NotebookError(
            ErrorCode.CELL_NOT_FOUND,
            f"Cell index must be an integer, got {type(cell_index).__name__}.",
            {"path": str(path), "cell_index": repr(cell_index), "cell_count": cell_count},
        )
    if not 0 <= cell_index < cell_count:
        valid = f"0 to {cell_count - 1}" if cell_count else "none: the file has no cells"
        raise NotebookError(
            ErrorCode.CELL_NOT_FOUND,
            f"{path} has no cell {cell_index} (valid indexes: {valid}).",
            {"path": str(path), "cell_index": cell_index, "cell_count": cell_count},
        )
    return cell_index


def cell_source(cell: dict[str, Any]) -> str:
    """The source of a cell as one string.

    nbformat stores ``source`` as a string or a list of strings that are concatenated
    (multiline strings, https://nbformat.readthedocs.io/en/latest/format_description.html).

    Args:
        cell: a cell dict.

    Returns:
        The joined source; ``""`` when the cell has no usable source.
    """
    source = cell.get("source", "")
    if isinstance(source, str):
        return source
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return ""


def _check_cells(document: dict[str, Any], path: Path) -> None:
    cells = document.get("cells")
    if cells is None:
        raise _not_a_notebook(path, "it has no 'cells' list")
    if not isinstance(cells, list):
        raise _not_a_notebook(path, f"its 'cells' is {_json_kind(cells)}, not a list")
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict):
            raise NotebookError(
                ErrorCode.NOTEBOOK_READ_FAILED,
                f"{path} is not a valid notebook: cell {index} is {_json_kind(cell)}, "
                "not an object.",
                {"path": str(path), "cell_index": index},
            )


def _upgrade_v3(document: dict[str, Any], path: Path) -> dict[str, Any]:
    """Upgrade an nbformat 3 document to nbformat 4 with nbformat's converter."""
    if not isinstance(document.get("worksheets"), list):
        raise _not_a_notebook(path, "it is nbformat 3 but has no 'worksheets' list")
    import nbformat
    from nbformat.v3.rwbase import strip_transient

    try:
        node = strip_transient(nbformat.v3.to_notebook_json(document))  # type: ignore[no-untyped-call]
        upgraded = nbformat.v4.upgrade(node, from_version=3, from_minor=0)  # type: ignore[no-untyped-call]
        plain: dict[str, Any] = orjson.loads(orjson.dumps(upgraded))
    except Exception as err:  # nbformat raises anything from KeyError to ValidationError
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path} is an nbformat 3 notebook that could not be upgraded: {err}.",
            {"path": str(path), "nbformat": 3},
        ) from err
    for cell in plain.get("cells") or []:
        if isinstance(cell, dict):
            cell.pop("id", None)
    plain["nbformat_minor"] = 4
    return plain


def _not_a_notebook(path: Path, reason: str) -> NotebookError:
    return NotebookError(
        ErrorCode.NOTEBOOK_READ_FAILED,
        f"{path} is not a Jupyter notebook: {reason}.",
        {"path": str(path)},
    )


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
