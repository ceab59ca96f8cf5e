"""Tolerant, read-only loading of ``.ipynb`` files.

Reading checks only the structure the readers rely on (a JSON object with a ``cells`` list of
objects and a supported ``nbformat``); it does not run the full nbformat JSON-schema
validation, so real notebooks with small schema deviations still read. Every nbformat 4 minor
version is returned as stored (cells without ``id``, as in 4.0 to 4.4, are normal). nbformat 3
notebooks are upgraded in memory with nbformat's own converter (``nbformat.v4.upgrade``),
imported only when such a notebook is met.

Nothing here writes: no file, cache or folder is created by a read.

Two parsers, one per use:

- :func:`read_notebook`, the saved-output protocol's read (``j-cli notebook outputs|output``
  through click, ``read_notebook_output`` in both MCP
  servers, a ``.py`` pair's notebook), gives the standard library's result at every file
  size: ``json.loads`` of the decoded text. One rule in every process, so a response's values
  (integers of any size kept exact) and a broken file's error details (``position``,
  ``line``, ``column``: code points into the decoded text) never depend on which process
  serves the call or on what it imported. A fresh process parses with the standard library
  itself (importing orjson costs more than it saves on a parse); a process that has orjson
  loaded already (the MCP servers) lets orjson compute the same value, when that is certain:
  a file under ``LEAN_PARSE_BYTES`` that orjson accepts and whose numbers have no integer
  part of 19 or more digits, the only numbers orjson reads otherwise (an integer past 64
  bits becomes a float; such a float is left to the standard library too). Anything orjson
  refuses (a lone surrogate escape, ``NaN``, a number out of range, bad JSON) is parsed by
  the standard library, whose value or error is the answer.
- :func:`parse_notebook`, the document model's parse (a long-lived process keeps what it
  parsed: ``_warm``), parses with orjson, imported when first needed. orjson reads an integer
  outside the 64-bit range (below -2**63 or above 2**64 - 1) as the nearest float, silently;
  the standard library, used for files orjson refuses, keeps it exact. Detecting such
  integers before parsing would cost a scan of every byte (about three times orjson's parse
  time), so this is a documented limitation of the model: notebooks hold such integers only
  in rare JSON outputs or metadata. Writes never work on these values:
  ``parse_notebook(..., exact=True)`` is the write path's lossless parse (see ``_exact``),
  used by a mutation whenever the model's values do not reproduce the file byte for byte
  (``_writebase``).

Format reference: https://nbformat.readthedocs.io/en/latest/format_description.html
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._paths import (
    decode_utf8,
    display_path,
    read_input_bytes,
    require_suffix,
    resolve_input,
)
from jupyter_jcli.notebook._plain_files import (
    MAX_SOURCE_STREAM_BYTES,
    read_binary_file,
    read_source_file,
    read_source_stream,
    read_text_file,
)

__all__ = [
    "FIRST_LINE_WIDTH",
    "MAX_SOURCE_STREAM_BYTES",
    "NOTEBOOK_SUFFIX",
    "cell_source",
    "check_cell_index",
    "create_file",
    "display_path",
    "first_line",
    "multiline_text",
    "parse_notebook",
    "read_binary_file",
    "read_notebook",
    "read_source_file",
    "read_source_stream",
    "read_text_file",
    "value_at",
    "write_file",
]

NOTEBOOK_SUFFIX = ".ipynb"
"""The file suffix of a Jupyter notebook document (compared case-insensitively)."""

FIRST_LINE_WIDTH = 80
"""Longest first line (in characters) a cell summary keeps; longer ones end with ``…``."""

_SUPPORTED_MAJOR_VERSIONS = (3, 4)


LEAN_PARSE_BYTES = 32 * 1024 * 1024
"""Files at least this large (bytes) are parsed by :func:`parse_notebook` on its memory-lean
path.

orjson holds the input bytes, its own parse buffer and the Python objects at once (about 3x
the file size at peak). :func:`parse_notebook`, whose caller keeps the bytes, parses such a
file one cell at a time when its layout allows (``_layout.parse_apart``: orjson's buffer is
then one cell's size), which peaks near 2x. (:func:`read_notebook` always decodes the file to
one string, drops the bytes and parses with the standard library, which peaks near 2x; for
big notebooks, whose bulk is long output strings, it parses about as fast as orjson.)"""


def read_notebook(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read an ``.ipynb`` file into a notebook dict (nbformat 4 layout).

    Args:
        path: path of the ``.ipynb`` file.

    Returns:
        The notebook as plain JSON values: ``{"nbformat": 4, "nbformat_minor": int,
        "metadata": dict, "cells": [cell dict, ...]}``; nbformat 3 input comes back upgraded
        (see :func:`parse_notebook`).

    Raises:
        NotebookError: ``FILE_NOT_FOUND`` if the path does not exist, is a directory, a
            dangling link, a link loop or a name too long; ``FILE_TYPE_UNSUPPORTED`` if its
            suffix is not ``.ipynb``; ``NOTEBOOK_READ_FAILED`` if it is not a regular file
            (a FIFO is refused, never blocked on), cannot be read, is not UTF-8 or is not a
            notebook; ``USAGE_ERROR`` for an empty path or one holding a NUL byte. Messages
            name the absolute, resolved path.
    """
    require_suffix(
        path, NOTEBOOK_SUFFIX, f"is not a Jupyter notebook: expected a {NOTEBOOK_SUFFIX} file."
    )
    file_path = resolve_input(path)
    return _parse_read(read_input_bytes(file_path), file_path)


