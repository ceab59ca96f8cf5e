"""Reading an nbformat 3 notebook (``notebook.io``): the structure nbformat's upgrade relies
on checked first (a malformed file is ``NOTEBOOK_READ_FAILED`` with the reason, never an
exception from inside nbformat), then the upgrade to nbformat 4 in memory, as plain values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import orjson

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.io import _json_kind, _not_a_notebook

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["plain_copy", "upgrade_v3"]


def upgrade_v3(document: dict[str, Any], path: Path, *, exact: bool) -> dict[str, Any]:
    """Upgrade an nbformat 3 document to nbformat 4 with nbformat's converter."""
    reason = _v3_problem(document)
    if reason is not None:
        raise _not_a_notebook(path, f"it is nbformat 3 but {reason}")
    import nbformat
    from nbformat.v3.rwbase import strip_transient

    try:
        node = strip_transient(nbformat.v3.to_notebook_json(document))  # type: ignore[no-untyped-call]
        upgraded = nbformat.v4.upgrade(node, from_version=3, from_minor=0)  # type: ignore[no-untyped-call]
        plain: dict[str, Any] = plain_copy(upgraded) if exact else _fast_plain(upgraded)
    except Exception as err:  # nbformat raises anything from KeyError to ValidationError
        raise NotebookError(
            ErrorCode.NOTEBOOK_READ_FAILED,
            f"{path} is an nbformat 3 notebook that nbformat could not upgrade "
            f"({type(err).__name__}: {err}).",
            {"path": str(path), "nbformat": 3},
        ) from err
    for cell in plain.get("cells") or []:
        if isinstance(cell, dict):
            cell.pop("id", None)
    plain["nbformat_minor"] = 4
    return plain


def _fast_plain(node: Any) -> Any:
    """A NotebookNode tree as plain values, through orjson (fast); a value orjson cannot
    write (an integer beyond 64 bits, parsed by the upgrade from a v3 ``json`` output string)
    is copied as it is."""
    try:
        return orjson.loads(orjson.dumps(node))
    except TypeError:
        return plain_copy(node)


def plain_copy(node: Any) -> Any:
    """A NotebookNode tree as plain dicts and lists; other values (exact numbers) kept."""
    if isinstance(node, dict):
        return {key: plain_copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [plain_copy(value) for value in node]
    return node


_CELL_FIELDS: dict[str, tuple[type, str]] = {"metadata": (dict, "an object")}
"""The optional keys of a v3 cell the upgrade reads as they are, with the type each needs."""
_OUTPUT_FIELDS: dict[str, tuple[type, str]] = {**_CELL_FIELDS, "json": (str, "a string")}
"""Likewise for a v3 output (the upgrade parses a ``json`` output's string)."""


def _v3_node_problem(
    node: object, where: str, type_key: str, fields: dict[str, tuple[type, str]]
) -> str | None:
    """What is wrong with a v3 cell or output's frame: not an object, no string ``type_key``,
    one of ``fields`` present but not of its type (``None``: nothing)."""
    if not isinstance(node, dict):
        return f"{where} is {_json_kind(node)}, not an object"
    if not isinstance(node.get(type_key), str):
        return f"{where} has no string {type_key!r}"
    for key, (kind, described) in fields.items():
        if key in node and not isinstance(node[key], kind):
            return f"{where} has a {key!r} that is not {described}"
    return None


def _v3_cell_problem(cell: object, where: str) -> str | None:
    problem = _v3_node_problem(cell, where, "cell_type", _CELL_FIELDS)
    if problem is not None or not isinstance(cell, dict):
        return problem
    key = "input" if cell["cell_type"] == "code" else "source"
    text = cell.get(key, "")
    if not isinstance(text, str | list):
        return f"{where} has a {key!r} that is {_json_kind(text)}, not text"
    if cell["cell_type"] == "heading" and not isinstance(cell.get("level", 1), int):
        return f"{where} is a heading whose 'level' is not an integer"
    if cell["cell_type"] != "code":
        return None
    outputs = cell.get("outputs")
    if not isinstance(outputs, list):
        return f"{where} is a code cell whose 'outputs' is {_json_kind(outputs)}, not a list"
    for index, output in enumerate(outputs):
        output_where = f"output {index} of {where}"
        problem = _v3_node_problem(output, output_where, "output_type", _OUTPUT_FIELDS)
        if problem is not None:
            return problem
    return None


def _v3_problem(document: dict[str, Any]) -> str | None:
    """What is wrong with the structure nbformat's v3 upgrade relies on, or None.

    Structure from the nbformat 3 schema (``nbformat/v3/nbformat.v3.schema.json``): a
    ``worksheets`` list of objects, each with a ``cells`` list of cell objects; code cells
    hold ``input`` and an ``outputs`` list of objects with an ``output_type``.
    """
    if "metadata" in document and not isinstance(document["metadata"], dict):
        return f"its 'metadata' is {_json_kind(document['metadata'])}, not an object"
    worksheets = document.get("worksheets")
    if not isinstance(worksheets, list):
        return "it has no 'worksheets' list"
    for ws_index, worksheet in enumerate(worksheets):
        if not isinstance(worksheet, dict):
            return f"worksheet {ws_index} is {_json_kind(worksheet)}, not an object"
        cells = worksheet.get("cells")
        if not isinstance(cells, list):
            return f"worksheet {ws_index} has no 'cells' list"
        for index, cell in enumerate(cells):
            problem = _v3_cell_problem(cell, f"cell {index} of worksheet {ws_index}")
            if problem is not None:
                return problem
    return None
