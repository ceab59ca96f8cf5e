"""``j-cli notebook cells``: one summary line per cell, to find the cell to read.

For an ``.ipynb`` the cells are the notebook's own. For a ``.py`` they are the script's cells
as jupytext reads them, each with the paired notebook cell it maps to when the mapping is
reliable (:func:`jupyter_jcli.notebook.pairing.map_py_cell`), else the reason it is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypedDict

from jupyter_jcli.errors import SCHEMA_VERSION, ErrorCode, JcliError

__all__ = ["CellSummary", "cell_lines", "first_line", "summarize_cells"]

FIRST_LINE_WIDTH = 80
"""Longest first line (in characters) kept in a summary; longer ones end with ``…``."""
TEXT_LINE_WIDTH = 60
"""Longest first line shown in the text rendering."""
LABEL_WIDTH = 36
"""Widest name/id column in the text rendering (an nbformat id is up to 64 characters)."""


class CellSummary(TypedDict, total=False):
    """One cell: ``cell_index``, ``cell_type``, ``id``, ``name``, ``first_line``,
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


def first_line(source: object) -> str:
    """The first non-blank line of a cell source (a string or list of strings), shortened."""
    text = "".join(s for s in source if isinstance(s, str)) if isinstance(source, list) else source
    if not isinstance(text, str):
        return ""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            if len(stripped) > FIRST_LINE_WIDTH:
                return stripped[: FIRST_LINE_WIDTH - 1] + "…"
            return stripped
    return ""


def _name(cell: Mapping[str, Any]) -> str | None:
    metadata = cell.get("metadata")
    tool = metadata.get("jupyter_mcp") if isinstance(metadata, Mapping) else None
    name = tool.get("name") if isinstance(tool, Mapping) else None
    return name if isinstance(name, str) else None


def _outputs(cell: Mapping[str, Any]) -> tuple[int, list[str]]:
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        return 0, []
    types = []
    for output in outputs:
        kind = output.get("output_type") if isinstance(output, Mapping) else None
        types.append(kind if isinstance(kind, str) else "malformed")
    return len(outputs), types


def _summary(index: int, cell: object) -> CellSummary:
    if not isinstance(cell, Mapping):
        return {"cell_index": index, "cell_type": "malformed", "id": None, "name": None,
                "first_line": "", "output_count": 0, "output_types": []}  # fmt: skip
    count, types = _outputs(cell)
    cell_id = cell.get("id")
    cell_type = cell.get("cell_type")
    return {
        "cell_index": index,
        "cell_type": cell_type if isinstance(cell_type, str) else "malformed",
        "id": cell_id if isinstance(cell_id, str) else None,
        "name": _name(cell),
        "first_line": first_line(cell.get("source")),
        "output_count": count,
        "output_types": types,
    }


def summarize_cells(file_path: str) -> dict[str, Any]:
    """Summaries of every cell of an ``.ipynb`` or ``.py`` file.

    Returns:
        ``{"schema_version": 1, "status": "ok", "source": {"kind", "path"}, "cell_count",
        "cells": [CellSummary, ...]}``; for a ``.py`` the source also has
        ``paired_notebook`` (a path, or None with ``pairing_problem`` ``{"code", "message"}``).

    Raises:
        NotebookError: ``FILE_NOT_FOUND``, ``FILE_TYPE_UNSUPPORTED``, ``NOTEBOOK_READ_FAILED``
            (see :func:`jupyter_jcli.notebook.io.read_notebook` and
            :func:`jupyter_jcli.notebook.pairing.read_py`).
    """
    if Path(file_path).suffix.lower() == ".py":
        return _summarize_py(file_path)
    from jupyter_jcli.notebook.io import read_notebook

    document = read_notebook(file_path)
    cells = document.get("cells") or []
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "ok",
        "source": {"kind": "ipynb", "path": str(Path(file_path).resolve())},
        "cell_count": len(cells),
        "cells": [_summary(i, cell) for i, cell in enumerate(cells)],
    }


def _problem(err: JcliError) -> dict[str, str]:
    return {"code": str(err.code), "message": err.message}


def _summarize_py(file_path: str) -> dict[str, Any]:
    from jupyter_jcli.notebook.io import read_notebook
    from jupyter_jcli.notebook.pairing import find_paired_notebook, read_py

    script = read_py(file_path)
    source: dict[str, Any] = {"kind": "py", "path": str(script.path)}
    summaries = [_summary(i, cell) for i, cell in enumerate(script.cells)]
    try:
        notebook_path = find_paired_notebook(file_path)
        notebook_cells = read_notebook(notebook_path).get("cells") or []
    except JcliError as err:
        source["paired_notebook"] = None
        source["pairing_problem"] = _problem(err)
        for summary in summaries:
            summary["notebook_cell_index"] = None
            summary["mapping"] = None
        notebook_cells = []
    else:
        source["paired_notebook"] = str(notebook_path)
        for summary in summaries:
            _attach_mapping(summary, file_path, notebook_cells)
    return {
        "schema_version": SCHEMA_VERSION,
        "status": "ok",
        "source": source,
        "cell_count": len(summaries),
        "cells": summaries,
    }


def _attach_mapping(summary: CellSummary, file_path: str, notebook_cells: list[Any]) -> None:
    from jupyter_jcli.notebook.pairing import map_py_cell

    try:
        mapping = map_py_cell(file_path, summary["cell_index"])
    except JcliError as err:
        if err.code not in (ErrorCode.CELL_MAPPING_UNRELIABLE, ErrorCode.CELL_NOT_FOUND):
            raise
        summary["notebook_cell_index"] = None
        summary["mapping"] = None
        summary["mapping_problem"] = _problem(err)
        return
    summary["notebook_cell_index"] = mapping.notebook_cell_index
    summary["mapping"] = mapping.mapping
    notebook_cell = notebook_cells[mapping.notebook_cell_index]
    if isinstance(notebook_cell, Mapping):
        summary["output_count"], summary["output_types"] = _outputs(notebook_cell)


def cell_lines(document: Mapping[str, Any]) -> list[str]:
    """The text rendering of :func:`summarize_cells`: a header and one line per cell."""
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
    cells: list[Mapping[str, Any]] = list(document.get("cells") or [])
    labels = [str(cell.get("name") or cell.get("id") or "-") for cell in cells]
    width = min(max((len(label) for label in labels), default=1), LABEL_WIDTH)
    for cell, label in zip(cells, labels, strict=True):
        line = f"{cell.get('cell_index'):>4}  {cell.get('cell_type', '?'):<8}  {label:<{width}}"
        if is_py and source.get("paired_notebook"):
            if cell.get("notebook_cell_index") is not None:
                line += f"  nb:{cell['notebook_cell_index']:<4}"
            else:
                line += "  nb:-   "
        line += f"  {_clip(str(cell.get('first_line', '')), TEXT_LINE_WIDTH)}"
        if cell.get("output_count"):
            types = ", ".join(cell.get("output_types", []))
            line += f"  [{cell['output_count']} out: {types}]"
        lines.append(line)
    return lines


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
