"""The saved-output protocol on files: a notebook cell addressed by file path and cell index.

``.ipynb`` files are read directly (``mapping: "direct"``); a ``.py`` file is parsed with
jupytext and its cell mapped into the paired notebook (``mapping: "id"`` or ``"content"``,
see :func:`jupyter_jcli.notebook.pairing.map_py_cell`). The cell's outputs then go through
:func:`jupyter_jcli.outputs.list_outputs` and :func:`jupyter_jcli.outputs.read_output`.

This module is the boundary where the document layer's ``NotebookError`` becomes an
``OutputProtocolError`` with the same code (raised ``from`` the original), so callers of the
protocol catch one exception type. Reading never writes, never executes and imports jupytext
only when a ``.py`` file is read (and nbformat only for an nbformat 3 notebook).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

from jupyter_jcli.errors import ErrorCode, NotebookError, OutputProtocolError
from jupyter_jcli.notebook.io import NOTEBOOK_SUFFIX, check_cell_index, read_notebook
from jupyter_jcli.outputs import (
    DEFAULT_TEXT_LIMIT,
    MAX_TRANSPORT_BYTES,
    list_outputs,
    read_output,
)

__all__ = [
    "CellProvenance",
    "ResolvedCell",
    "list_notebook_outputs",
    "read_notebook_output",
    "resolve_notebook_cell",
]

_PY_SUFFIX = ".py"


class _RequiredProvenance(TypedDict):
    kind: Literal["ipynb", "py"]
    path: str
    cell_index: int
    cell_type: str | None
    mapping: Literal["direct", "id", "content"]


class CellProvenance(_RequiredProvenance, total=False):
    """Where a cell was read from: the ``source`` object of every protocol response.

    Keys: ``kind`` (``"ipynb"`` or ``"py"``: the file the caller named), ``path`` (absolute
    path of the notebook actually read), ``cell_index`` (physical index in that notebook),
    ``cell_type``, ``mapping`` (``"direct"`` for an ``.ipynb``; ``"id"`` or ``"content"`` for a
    mapped ``.py`` cell), ``cell_id`` (when the cell has an nbformat id), ``cell_name`` (when
    it has ``metadata.jupyter_mcp.name``), and for ``.py`` files ``requested_path`` and
    ``requested_cell_index`` (what the caller asked for).
    """

    cell_id: str
    cell_name: str
    requested_path: str
    requested_cell_index: int


@dataclass(frozen=True)
class ResolvedCell:
    """A notebook cell found from a file path and a cell index.

    Attributes:
        source: provenance of the cell (see :class:`CellProvenance`).
        cell: the cell dict as stored in the notebook (nbformat 4 layout).
        notebook_path: absolute path of the notebook actually read.
    """

    source: CellProvenance
    cell: dict[str, Any]
    notebook_path: Path


@contextmanager
def _as_protocol_errors() -> Iterator[None]:
    """Translate the document layer's errors into the protocol's, keeping code and details."""
    try:
        yield
    except NotebookError as err:
        raise OutputProtocolError(err.code, err.message, err.details) from err


def _provenance(
    kind: Literal["ipynb", "py"],
    notebook_path: Path,
    cell_index: int,
    cell: dict[str, Any],
    mapping: Literal["direct", "id", "content"],
) -> CellProvenance:
    cell_type = cell.get("cell_type")
    source = CellProvenance(
        kind=kind,
        path=str(notebook_path),
        cell_index=cell_index,
        cell_type=cell_type if isinstance(cell_type, str) else None,
        mapping=mapping,
    )
    cell_id = cell.get("id")
    if isinstance(cell_id, str) and cell_id:
        source["cell_id"] = cell_id
    metadata = cell.get("metadata")
    ours = metadata.get("jupyter_mcp") if isinstance(metadata, dict) else None
    name = ours.get("name") if isinstance(ours, dict) else None
    if isinstance(name, str) and name:
        source["cell_name"] = name
    return source


def _resolve_ipynb(path: Path, cell_index: object) -> ResolvedCell:
    notebook_path = path.resolve()
    notebook = read_notebook(notebook_path)
    cells: list[dict[str, Any]] = notebook["cells"]
    index = check_cell_index(cell_index, len(cells), path=notebook_path)
    cell = cells[index]
    return ResolvedCell(
        source=_provenance("ipynb", notebook_path, index, cell, "direct"),
        cell=cell,
        notebook_path=notebook_path,
    )


def _resolve_py(path: Path, cell_index: object) -> ResolvedCell:
    from jupyter_jcli.notebook.pairing import resolve_py_cell

    # resolve_py_cell checks the index against the .py cells (CELL_NOT_FOUND).
    paired = resolve_py_cell(path, cast(int, cell_index))
    mapping = paired.mapping
    cell: dict[str, Any] = paired.notebook["cells"][mapping.notebook_cell_index]
    source = _provenance(
        "py", mapping.notebook_path, mapping.notebook_cell_index, cell, mapping.mapping
    )
    source["requested_path"] = str(mapping.py_path)
    source["requested_cell_index"] = mapping.py_cell_index
    return ResolvedCell(source=source, cell=cell, notebook_path=mapping.notebook_path)


def resolve_notebook_cell(file_path: str | os.PathLike[str], cell_index: int) -> ResolvedCell:
    """Find the notebook cell addressed by a file path and a physical cell index.

    Args:
        file_path: an ``.ipynb`` notebook (any nbformat 4 minor version, or nbformat 3), or a
            ``.py`` file paired with one through jupytext.
        cell_index: physical zero-based index of the cell in the file supplied (for a ``.py``
            file, among its cells as jupytext reads them).

    Returns:
        The cell, its provenance and the notebook path actually read.

    Raises:
        OutputProtocolError: ``FILE_NOT_FOUND`` (missing file or a directory),
            ``FILE_TYPE_UNSUPPORTED`` (not ``.ipynb`` or ``.py``), ``NOTEBOOK_READ_FAILED``
            (invalid JSON, not a notebook, unsupported nbformat), ``CELL_NOT_FOUND``
            (negative, non-integer, boolean or out-of-range index; details ``cell_count``),
            ``NOTEBOOK_PAIR_NOT_FOUND`` and ``CELL_MAPPING_UNRELIABLE`` (``.py`` only).
    """
    path = Path(file_path)
    suffix = path.suffix.lower()
    with _as_protocol_errors():
        if suffix == NOTEBOOK_SUFFIX:
            return _resolve_ipynb(path, cell_index)
        if suffix == _PY_SUFFIX:
            return _resolve_py(path, cell_index)
    raise OutputProtocolError(
        ErrorCode.FILE_TYPE_UNSUPPORTED,
        f"{path} is neither a notebook ({NOTEBOOK_SUFFIX}) nor a paired {_PY_SUFFIX} file.",
        {"path": str(path), "suffix": path.suffix, "supported": [NOTEBOOK_SUFFIX, _PY_SUFFIX]},
    )


def _cell_outputs(cell: dict[str, Any]) -> object:
    # Markdown and raw cells have no ``outputs`` key: zero outputs. A present but malformed
    # value is passed on so the protocol reports it (OUTPUT_DATA_INVALID).
    return cell.get("outputs", [])


def list_notebook_outputs(
    file_path: str | os.PathLike[str],
    cell_index: int,
    *,
    max_transport_bytes: int = MAX_TRANSPORT_BYTES,
) -> dict[str, Any]:
    """The output directory of one notebook cell (see :func:`jupyter_jcli.outputs.list_outputs`).

    Args:
        file_path: ``.ipynb`` or paired ``.py`` file.
        cell_index: physical zero-based cell index in that file.
        max_transport_bytes: bound on the compact serialized response, in bytes.

    Returns:
        The directory response, ``source`` being the cell's :class:`CellProvenance`.

    Raises:
        OutputProtocolError: the codes of :func:`resolve_notebook_cell` and of ``list_outputs``.
    """
    resolved = resolve_notebook_cell(file_path, cell_index)
    return list_outputs(
        _cell_outputs(resolved.cell),
        source=resolved.source,
        max_transport_bytes=max_transport_bytes,
    )


def read_notebook_output(
    file_path: str | os.PathLike[str],
    cell_index: int,
    output_index: int,
    *,
    mime_type: str | None = None,
    supported_mime_types: Iterable[str] | None = None,
    offset: int = 0,
    limit: int = DEFAULT_TEXT_LIMIT,
    max_transport_bytes: int = MAX_TRANSPORT_BYTES,
) -> dict[str, Any]:
    """Read one saved output of one notebook cell (see :func:`jupyter_jcli.outputs.read_output`).

    Args:
        file_path: ``.ipynb`` or paired ``.py`` file.
        cell_index: physical zero-based cell index in that file.
        output_index: physical zero-based index in the cell's ``outputs``.
        mime_type: an explicit MIME type to return instead of automatic selection.
        supported_mime_types: restricts automatic and explicit selection alike.
        offset: first code point of the text window.
        limit: maximum code points in the text window.
        max_transport_bytes: bound on the compact serialized response, in bytes.

    Returns:
        The read response, ``source`` being the cell's :class:`CellProvenance` plus
        ``output_index``.

    Raises:
        OutputProtocolError: the codes of :func:`resolve_notebook_cell` and of ``read_output``.
    """
    resolved = resolve_notebook_cell(file_path, cell_index)
    return read_output(
        _cell_outputs(resolved.cell),
        output_index,
        source=resolved.source,
        mime_type=mime_type,
        supported_mime_types=supported_mime_types,
        offset=offset,
        limit=limit,
        max_transport_bytes=max_transport_bytes,
    )
