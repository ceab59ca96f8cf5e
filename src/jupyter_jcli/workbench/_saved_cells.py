"""The cells of a notebook as the saved-output protocol reads them: names and a paged listing.

``j-cli notebook cells|outputs|output|show`` address the cells of the file as the protocol reads
it (:mod:`jupyter_jcli.outputs.notebook`, in the active store: :func:`saved_outputs`), called
by the names the workbench gives them (:func:`saved_cell_names`: for a paired ``.py`` the
names of the document the workbench edits through it, :func:`document_cell_names`), so every
front end addresses the same cell by the same name. :func:`list_saved_cells` is one page of
:class:`SavedCellSummary` (the ``notebook cells`` document); :func:`saved_cell_summary` and
:func:`saved_outputs_source` are its parts, shared with ``notebook show``.

For an ``.ipynb`` the cells are the notebook's own. For a ``.py`` they are the script's cells
as jupytext reads them, each with the paired notebook cell it maps to when the mapping is
reliable (:func:`jupyter_jcli.notebook.pairing.map_py_cell`), else the reason it is not.
The file is parsed once; cells come in pages (``start``, ``limit``, ``next_start``) and a
page never exceeds the transport bound.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

from jupyter_jcli.errors import ErrorCode, JcliError, ok_document
from jupyter_jcli.notebook.io import first_line, multiline_text
from jupyter_jcli.outputs import MAX_TRANSPORT_BYTES, serialize_json

if TYPE_CHECKING:
    from jupyter_jcli.outputs.notebook import NotebookOutputs

__all__ = [
    "CELLS_PAGE_LIMIT",
    "SavedCellSummary",
    "document_cell_names",
    "list_saved_cells",
    "saved_cell_names",
    "saved_cell_summary",
    "saved_outputs_source",
]

CELLS_PAGE_LIMIT = 1_000
"""Default number of cells per :func:`list_saved_cells` page: a bounded document even for huge
notebooks."""

_NOT_EDITABLE = frozenset({ErrorCode.FILE_TYPE_UNSUPPORTED, ErrorCode.NOTEBOOK_PAIR_NOT_FOUND})
"""Codes with which the workbench declines to edit a ``.py`` the protocol can still read."""


class SavedCellSummary(TypedDict, total=False):
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


def _summary(index: int, cell: object, name: str, *, with_id: bool = True) -> SavedCellSummary:
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


def saved_cell_summary(
    loaded: NotebookOutputs, index: int, names: Sequence[str]
) -> SavedCellSummary:
    """The summary of cell ``index`` (a valid index) of a loaded file.

    ``names`` are the file's cell names (:func:`saved_cell_names`:
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


def saved_outputs_source(loaded: NotebookOutputs) -> dict[str, Any]:
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


def list_saved_cells(
    file_path: str | os.PathLike[str], *, start: int = 0, limit: int = CELLS_PAGE_LIMIT
) -> dict[str, Any]:
    """Summaries of one page of cells of an ``.ipynb`` or ``.py`` file (parsed once).

    Args:
        file_path: the ``.ipynb`` or ``.py`` file.
        start: index of the first cell of the page (at least 0).
        limit: most cells in the page, at least 1 (:data:`CELLS_PAGE_LIMIT` by default).

    Returns:
        ``{"schema_version": 1, "status": "ok", "source": {"kind", "path"}, "cell_count",
        "start", "returned_cells", "cells": [SavedCellSummary, ...]}`` plus ``next_start`` when
        more cells follow; for a ``.py`` the source also has ``paired_notebook`` (a path, or
        None with ``pairing_problem`` ``{"code", "message"}``). Its compact serialization is
        at most ``MAX_TRANSPORT_BYTES``.

    Raises:
        JcliError: the file codes of :func:`jupyter_jcli.outputs.notebook.open_notebook`;
            ``USAGE_ERROR`` for a ``start`` past the end; ``OUTPUT_TOO_LARGE`` when the page
            does not fit the transport bound (details ``bytes``, ``max_transport_bytes``, a
            smaller ``limit``).
    """
    from jupyter_jcli.workbench._overview import check_start
    from jupyter_jcli.workbench._store_outputs import saved_outputs

    loaded = saved_outputs(file_path)
    check_start(start, loaded.cell_count)
    end = min(loaded.cell_count, start + limit)
    names = saved_cell_names(loaded)
    document = ok_document(
        source=saved_outputs_source(loaded),
        cell_count=loaded.cell_count,
        start=start,
        returned_cells=end - start,
        cells=[saved_cell_summary(loaded, index, names) for index in range(start, end)],
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
        f"{MAX_TRANSPORT_BYTES} bytes; ask for fewer cells, for example a limit of {smaller}.",
        {"bytes": size, "max_transport_bytes": MAX_TRANSPORT_BYTES, "limit": smaller},
    )


def saved_cell_names(loaded: NotebookOutputs) -> list[str]:
    """The name of every cell of a file as the protocol reads it (see the module docstring).

    An ``.ipynb``: :func:`~jupyter_jcli.notebook.names.assign_names` over its cells. A ``.py``:
    the names of the document the workbench edits through it (:func:`document_cell_names`,
    whose cells are the script's cells in the same order); a script the workbench does not
    edit (no paired notebook, a format other than py:percent: codes
    :data:`_NOT_EDITABLE`) is named from its own cells by the same function.

    Raises:
        JcliError: another read code of :func:`document_cell_names` for a ``.py``.
    """
    from jupyter_jcli.notebook.names import assign_names

    if loaded.kind == "py" and loaded.pairing_error is None:
        try:
            _path, names = document_cell_names(str(loaded.path))
        except JcliError as err:
            if err.code not in _NOT_EDITABLE:
                raise
        else:
            assert len(names) == loaded.cell_count, "jupytext read the script twice differently"
            return names
    return assign_names(loaded.cells)


def document_cell_names(file: str) -> tuple[str, list[str]]:
    """The absolute path and the cell names of the document the workbench edits. Writes nothing.

    Raises:
        NotebookError: the read codes of :meth:`jupyter_jcli.notebook.document.Document.load`.
    """
    from jupyter_jcli.notebook.store import open_notebook

    document = open_notebook(file)  # in the command's store (--store)
    return str(document.path), [view.name for view in document.cells]
