"""Writing an nbformat 3 notebook back as nbformat 3.

The read path upgrades an nbformat 3 file in memory (``nbformat.v4.upgrade``, see
``notebook.io``), and edits apply to that upgrade. Jupyter would save the result as nbformat 4
and drop ``metadata.name``; here the file keeps its format, which nbformat still writes
(``nbformat.v4.downgrade``, ``nbformat.writes(nb, version=3)``):

- the notebook-level fields (``metadata`` with ``name`` and ``signature``, ``nbformat_minor``,
  the worksheet objects) are the stored ones;
- a cell whose upgrade is unchanged by the edit is the stored v3 cell, byte for byte;
- a changed cell is the stored v3 cell with only the changed fields converted back: ``source``
  (``input`` for code; a heading cell stays a heading while its source is one ``#`` line, as
  ``nbformat.v4.downgrade_cell`` decides), ``metadata`` (``collapsed`` back at cell level),
  ``outputs`` (``nbformat.v4.downgrade_outputs``) and ``execution_count``
  (``prompt_number``);
- a new cell, or one whose type changed, is converted whole by
  ``nbformat.v4.downgrade_cell``, its code ``language`` being the notebook's.

Cells stay in their worksheet (a new cell joins the worksheet of the cell before it); the
order of the upgrade's flat cell list is kept. Reference:
https://nbformat.readthedocs.io/en/latest/format_description.html (v3: ``worksheets``).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook._pairs import split_source
from jupyter_jcli.notebook._v3read import plain_copy
from jupyter_jcli.notebook.io import cell_source

__all__ = ["V3Original", "read_v3", "render_v3"]


@dataclass(frozen=True)
class V3Original:
    """A stored nbformat 3 notebook.

    Attributes:
        document: the whole file as parsed exactly (``_exact``).
        cells: its cells in reading order (worksheets flattened), the stored objects.
        worksheet_of: for each of ``cells``, the index of its worksheet.
        language: the ``language`` of new code cells (the first stored code cell's, else
            ``"python"``).
        source_like: the first stored cell's text (``input`` or ``source``): new cells store
            theirs the same way (a string or a list of lines).
    """

    document: dict[str, Any]
    cells: list[dict[str, Any]]
    worksheet_of: list[int]
    language: str
    source_like: object


def read_v3(raw: bytes, path: Path) -> V3Original | None:
    """The stored nbformat 3 document of ``raw``, or ``None`` if it is not nbformat 3.

    Raises:
        NotebookError: ``NOTEBOOK_READ_FAILED`` if the bytes are not JSON (the read path has
            accepted them, so only a file changed in between).
    """
    from jupyter_jcli.notebook._exact import loads_exact
    from jupyter_jcli.notebook._paths import decode_utf8

    try:
        document = loads_exact(decode_utf8(raw, path))
    except (ValueError, RecursionError) as err:
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED, f"{path} is not valid JSON.", {"path": str(path)}
        ) from err
    if not isinstance(document, dict) or document.get("nbformat") != 3:
        return None
    cells: list[dict[str, Any]] = []
    worksheet_of: list[int] = []
    for ws_index, worksheet in enumerate(document.get("worksheets") or []):
        for cell in worksheet.get("cells") or []:
            cells.append(cell)
            worksheet_of.append(ws_index)
    language = next(
        (
            cell["language"]
            for cell in cells
            if cell.get("cell_type") == "code" and isinstance(cell.get("language"), str)
        ),
        "python",
    )
    like: object = next((cell.get("input", cell.get("source")) for cell in cells), [])
    return V3Original(document, cells, worksheet_of, language, like)


def render_v3(
    original: V3Original,
    upgraded: list[dict[str, Any]],
    cells: list[dict[str, Any]],
    origins: Sequence[int | None],
) -> dict[str, Any]:
    """The nbformat 3 document holding ``cells`` (see the module docstring).

    Args:
        original: the stored document.
        upgraded: the nbformat 4 upgrade of ``original.cells``, one for one.
        cells: the cells after the edit (nbformat 4).
        origins: for each of ``cells``, the index in ``upgraded`` of the stored cell it was,
            ``None`` for a new cell (converted whole).
    """
    worksheets = [dict(ws) for ws in original.document.get("worksheets") or []]
    if not worksheets:
        worksheets = [{"cells": [], "metadata": {}}]
    placed: list[list[dict[str, Any]]] = [[] for _ in worksheets]
    current = 0
    for cell, origin in zip(cells, origins, strict=True):
        if origin is None:
            placed[current].append(_downgraded(cell, original))
            continue
        current = max(current, original.worksheet_of[origin])
        stored = original.cells[origin]
        if cell == upgraded[origin]:
            placed[current].append(stored)
        elif cell.get("cell_type") != upgraded[origin].get("cell_type"):
            placed[current].append(_downgraded(cell, original))
        else:
            placed[current].append(_patched(stored, upgraded[origin], cell))
    for worksheet, ws_cells in zip(worksheets, placed, strict=True):
        worksheet["cells"] = ws_cells
    document = dict(original.document)
    document["worksheets"] = worksheets
    return document


def _patched(
    stored: dict[str, Any], before: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    """``stored`` with the fields ``after`` changed from ``before`` converted back to v3."""
    cell = dict(stored)
    code = after.get("cell_type") == "code"
    if after.get("source") != before.get("source"):
        if code:
            cell["input"] = split_source(cell_source(after), stored.get("input"))
        else:
            _set_text_source(cell, after)
    if after.get("metadata") != before.get("metadata"):
        metadata = copy.deepcopy(after.get("metadata") or {})
        if code:
            if "collapsed" in metadata:
                cell["collapsed"] = metadata.pop("collapsed")
            else:
                cell.pop("collapsed", None)
        cell["metadata"] = metadata
    if code and after.get("outputs") != before.get("outputs"):
        cell["outputs"] = _downgraded_outputs(after.get("outputs") or [])
    if code and after.get("execution_count") != before.get("execution_count"):
        cell["prompt_number"] = after.get("execution_count")
    return cell


def _set_text_source(cell: dict[str, Any], after: dict[str, Any]) -> None:
    """Markdown/raw source; a stored heading stays one while the source is one ``#`` line."""
    import re

    text = cell_source(after)
    match = re.fullmatch(r"(#+)\s*(.*)", text) if "\n" not in text else None
    if cell.get("cell_type") == "heading" and match is not None:
        cell["level"] = len(match.group(1))
        cell["source"] = match.group(2)
        return
    if cell.get("cell_type") == "heading":
        cell["cell_type"] = "markdown"
        cell.pop("level", None)
    cell["source"] = split_source(text, cell.get("source"))


def _downgraded(cell: dict[str, Any], original: V3Original) -> dict[str, Any]:
    """A whole nbformat 4 cell converted by nbformat, its source kept in its stored form."""
    import nbformat
    from nbformat.v4.convert import downgrade_cell

    text = cell_source(cell)
    node = copy.deepcopy(cell)
    node["source"] = text
    node = nbformat.from_dict(node)  # type: ignore[no-untyped-call]
    converted: dict[str, Any] = plain_copy(downgrade_cell(node))  # type: ignore[no-untyped-call]
    if converted.get("cell_type") == "code":
        converted["language"] = original.language
        converted["input"] = split_source(text, original.source_like)
    elif converted.get("cell_type") != "heading":
        converted["source"] = split_source(text, original.source_like)
    return converted


def _downgraded_outputs(outputs: list[Any]) -> list[Any]:
    import nbformat
    from nbformat.v4.convert import downgrade_outputs

    nodes = [nbformat.from_dict(copy.deepcopy(output)) for output in outputs]  # type: ignore[no-untyped-call]
    result: list[Any] = plain_copy(downgrade_outputs(nodes))  # type: ignore[no-untyped-call]
    return result
