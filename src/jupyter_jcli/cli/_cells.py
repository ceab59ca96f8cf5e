"""``j-cli notebook cells``: one summary line per cell, to find the cell to read.

For an ``.ipynb`` the cells are the notebook's own. For a ``.py`` they are the script's cells
as jupytext reads them, each with the paired notebook cell it maps to when the mapping is
reliable (:func:`jupyter_jcli.notebook.pairing.map_py_cell`), else the reason it is not.
The file is parsed once (:func:`jupyter_jcli.outputs.notebook.open_notebook`); cells come in
pages (``--start``, ``--limit``, ``next_start``) and a page never exceeds the transport bound.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from jupyter_jcli.cli._clip import clip
from jupyter_jcli.cli._emit import ok_document
from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.notebook.io import first_line, multiline_text
from jupyter_jcli.outputs import MAX_TRANSPORT_BYTES, serialize_json

if TYPE_CHECKING:
    from jupyter_jcli.outputs.notebook import NotebookOutputs

__all__ = [
    "CELLS_PAGE_LIMIT",
    "CellSummary",
    "cell_lines",
    "cell_summary",
    "file_source",
    "first_line",
    "summarize_cells",
]

CELLS_PAGE_LIMIT = 1_000
"""Default number of cells per ``cells`` page: a bounded document even for huge notebooks."""

TEXT_LINE_WIDTH = 60
"""Longest first line shown in the text rendering."""
LABEL_WIDTH = 36
"""Widest name/id column in the text rendering (an nbformat id is up to 64 characters)."""


class CellSummary(TypedDict, total=False):
    """One cell: ``cell_index``, ``cell_type``, ``id``, ``name`` (the overview's), ``first_line``,
    ``output_count``, ``output_types``; for a ``.py`` cell also ``notebook_cell_index`` and
    ``mapping`` (``"id"``/``"content"``) or ``mapping_problem`` (``{"code", "message"}``)."""

    cell_index: int
    cell_type: str
    id: str | None
    name: str | None
    first_line: str
    output_count: int
    output_types: list[str]
    notebook_cell_index: int | None
    mapping: str | None
    mapping_problem: dict[str, str]


def _outputs(cell: Mapping[str, Any]) -> tuple[int, list[str]]:
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        return 0, []
    types = []
    for output in outputs:
        kind = output.get("output_type") if isinstance(output, Mapping) else None
        types.append(kind if isinstance(kind, str) else "malformed")
    return len(outputs), types


def _summary(index: int, cell: object, name: str, *, with_id: bool = True) -> CellSummary:
    if not isinstance(cell, Mapping):
        return {"cell_index": index, "cell_type": "malformed", "id": None, "name": name,
                "first_line": "", "output_count": 0, "output_types": []}  # fmt: skip
    count, types = _outputs(cell)
    cell_id = cell.get("id") if with_id else None
    cell_type = cell.get("cell_type")
    return {
        "cell_index": index,
        "cell_type": cell_type if isinstance(cell_type, str) else "malformed",
        "id": cell_id if isinstance(cell_id, str) else None,
        "name": name,
        "first_line": first_line(multiline_text(cell.get("source"))),
        "output_count": count,
        "output_types": types,
    }


def _problem(err: JcliError) -> dict[str, str]:
    return {"code": str(err.code), "message": err.message}


def cell_summary(loaded: NotebookOutputs, index: int, names: Sequence[str]) -> CellSummary:
    """The summary of cell ``index`` (a valid index) of a loaded file.

    ``names`` are the file's cell names (:func:`jupyter_jcli.cli._cell_ref.loaded_cell_names`:
    the names ``j-cli notebook overview`` shows, computed, never written). For a ``.py``
    cell the id is the mapped notebook cell's (jupytext's per-read random ids are never
    shown), the outputs the mapped cell's; plus ``notebook_cell_index`` and ``mapping``, or
    ``mapping_problem`` when the mapping is not reliable.
    """
    cell = loaded.cells[index]
    if loaded.kind == "ipynb":
        return _summary(index, cell, names[index])
    summary = _summary(index, cell, names[index], with_id=False)
    summary.update({"notebook_cell_index": None, "mapping": None})
    if loaded.pairing_error is not None:
        return summary
    try:
        resolved = loaded.resolve_cell(index)
    except JcliError as err:
        if err.code not in (ErrorCode.CELL_MAPPING_UNRELIABLE, ErrorCode.CELL_NOT_FOUND):
            raise
        summary["mapping_problem"] = _problem(err)
        return summary
    mapped = _summary(resolved.source["cell_index"], resolved.cell, names[index])
    return {
        **summary,
        "id": mapped["id"],
        "output_count": mapped["output_count"],
        "output_types": mapped["output_types"],
        "notebook_cell_index": resolved.source["cell_index"],
        "mapping": resolved.source["mapping"],
    }


def file_source(loaded: NotebookOutputs) -> dict[str, Any]:
    """The ``source`` object of ``cells`` and ``show``: ``kind`` and absolute ``path``; for a
    ``.py`` also ``paired_notebook`` (or None with ``pairing_problem``)."""
    source: dict[str, Any] = {"kind": loaded.kind, "path": str(loaded.path)}
    if loaded.kind == "py":
        paired = loaded.notebook_path
        source["paired_notebook"] = str(paired) if paired is not None else None
        if loaded.pairing_error is not None:
            source["pairing_problem"] = _problem(loaded.pairing_error)
    facts = _pair_out_of_sync(loaded)
    if facts is not None:
        source["pair_out_of_sync"] = facts
    return source


def _pair_out_of_sync(loaded: NotebookOutputs) -> dict[str, Any] | None:
    """For a file of a pair whose sides hold different inputs, the facts
    (``Document.pair_out_of_sync``) with ``shown`` the side these listings show: the cells
    of the file named (``"text"`` for the ``.py``, ``"notebook"`` for the ``.ipynb``). The
    pair is read again only for a ``.py`` with a notebook or an ``.ipynb`` naming formats."""
    if loaded.kind == "py" and loaded.notebook_path is None:
        return None
    if loaded.kind == "ipynb":
        jupytext = loaded.metadata.get("jupytext")
        if not isinstance(jupytext, dict) or not jupytext.get("formats"):
            return None
    from jupyter_jcli.errors import NotebookError
    from jupyter_jcli.notebook.document import Document

    try:
        facts = Document.load(loaded.path).pair_out_of_sync
    except NotebookError:
        return None
    if facts is None:
        return None
    return {**facts, "shown": "text" if loaded.kind == "py" else "notebook"}


def summarize_cells(
    file_path: str, *, start: int = 0, limit: int = CELLS_PAGE_LIMIT
) -> dict[str, Any]:
    """Summaries of one page of cells of an ``.ipynb`` or ``.py`` file (parsed once).

    Args:
        file_path: the ``.ipynb`` or ``.py`` file.
        start: index of the first cell of the page (at least 0).
        limit: most cells in the page, at least 1 (:data:`CELLS_PAGE_LIMIT` by default).

    Returns:
        ``{"schema_version": 1, "status": "ok", "source": {"kind", "path"}, "cell_count",
        "start", "returned_cells", "cells": [CellSummary, ...]}`` plus ``next_start`` when
        more cells follow; for a ``.py`` the source also has ``paired_notebook`` (a path, or
        None with ``pairing_problem`` ``{"code", "message"}``). Its compact serialization is
        at most ``MAX_TRANSPORT_BYTES``.

    Raises:
        JcliError: the file codes of :func:`jupyter_jcli.outputs.notebook.open_notebook`;
            ``USAGE_ERROR`` for a ``start`` past the end; ``OUTPUT_TOO_LARGE`` when the page
            does not fit the transport bound (details ``bytes``, ``max_transport_bytes``, a
            smaller ``limit``).
    """
    from jupyter_jcli.cli._cell_ref import loaded_cell_names
    from jupyter_jcli.workbench import check_start
    from jupyter_jcli.workbench import saved_outputs as open_notebook

    loaded = open_notebook(file_path)
    check_start(start, loaded.cell_count, label="--start")
    end = min(loaded.cell_count, start + limit)
    names = loaded_cell_names(loaded)
    document = ok_document(
        source=file_source(loaded),
        cell_count=loaded.cell_count,
        start=start,
        returned_cells=end - start,
        cells=[cell_summary(loaded, index, names) for index in range(start, end)],
    )
    if end < loaded.cell_count:
        document["next_start"] = end
    _check_transport(document, end - start)
    return document


def _check_transport(document: dict[str, Any], returned: int) -> None:
    size = len(serialize_json(document))
    if size <= MAX_TRANSPORT_BYTES:
        return
    smaller = max(1, returned * MAX_TRANSPORT_BYTES // size // 2)
    raise JcliError(
        ErrorCode.OUTPUT_TOO_LARGE,
        f"The page of {returned} cells would be {size} bytes, over the transport limit of "
        f"{MAX_TRANSPORT_BYTES} bytes; ask for fewer cells, for example --limit {smaller}.",
        {"bytes": size, "max_transport_bytes": MAX_TRANSPORT_BYTES, "limit": smaller},
    )


def cell_lines(document: Mapping[str, Any], file_arg: str | None = None) -> list[str]:
    """The text rendering of :func:`summarize_cells`: a header, one line per cell, and how
    to get the next page when there is one (``file_arg`` as the user typed it)."""
    source = document.get("source") or {}
    is_py = source.get("kind") == "py"
    lines = [f"{source.get('path')}: {document.get('cell_count')} cells"]
    if is_py:
        paired = source.get("paired_notebook")
        if paired:
            lines[0] += f", paired with {paired}"
        else:
            problem = source.get("pairing_problem") or {}
            lines[0] += f", no paired notebook ({problem.get('code')})"
    from jupyter_jcli.cli._document_render import pair_lines
    from jupyter_jcli.cli._render import j_cli

    lines.extend(pair_lines(source.get("pair_out_of_sync")))
    cells: list[Mapping[str, Any]] = list(document.get("cells") or [])
    labels = [str(cell.get("name") or cell.get("id") or "-") for cell in cells]
    width = min(max((len(label) for label in labels), default=1), LABEL_WIDTH)
    for cell, label in zip(cells, labels, strict=True):
        name = clip(label, width)
        line = f"{cell.get('cell_index'):>4}  {cell.get('cell_type', '?'):<8}  {name:<{width}}"
        if is_py and source.get("paired_notebook"):
            if cell.get("notebook_cell_index") is not None:
                line += f"  nb:{cell['notebook_cell_index']:<4}"
            else:
                line += "  nb:-   "
        line += f"  {clip(str(cell.get('first_line', '')), TEXT_LINE_WIDTH)}"
        if cell.get("output_count"):
            types = ", ".join(cell.get("output_types", []))
            line += f"  [{cell['output_count']} out: {types}]"
        lines.append(line)
    next_start = document.get("next_start")
    if isinstance(next_start, int):
        remaining = int(document.get("cell_count", 0)) - next_start
        command = j_cli("notebook", "cells", file_arg or source.get("path"), "--start", next_start)
        lines.append(f"… {remaining} more cells; next page: {command}")
    return lines