_LONG_INTEGER_PART = b" " + b"0" * 19
_NUMBER_SHAPE = bytes(48 if 48 <= byte <= 57 else byte if byte == 46 else 32 for byte in range(256))
"""A translation table: each ASCII digit to ``0``, ``.`` kept, every other byte to a space.

In the translated bytes, ``_LONG_INTEGER_PART`` finds a run of 19 or more digits that does
not follow a decimal point: the integer part of a number that orjson may read otherwise than
the standard library (``2**64``, ``-(2**63) - 1``), or digits in a string (a false alarm:
the standard library parses). A long fraction (``0.00030000000000000003``, as Python writes
small floats) is left to orjson, which rounds it correctly as the standard library does."""


def _parse_read(raw: bytes, path: Path) -> dict[str, Any]:
    """The protocol read's parse: ``json.loads`` of the decoded ``raw``, checked as a
    notebook; orjson computes it when already loaded and certain to agree (module docstring).

    The caller passes the only reference to ``raw``: it is dropped before the standard
    library parses the text (the peak stays near 2x the file)."""
    _check_start(raw, path)
    accelerator = sys.modules.get("orjson")
    if (
        accelerator is not None
        and len(raw) < LEAN_PARSE_BYTES
        and _LONG_INTEGER_PART not in raw.translate(_NUMBER_SHAPE)
    ):
        try:
            parsed: object = accelerator.loads(raw)
        except accelerator.JSONDecodeError:
            pass  # the standard library decides: its value or its error
        else:
            return _check_document(parsed, path)
    text = decode_utf8(raw, path)
    del raw
    return _parse_document(text, path=path)


def parse_notebook(raw: bytes, *, path: Path, exact: bool = False) -> dict[str, Any]:
    """Parse the bytes of an ``.ipynb`` file into a notebook dict.

    The document model's parse (orjson: see the module docstring); the saved-output
    protocol's reads use :func:`read_notebook`.

    Accepted: nbformat 4 with any minor version (returned as stored) and nbformat 3 (upgraded
    in memory through ``nbformat.v4.upgrade``; the result carries no cell ids, since v3 has
    none and freshly generated ones would differ on every read, so it reports
    ``nbformat_minor`` 4 and keeps ``metadata.orig_nbformat`` 3).

    Args:
        raw: the file's bytes (UTF-8 JSON).
        path: the file the bytes came from, for error details only.
        exact: parse with the write path's lossless parser (``_exact.loads_exact``: integers
            of any size, number literals kept as written) instead of orjson; slower, for
            writes only.

    Returns:
        The notebook dict, nbformat 4 layout (see :func:`read_notebook`).

    Raises:
        NotebookError: ``NOTEBOOK_READ_FAILED`` for invalid JSON (the standard library's
            error, as :func:`read_notebook` gives it: details carry ``position``, in code
            points, ``line`` and ``column``), a top-level value that is not an object, a missing or
            non-integer ``nbformat``, an unsupported major version, a missing or non-list
            ``cells`` or a cell that is not an object (details carry ``cell_index``).
    """
    _check_start(raw, path)
    if exact:
        from jupyter_jcli.notebook._exact import loads_exact

        return _parse_document(decode_utf8(raw, path), path=path, loads=loads_exact)
    if len(raw) >= LEAN_PARSE_BYTES:
        from jupyter_jcli.notebook._layout import parse_apart

        apart = parse_apart(raw)
        if apart is not None:
            return _check_document(apart, path)
    import orjson  # here, not at the top: the protocol's read lane never needs it

    try:
        parsed: object = orjson.loads(raw)
    except orjson.JSONDecodeError:
        # orjson refuses valid JSON that escapes a lone surrogate ("\ud800"), which real
        # notebooks hold when a cell printed undecodable bytes; the standard library reads it
        # (the output protocol later replaces such code points with U+FFFD). Bytes that are
        # not UTF-8 at all are reported as such; when both parsers refuse UTF-8 text, the
        # standard library's error is the one reported, as the protocol's read reports it
        # (one wording, ``position`` in code points), whichever command met the file.
        return _parse_document(decode_utf8(raw, path), path=path)
    return _check_document(parsed, path)


