"""The saved-output protocol on files: a notebook cell addressed by file path and cell index.

``.ipynb`` files are read directly (``mapping: "direct"``); a ``.py`` file is parsed with
jupytext and its cell mapped into the paired notebook (``mapping: "id"`` or ``"content"``,
see :func:`jupyter_jcli.notebook.pairing.map_py_cell`). The cell's outputs then go through
:func:`jupyter_jcli.outputs.list_outputs` and :func:`jupyter_jcli.outputs.read_output`.

This module is the boundary where the document layer's ``NotebookError`` becomes an
``OutputProtocolError`` with the same code (raised ``from`` the original), so callers of the
protocol catch one exception type. To read many cells of one file, load it once with
:func:`open_notebook` (a :class:`NotebookOutputs`); the three functions below load the file
for one call each. Reading never writes, never executes and imports jupytext
only when a ``.py`` file is read (and nbformat only for an nbformat 3 notebook).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypedDict

from jupyter_jcli.errors import ErrorCode, NotebookError, OutputProtocolError
from jupyter_jcli.notebook.io import (
    NOTEBOOK_SUFFIX,
    check_cell_index,
    display_path,
    read_notebook,
    value_at,
)
from jupyter_jcli.outputs import (
    MAX_TRANSPORT_BYTES,
    list_outputs,
    read_output,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from jupyter_jcli.notebook.pairing import PairedScript
    from jupyter_jcli.outputs._read import ReadOptions

__all__ = [
    "CellProvenance",
    "NotebookOutputs",
    "ResolvedCell",
    "list_notebook_outputs",
    "open_notebook",
    "read_notebook_output",
    "resolve_notebook_cell",
]

_PY_SUFFIX = ".py"


class _RequiredProvenance(TypedDict):
    kind: Literal["notebook"]
    path: str
    cell_index: int
    requested_path: str
    requested_cell_index: int
    mapping: Literal["direct", "id", "content"]
    cell_type: str | None


class CellProvenance(_RequiredProvenance, total=False):
    """Where a cell was read from: the ``source`` object of every protocol response.

    The reference protocol's keys (jupyter-jcli 0.9.7): ``kind`` (always ``"notebook"``: the
    outputs come from a notebook), ``path`` (absolute path of the notebook actually read),
    ``cell_index`` (physical index in that notebook), ``requested_path`` and
    ``requested_cell_index`` (the file and index the caller named: the same as ``path`` and
    ``cell_index`` for an ``.ipynb``), ``mapping`` (``"direct"`` for an ``.ipynb``; ``"id"`` or
    ``"content"`` for a mapped ``.py`` cell), ``cell_id`` (when the cell has an nbformat id),
    ``execution_count`` (when the notebook cell has one), and for a ``.py`` request
    ``source_start_line``/``source_end_line`` (the requested cell's first and last non-blank
    lines in the ``.py``, 1-based; absent for an empty cell). Ours besides: ``cell_type`` and
    ``cell_name`` (when the cell has ``metadata.jupyter_mcp.name``).
    """

    cell_id: str
    cell_name: str
    execution_count: int
    source_start_line: int
    source_end_line: int


class ResolvedCell(NamedTuple):
    """A notebook cell found from a file path and a cell index.

    Attributes:
        source: provenance of the cell (see :class:`CellProvenance`).
        cell: the cell dict as stored in the notebook (nbformat 4 layout).
        notebook_path: absolute path of the notebook actually read.
        notebook_cell_index: the cell's physical index in that notebook.
        requested_path: the file the caller named, absolute (the ``.py`` for a paired
            script; ``notebook_path`` for an ``.ipynb``).
        requested_cell_index: the index the caller named, in that file.
        mapping: ``"direct"``, ``"id"`` or ``"content"`` (see :class:`CellProvenance`).
    """

    source: CellProvenance
    cell: dict[str, Any]
    notebook_path: Path
    notebook_cell_index: int
    requested_path: Path
    requested_cell_index: int
    mapping: Literal["direct", "id", "content"]


@contextmanager
def _as_protocol_errors() -> Iterator[None]:
    """Translate the document layer's errors into the protocol's, keeping code and details."""
    try:
        yield
    except NotebookError as err:
        raise OutputProtocolError(err.code, err.message, err.details) from err


def _resolved(
    notebook_path: Path,
    cell_index: int,
    cell: dict[str, Any],
    mapping: Literal["direct", "id", "content"],
    requested: tuple[Path, int],
    *,
    line_span: tuple[int, int] | None = None,
) -> ResolvedCell:
    cell_type = cell.get("cell_type")
    source = CellProvenance(
        kind="notebook",
        path=str(notebook_path),
        cell_index=cell_index,
        requested_path=str(requested[0]),
        requested_cell_index=requested[1],
        mapping=mapping,
        cell_type=cell_type if isinstance(cell_type, str) else None,
    )
    cell_id = cell.get("id")
    if isinstance(cell_id, str) and cell_id:
        source["cell_id"] = cell_id
    count = cell.get("execution_count")
    if isinstance(count, int) and not isinstance(count, bool):
        source["execution_count"] = count
    if line_span is not None:
        source["source_start_line"], source["source_end_line"] = line_span
    name = value_at(cell, "metadata", "jupyter_mcp", "name")
    if isinstance(name, str) and name:
        source["cell_name"] = name
    return ResolvedCell(
        source=source,
        cell=cell,
        notebook_path=notebook_path,
        notebook_cell_index=cell_index,
        requested_path=requested[0],
        requested_cell_index=requested[1],
        mapping=mapping,
    )


class NotebookOutputs:
    """A notebook (or a ``.py`` file and its paired notebook) loaded once, read many times.

    Built by :func:`open_notebook`. Loading parses the file once (for a ``.py``: one jupytext
    parse, one read of the paired notebook, and every cell mapped in one pass); each
    :meth:`list_outputs` and :meth:`read_output` then works on the cells in memory, so
    reading every output of an ``n``-cell notebook costs ``O(n)``, not ``n`` parses.

    Attributes:
        kind: ``"ipynb"`` or ``"py"``: the kind of file the caller named.
        path: that file, absolute and resolved.
        cells: the cells of that file, in order (for a ``.py``: as jupytext reads them,
            without jupytext's random ids); plain nbformat 4 cell dicts. Do not mutate.
        notebook_path: the notebook read (``path`` itself for an ``.ipynb``; the paired
            notebook for a ``.py``), or None when a ``.py`` has no readable pair.
        pairing_error: for a ``.py`` without a readable pair, the error every cell access
            raises (``NOTEBOOK_PAIR_NOT_FOUND``, ...); None otherwise.
        metadata: the notebook-level metadata of an ``.ipynb`` read (``{}`` for a ``.py``).
    """

    def __init__(
        self,
        *,
        kind: Literal["ipynb", "py"],
        path: Path,
        cells: list[dict[str, Any]],
        notebook_path: Path | None,
        pairing_error: OutputProtocolError | None = None,
        paired: PairedScript | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        self.kind: Literal["ipynb", "py"] = kind
        self.path = path
        self.cells = cells
        self.notebook_path = notebook_path
        self.pairing_error = pairing_error
        self.metadata: dict[str, Any] = metadata if metadata is not None else {}
        self._paired = paired

    @property
    def cell_count(self) -> int:
        """How many cells the file supplied has (the range of ``cell_index``)."""
        return len(self.cells)

    def resolve_cell(self, cell_index: int) -> ResolvedCell:
        """The notebook cell at physical ``cell_index`` of the file supplied.

        Raises:
            OutputProtocolError: ``CELL_NOT_FOUND`` (negative, non-integer, boolean or
                out-of-range index; details ``cell_count``), and for a ``.py`` then
                ``NOTEBOOK_PAIR_NOT_FOUND`` (or the paired notebook's read error) and
                ``CELL_MAPPING_UNRELIABLE``.
        """
        with _as_protocol_errors():
            if self._paired is None:
                index = check_cell_index(cell_index, len(self.cells), path=self.path)
                return _resolved(self.path, index, self.cells[index], "direct", (self.path, index))
            mapping = self._paired.mapping(cell_index)
        notebook = self._paired.notebook or {}
        cell = notebook["cells"][mapping.notebook_cell_index]
        spans = self._paired.script.line_spans
        return _resolved(
            mapping.notebook_path,
            mapping.notebook_cell_index,
            cell,
            mapping.mapping,
            (mapping.py_path, mapping.py_cell_index),
            line_span=None if spans is None else spans[mapping.py_cell_index],
        )

    def list_outputs(
        self, cell_index: int, *, max_transport_bytes: int = MAX_TRANSPORT_BYTES
    ) -> dict[str, Any]:
        """The output directory of one cell; see :func:`list_notebook_outputs`."""
        resolved = self.resolve_cell(cell_index)
        return list_outputs(
            _cell_outputs(resolved.cell),
            source=resolved.source,
            max_transport_bytes=max_transport_bytes,
        )

    def list_outputs_head(self, cell_index: int, *, max_bytes: int) -> dict[str, Any]:
        """The output directory of one cell cut to the first outputs fitting ``max_bytes``,
        with ``omitted_outputs``; see :func:`jupyter_jcli.outputs._directory.list_outputs_head`.
        """
        from jupyter_jcli.outputs._directory import list_outputs_head

        resolved = self.resolve_cell(cell_index)
        return list_outputs_head(
            _cell_outputs(resolved.cell), source=resolved.source, max_bytes=max_bytes
        )

    def read_output(
        self, cell_index: int, output_index: int, **options: Unpack[ReadOptions]
    ) -> dict[str, Any]:
        """Read one saved output of one cell; see :func:`read_notebook_output`."""
        resolved = self.resolve_cell(cell_index)
        return read_output(
            _cell_outputs(resolved.cell), output_index, source=resolved.source, **options
        )


def open_notebook(file_path: str | os.PathLike[str]) -> NotebookOutputs:
    """Load an ``.ipynb`` (or a ``.py`` and its paired notebook) once, to read many cells.

    Args:
        file_path: an ``.ipynb`` notebook (any nbformat 4 minor version, or nbformat 3), or a
            ``.py`` file paired with one through jupytext.

    Returns:
        The loaded file. For a ``.py`` whose pair cannot be found or read, the object still
        lists the script's cells and keeps the error in ``pairing_error``.

    Raises:
        OutputProtocolError: ``FILE_NOT_FOUND``, ``FILE_TYPE_UNSUPPORTED``,
            ``NOTEBOOK_READ_FAILED`` (for a ``.py``: of the ``.py`` file itself),
            ``USAGE_ERROR`` (empty path, NUL byte); see ``jupyter_jcli.notebook.io``.
    """
    suffix = Path(file_path).suffix
    with _as_protocol_errors():
        if suffix.lower() == NOTEBOOK_SUFFIX:
            notebook = read_notebook(file_path)
            cells: list[dict[str, Any]] = notebook["cells"]
            notebook_path = display_path(file_path)  # resolved: read_notebook checked it
            metadata = notebook.get("metadata")
            return NotebookOutputs(
                kind="ipynb",
                path=notebook_path,
                cells=cells,
                notebook_path=notebook_path,
                metadata=metadata if isinstance(metadata, dict) else {},
            )
        if suffix.lower() == _PY_SUFFIX:
            from jupyter_jcli.notebook.pairing import read_pair

            paired = read_pair(file_path)
    if suffix.lower() == _PY_SUFFIX:
        error = paired.pairing_error
        return NotebookOutputs(
            kind="py",
            path=paired.script.path,
            cells=paired.script.cells,
            notebook_path=paired.notebook_path,
            pairing_error=None
            if error is None
            else OutputProtocolError(error.code, error.message, error.details),
            paired=paired,
        )
    shown = display_path(file_path)
    raise OutputProtocolError(
        ErrorCode.FILE_TYPE_UNSUPPORTED,
        f"{shown} is neither a notebook ({NOTEBOOK_SUFFIX}) nor a paired {_PY_SUFFIX} file.",
        {"path": str(shown), "suffix": suffix, "supported": [NOTEBOOK_SUFFIX, _PY_SUFFIX]},
    )


def resolve_notebook_cell(file_path: str | os.PathLike[str], cell_index: int) -> ResolvedCell:
    """Find the notebook cell addressed by a file path and a physical cell index.

    Loads the file for this one cell; to read many cells, use :func:`open_notebook` once.

    Args:
        file_path: an ``.ipynb`` notebook (any nbformat 4 minor version, or nbformat 3), or a
            ``.py`` file paired with one through jupytext.
        cell_index: physical zero-based index of the cell in the file supplied (for a ``.py``
            file, among its cells as jupytext reads them).

    Returns:
        The cell, its provenance, the notebook path and cell index actually read, the
        requested path and index, and the mapping rule.

    Raises:
        OutputProtocolError: ``FILE_NOT_FOUND`` (missing file, a directory, a dangling link,
            a link loop, a name too long), ``FILE_TYPE_UNSUPPORTED`` (not ``.ipynb`` or
            ``.py``), ``NOTEBOOK_READ_FAILED`` (not a regular file, unreadable, not UTF-8,
            invalid JSON, not a notebook, unsupported nbformat), ``USAGE_ERROR`` (empty path,
            NUL byte), ``CELL_NOT_FOUND`` (negative, non-integer, boolean or out-of-range
            index; details ``cell_count``), ``NOTEBOOK_PAIR_NOT_FOUND`` and
            ``CELL_MAPPING_UNRELIABLE`` (``.py`` only).
    """
    return open_notebook(file_path).resolve_cell(cell_index)


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
    return open_notebook(file_path).list_outputs(
        cell_index, max_transport_bytes=max_transport_bytes
    )


def read_notebook_output(
    file_path: str | os.PathLike[str],
    cell_index: int,
    output_index: int,
    **options: Unpack[ReadOptions],
) -> dict[str, Any]:
    """Read one saved output of one notebook cell (see :func:`jupyter_jcli.outputs.read_output`).

    Args:
        file_path: ``.ipynb`` or paired ``.py`` file.
        cell_index: physical zero-based cell index in that file.
        output_index: physical zero-based index in the cell's ``outputs``.
        options: ``mime_type``, ``supported_mime_types``, ``offset``, ``limit`` and
            ``max_transport_bytes``, as :func:`jupyter_jcli.outputs.read_output` takes them
            (the defaults are its own).

    Returns:
        The read response, ``source`` being the cell's :class:`CellProvenance` plus
        ``output_index``.

    Raises:
        OutputProtocolError: the codes of :func:`resolve_notebook_cell` and of ``read_output``.
    """
    return open_notebook(file_path).read_output(cell_index, output_index, **options)
