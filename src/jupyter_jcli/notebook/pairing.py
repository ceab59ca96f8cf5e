"""``.py`` files paired with notebooks: finding the pair and mapping cells, read-only.

A ``.py`` file (py:percent, or any other script format jupytext reads: light, hydrogen,
nomarker, ...) is parsed with jupytext, never with a parser of our own. Its paired notebook is
found through jupytext's pairing rules (``jupytext.paired_paths``). A ``.py`` cell is mapped
to a notebook cell only by a unique shared stable id or by a unique, non-conflicting
``(cell_type, source)`` match; see :func:`map_py_cell`. These functions never write, sync or
create anything. jupytext is imported only when a ``.py`` file is read.

Pairing reference: https://jupytext.readthedocs.io/en/latest/paired-notebooks.html
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from jupyter_jcli.errors import SCHEMA_VERSION, ErrorCode, NotebookError
from jupyter_jcli.notebook._cell_match import CellMatch, CellMatcher, cell_name, normalized_source
from jupyter_jcli.notebook._pair_search import find_pair
from jupyter_jcli.notebook._paths import (
    decode_utf8,
    read_input_bytes,
    require_suffix,
    resolve_input,
)
from jupyter_jcli.notebook.io import check_cell_index, read_notebook

__all__ = [
    "PY_SUFFIX",
    "CellMapping",
    "PairedCell",
    "PairedScript",
    "PyScript",
    "find_paired_notebook",
    "jupytext_failed",
    "map_pair",
    "map_py_cell",
    "read_pair",
    "read_py",
    "resolve_py_cell",
]

PY_SUFFIX = ".py"
"""The suffix of the text files that can be paired (compared case-insensitively)."""


@dataclass(frozen=True)
class CellMapping:
    """Where a ``.py`` cell lives in its paired notebook.

    Attributes:
        py_path: the ``.py`` file, absolute.
        py_cell_index: physical zero-based index of the cell among the ``.py`` cells, as
            jupytext reads them (the header is not a cell).
        notebook_path: the paired ``.ipynb``, absolute.
        notebook_cell_index: physical zero-based index of the matched notebook cell.
        mapping: ``"id"`` (shared cell name or cell id) or ``"content"`` (unique same type
            and source).
    """

    py_path: Path
    py_cell_index: int
    notebook_path: Path
    notebook_cell_index: int
    mapping: Literal["id", "content"]


@dataclass(frozen=True)
class PyScript:
    """A ``.py`` file as jupytext reads it.

    Attributes:
        path: the file, absolute.
        metadata: notebook metadata from the file's header (``{}`` without header).
        cells: the cells as plain nbformat 4 cell dicts, without the random ``id`` jupytext
            gives each cell of a text file (it changes on every read).
        line_spans: per cell, its first and last non-blank line in the file (1-based,
            inclusive; None for a cell with none), from the same jupytext parse; None when
            they cannot be tied to the cells.
    """

    path: Path
    metadata: dict[str, Any]
    cells: list[dict[str, Any]]
    line_spans: tuple[tuple[int, int] | None, ...] | None = None


@dataclass(frozen=True)
class PairedCell:
    """A mapped ``.py`` cell together with the notebook it was mapped into.

    Attributes:
        mapping: where the cell lives.
        notebook: the paired notebook as read (see ``notebook.io.read_notebook``).
    """

    mapping: CellMapping
    notebook: dict[str, Any]


def read_py(py_path: str | os.PathLike[str]) -> PyScript:
    """Parse a ``.py`` file with jupytext (format inferred: header, then jupytext's guess).

    Args:
        py_path: the ``.py`` file.

    Returns:
        The parsed file.

    Raises:
        NotebookError: ``FILE_TYPE_UNSUPPORTED`` (suffix not ``.py``), ``FILE_NOT_FOUND``
            (missing, a directory, a dangling link or link loop), ``NOTEBOOK_READ_FAILED``
            (not a regular file, unreadable, not UTF-8, or jupytext cannot parse it),
            ``USAGE_ERROR`` (empty path or a NUL byte); see ``notebook._paths``.
    """
    require_suffix(py_path, PY_SUFFIX, "is not a .py file.")
    path = resolve_input(py_path)
    text = decode_utf8(read_input_bytes(path), path)

    from jupyter_jcli.notebook._py_lines import read_script

    try:
        node, spans = read_script(text, PY_SUFFIX)
        plain: dict[str, Any] = orjson.loads(orjson.dumps(node))
    except Exception as err:  # jupytext raises many kinds on malformed headers
        raise jupytext_failed(f"parse {path}", path, err) from err
    metadata = plain.get("metadata")
    every = plain.get("cells") or []
    cells = [cell for cell in every if isinstance(cell, dict)]
    for cell in cells:
        # jupytext mints a fresh random id for every cell of a text file on every read: it
        # identifies nothing, so it is never shown nor used (an id written explicitly on the
        # cell's line stays in its metadata).
        cell.pop("id", None)
    return PyScript(
        path=path,
        metadata=metadata if isinstance(metadata, dict) else {},
        cells=cells,
        line_spans=tuple(spans) if spans is not None and len(cells) == len(every) else None,
    )


def jupytext_failed(doing: str, path: Path, err: Exception) -> NotebookError:
    """The ``NOTEBOOK_READ_FAILED`` for jupytext failing to ``doing`` (what it was asked,
    naming ``path``) on ``path``; raise it ``from err``."""
    return NotebookError(
        ErrorCode.NOTEBOOK_READ_FAILED, f"jupytext could not {doing}: {err}.", {"path": str(path)}
    )


def find_paired_notebook(py_path: str | os.PathLike[str]) -> Path:
    """The notebook paired with a ``.py`` file, by jupytext's pairing rules.

    Tried in order: the ``jupytext.formats`` recorded in the ``.py`` header (e.g.
    ``ipynb,py:percent`` or ``notebooks//ipynb,scripts//py:percent``, expanded with
    ``jupytext.paired_paths``); the same-stem ``.ipynb`` beside it; a bounded search of nearby
    folders for a same-stem notebook whose own ``metadata.jupytext.formats`` pairs it with
    this file.

    Args:
        py_path: the ``.py`` file.

    Returns:
        The absolute path of the paired ``.ipynb``.

    Raises:
        NotebookError: ``NOTEBOOK_PAIR_NOT_FOUND`` when none (or several) is found, plus the
            codes of :func:`read_py`.
    """
    script = read_py(py_path)
    return find_pair(script.path, script.metadata)


@dataclass(frozen=True)
class PairedScript:
    """A ``.py`` file, its paired notebook, and the mapping of every cell, computed once.

    Attributes:
        script: the parsed ``.py`` file.
        notebook_path: the paired ``.ipynb`` (absolute), None when it could not be found or
            read.
        notebook: the paired notebook as read, None likewise.
        pairing_error: why there is no notebook (``NOTEBOOK_PAIR_NOT_FOUND``, or the codes
            of ``read_notebook`` for the paired file), None when there is one.
        matches: per ``.py`` cell, the notebook cell it maps to or the
            ``CELL_MAPPING_UNRELIABLE`` error refusing it (empty without a notebook).
    """

    script: PyScript
    notebook_path: Path | None
    notebook: dict[str, Any] | None
    pairing_error: NotebookError | None
    matches: list[CellMatch | NotebookError]

    @property
    def cell_count(self) -> int:
        """How many cells the ``.py`` file has, as jupytext reads it."""
        return len(self.script.cells)

    def mapping(self, cell_index: object) -> CellMapping:
        """The mapping of the ``.py`` cell at ``cell_index``.

        Raises:
            NotebookError: ``CELL_NOT_FOUND`` (bad index, checked first), then
                :attr:`pairing_error`, then ``CELL_MAPPING_UNRELIABLE`` (details ``path``,
                ``cell_index``, ``notebook_path`` and the matching rule's facts).
        """
        index = check_cell_index(cell_index, self.cell_count, path=self.script.path)
        if self.pairing_error is not None or self.notebook_path is None:
            raise self.pairing_error or NotebookError(
                ErrorCode.NOTEBOOK_PAIR_NOT_FOUND, f"No notebook paired with {self.script.path}."
            )
        match = self.matches[index]
        if isinstance(match, NotebookError):
            context = {
                "path": str(self.script.path),
                "cell_index": index,
                "notebook_path": str(self.notebook_path),
            }
            raise NotebookError(match.code, match.message, {**context, **match.details})
        return CellMapping(
            py_path=self.script.path,
            py_cell_index=index,
            notebook_path=self.notebook_path,
            notebook_cell_index=match.notebook_cell_index,
            mapping=match.mapping,
        )


def read_pair(py_path: str | os.PathLike[str]) -> PairedScript:
    """Parse a ``.py`` file once, find and read its notebook once, and map every cell.

    A missing or unreadable notebook does not fail the call: it is kept as
    :attr:`PairedScript.pairing_error` and raised by :meth:`PairedScript.mapping`, so the
    script's own cells can still be listed.

    Raises:
        NotebookError: the codes of :func:`read_py` (the ``.py`` file itself).
    """
    script = read_py(py_path)
    try:
        notebook_path = find_pair(script.path, script.metadata)
        notebook = read_notebook(notebook_path)
    except NotebookError as err:
        return PairedScript(script, None, None, err, [])
    matches = CellMatcher(script.cells, notebook["cells"]).match_all()
    return PairedScript(script, notebook_path, notebook, None, matches)


def resolve_py_cell(py_path: str | os.PathLike[str], cell_index: int) -> PairedCell:
    """Map one ``.py`` cell to its notebook cell and return the notebook read for it.

    Same rules and errors as :func:`map_py_cell`; the notebook is returned too so a caller
    reading outputs does not read it twice.
    """
    paired = read_pair(py_path)
    mapping = paired.mapping(cell_index)
    assert paired.notebook is not None  # mapping() raised otherwise
    return PairedCell(mapping=mapping, notebook=paired.notebook)


def map_py_cell(py_path: str | os.PathLike[str], cell_index: int) -> CellMapping:
    """Map the ``.py`` cell at ``cell_index`` to its cell in the paired notebook.

    Rules, in order (never a position or similarity guess):

    1. a unique shared stable id: the cell name ``metadata.jupyter_mcp.name`` (jupytext keeps
       cell metadata on the ``# %%`` line), or the cell id when the ``.py`` cell states one
       explicitly in its metadata;
    2. a unique, non-conflicting ``(cell_type, source)`` match, sources compared with trailing
       whitespace per line and surrounding blank lines removed. The content must occur once
       on each side, and the notebook cell must not carry a different name/id nor be claimed
       by another ``.py`` cell's name/id.

    Args:
        py_path: the ``.py`` file.
        cell_index: physical zero-based index among the ``.py`` cells as jupytext reads them.

    Returns:
        The mapping.

    Raises:
        NotebookError: ``CELL_NOT_FOUND`` (bad index; details ``cell_count``),
            ``CELL_MAPPING_UNRELIABLE`` (no unique reliable match; details ``reason``,
            ``candidates``, ...), ``NOTEBOOK_PAIR_NOT_FOUND``, ``FILE_NOT_FOUND``,
            ``FILE_TYPE_UNSUPPORTED``, ``NOTEBOOK_READ_FAILED``.
    """
    return resolve_py_cell(py_path, cell_index).mapping


def _map_row(paired: PairedScript, index: int, notebook_cells: list[Any]) -> dict[str, Any]:
    """The row of ``.py`` cell ``index`` in :func:`map_pair`'s document."""
    cell = paired.script.cells[index]
    spans = paired.script.line_spans
    span = spans[index] if spans is not None else None
    row: dict[str, Any] = {
        "python_index": index,
        "notebook_index": None,
        "name": cell_name(cell),
        "notebook_cell_id": None,
        "type": cell.get("cell_type"),
        "source_start_line": span[0] if span is not None else None,
        "source_end_line": span[1] if span is not None else None,
        "alignment": None,
        "change": None,
    }
    match = paired.matches[index]
    if isinstance(match, NotebookError):
        row["reason"] = match.details.get("reason")
        row["problem"] = {"code": str(match.code), "message": match.message}
        candidates = match.details.get("candidates")
        if candidates:
            row["candidates"] = candidates
        return row
    target = notebook_cells[match.notebook_cell_index]
    same = target.get("cell_type") == cell.get("cell_type") and normalized_source(
        target
    ) == normalized_source(cell)
    cell_id = target.get("id")
    row.update(
        notebook_index=match.notebook_cell_index,
        name=cell_name(target) or row["name"],
        notebook_cell_id=cell_id if isinstance(cell_id, str) else None,
        alignment=match.mapping,
        change="equal" if same else "edited",
    )
    return row


def map_pair(py_path: str | os.PathLike[str]) -> dict[str, Any]:
    """How every cell of a ``.py`` file maps to its paired notebook, and by which rule.

    The rules are :func:`map_py_cell`'s (one matcher, :class:`CellMatcher`): a row per
    ``.py`` cell, in order, then one per notebook cell no ``.py`` cell maps to. A mapped row
    has ``alignment`` (the rule: ``"id"`` or ``"content"``) and ``change`` (``"equal"``, or
    ``"edited"`` when an id maps it to a cell whose type or source differs); an unmapped
    ``.py`` row has ``reason`` (``no_match``, ``ambiguous_content``, ``duplicated_in_py``,
    ``conflict``, ``duplicate_name``, ...) and ``problem`` (the ``CELL_MAPPING_UNRELIABLE``
    refusal, ``{"code", "message"}``), with ``candidates`` when several notebook cells
    qualified; a notebook-only row has ``python_index`` None and ``reason``
    ``"not_mapped"``. Shapes follow jupyter-jcli 0.9.7's ``notebook map -j`` (``python_path``,
    ``notebook_path``, ``cells`` of ``python_index``, ``notebook_index``, ``type``,
    ``source_start_line``, ``source_end_line``, ``alignment``, ``change``); its baseline
    fields are not given (no baseline is kept). Reads only.

    Returns:
        ``{"schema_version", "status", "operation": "notebook_map", "python_path",
        "notebook_path", "cell_count", "notebook_cell_count", "mapped", "cells": [...]}``.

    Raises:
        NotebookError: ``NOTEBOOK_PAIR_NOT_FOUND`` (no paired notebook), the codes of
            :func:`read_py` (``FILE_TYPE_UNSUPPORTED`` for a file that is not ``.py``) and of
            ``read_notebook`` for the paired notebook.
    """
    paired = read_pair(py_path)
    if paired.pairing_error is not None or paired.notebook is None:
        raise paired.pairing_error or NotebookError(
            ErrorCode.NOTEBOOK_PAIR_NOT_FOUND, f"No notebook paired with {paired.script.path}."
        )
    notebook_cells = [c if isinstance(c, dict) else {} for c in paired.notebook["cells"]]
    rows = [_map_row(paired, index, notebook_cells) for index in range(paired.cell_count)]
    mapped = {row["notebook_index"] for row in rows if row["notebook_index"] is not None}
    for index, cell in enumerate(notebook_cells):
        if index in mapped:
            continue
        cell_id = cell.get("id")
        rows.append(
            {
                "python_index": None,
                "notebook_index": index,
                "name": cell_name(cell),
                "notebook_cell_id": cell_id if isinstance(cell_id, str) else None,
                "type": cell.get("cell_type"),
                "source_start_line": None,
                "source_end_line": None,
                "alignment": None,
                "change": None,
                "reason": "not_mapped",
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "ok",
        "operation": "notebook_map",
        "python_path": str(paired.script.path),
        "notebook_path": str(paired.notebook_path),
        "cell_count": paired.cell_count,
        "notebook_cell_count": len(notebook_cells),
        "mapped": len(mapped),
        "cells": rows,
    }