_UTF8_BOM = b"\xef\xbb\xbf"


def _check_start(raw: bytes, path: Path) -> None:
    """Refuse, in words a person can act on, the two files that are not JSON at their
    first byte: an empty one (a save that was cut short, ``touch``) and one that starts with
    a UTF-8 byte order mark (some Windows editors write one; JSON, nbformat and Jupyter do
    not read it either, so the file is refused rather than silently rewritten without it).

    Raises:
        NotebookError: ``NOTEBOOK_READ_FAILED`` with details ``path`` and ``reason``
            (``"empty"``, ``"utf8_bom"``).
    """
    if not raw or raw.isspace():  # no copy: a notebook may be hundreds of MB
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path} is empty ({len(raw)} bytes), not a notebook: restore it (e.g. from "
            "version control), or delete it and create one (j-cli notebook create).",
            {"path": str(path), "reason": "empty", "size": len(raw)},
        )
    if raw.startswith(_UTF8_BOM):
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path} starts with a UTF-8 byte order mark, which JSON and Jupyter do not "
            "read: save it as UTF-8 without a BOM (remove its first 3 bytes).",
            {"path": str(path), "reason": "utf8_bom"},
        )


def _parse_document(
    text: str, *, path: Path, loads: Callable[[str], Any] | None = None
) -> dict[str, Any]:
    """Parse notebook text with the standard library, then check it as a notebook."""
    try:
        parsed: object = (loads or json.loads)(text)
    except json.JSONDecodeError as err:
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path} is not valid JSON: {err.msg} (line {err.lineno}, column {err.colno}).",
            {"path": str(path), "position": err.pos, "line": err.lineno, "column": err.colno},
        ) from err
    except RecursionError as err:
        raise _not_a_notebook(path, "its JSON nests too deeply") from err
    return _check_document(parsed, path, exact=loads is not None)


def _check_document(parsed: object, path: Path, *, exact: bool = False) -> dict[str, Any]:
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
        from jupyter_jcli.notebook._v3read import upgrade_v3  # v3 is rare: not on the fast path

        document = upgrade_v3(document, path, exact=exact)
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


def cell_source(cell: Mapping[str, Any]) -> str:
    """The source of a cell as one string.

    nbformat stores ``source`` as a string or a list of strings that are concatenated
    (multiline strings, https://nbformat.readthedocs.io/en/latest/format_description.html).

    Args:
        cell: a cell dict.

    Returns:
        The joined source; ``""`` when the cell has no usable source.
    """
    return multiline_text(cell.get("source", ""))


def multiline_text(value: object) -> str:
    """An nbformat multiline string (a string, or a list of strings that are concatenated)
    as one string; ``""`` for anything else (list items that are not strings are skipped)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(part for part in value if isinstance(part, str))
    return ""


def value_at(node: object, *keys: str) -> object:
    """``node[keys[0]][keys[1]]...`` through JSON objects (``cell, "metadata", "jupyter_mcp",
    "name"``), or ``None`` where a key is absent or a level is not an object: metadata is
    read tolerantly, whatever another program wrote there."""
    for key in keys:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def first_line(text: str) -> str:
    """The first non-blank line of ``text``, stripped and cut to :data:`FIRST_LINE_WIDTH`."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            if len(stripped) > FIRST_LINE_WIDTH:
                return stripped[: FIRST_LINE_WIDTH - 1] + "…"
            return stripped
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


def create_file(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data`` atomically, never replacing an existing file.

    Through the one atomic writer (``notebook._atomic``, exclusive: hard-linked into place,
    the folder opened by descriptor under the active confinement): a crash leaves no file or
    the whole file, and a file created meanwhile by another program is kept.

    Raises:
        FileExistsError: the name exists (nothing written).
        NotebookError: ``PATH_NOT_ALLOWED`` (outside the confinement),
            ``NOTEBOOK_WRITE_FAILED`` (details ``path``, ``errno``).
    """
    from jupyter_jcli.notebook._atomic import atomic_write_bytes

    atomic_write_bytes(path, data, exclusive=True)


def write_file(path: Path, data: bytes, *, replace: bool) -> None:
    """Write ``path`` holding ``data`` atomically: :func:`create_file` when not ``replace``,
    else replacing an existing file (whose permission bits are kept) through the same writer.

    Raises:
        FileExistsError: without ``replace``, the name exists (nothing written).
        NotebookError: as :func:`create_file`; with ``replace``, also ``NOTEBOOK_WRITE_FAILED``
            for a read-only target (``reason`` ``"read_only"``).
    """
    from jupyter_jcli.notebook._atomic import atomic_write_bytes

    atomic_write_bytes(path, data, exclusive=not replace)
