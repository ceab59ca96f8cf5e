"""Pure matching of one ``.py`` cell to one notebook cell (no files, no jupytext).

Only two rules are used, in this order:

1. a unique shared stable id: the cell name at ``metadata.jupyter_mcp.name`` on both sides,
   or the cell id (``cell["id"]`` in the notebook, an explicit ``id`` in the ``.py`` cell's
   metadata, as written on its ``# %%`` line: text formats carry no cell ids otherwise);
2. a unique, non-conflicting ``(cell_type, source)`` match, sources compared after removing
   trailing whitespace on every line and blank lines around the cell.

Anything else is refused with ``CELL_MAPPING_UNRELIABLE``: no position or similarity guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.io import cell_source

__all__ = ["CellMatch", "cell_name", "match_cell", "normalized_source"]

MappingRule = Literal["id", "content"]


@dataclass(frozen=True)
class CellMatch:
    """The notebook cell a ``.py`` cell maps to, and the rule that mapped it."""

    notebook_cell_index: int
    mapping: MappingRule


def cell_name(cell: dict[str, Any]) -> str | None:
    """The cell's name at ``metadata.jupyter_mcp.name``, or None when absent or not a string."""
    metadata = cell.get("metadata")
    if not isinstance(metadata, dict):
        return None
    ours = metadata.get("jupyter_mcp")
    if not isinstance(ours, dict):
        return None
    name = ours.get("name")
    return name if isinstance(name, str) and name else None


def normalized_source(cell: dict[str, Any]) -> str:
    """The cell source with trailing whitespace per line and surrounding blank lines removed."""
    lines = [line.rstrip() for line in cell_source(cell).splitlines()]
    return "\n".join(lines).strip("\n")


def _notebook_cell_id(cell: dict[str, Any]) -> str | None:
    value = cell.get("id")
    return value if isinstance(value, str) and value else None


def _py_cell_id(cell: dict[str, Any]) -> str | None:
    # jupytext gives every parsed cell a fresh random top-level id; only an id written
    # explicitly in the cell's metadata is stable.
    metadata = cell.get("metadata")
    if not isinstance(metadata, dict):
        return None
    value = metadata.get("id")
    return value if isinstance(value, str) and value else None


def _content_key(cell: dict[str, Any]) -> tuple[str, str]:
    cell_type = cell.get("cell_type")
    return (cell_type if isinstance(cell_type, str) else "", normalized_source(cell))


def _indexes(cells: Sequence[dict[str, Any]], key: Any, value: object) -> list[int]:
    return [index for index, cell in enumerate(cells) if key(cell) == value]


def _unreliable(message: str, details: dict[str, Any]) -> NotebookError:
    return NotebookError(ErrorCode.CELL_MAPPING_UNRELIABLE, message, details)


def _match_by_stable_id(
    py_cells: Sequence[dict[str, Any]],
    notebook_cells: Sequence[dict[str, Any]],
    py_index: int,
) -> int | None:
    """Rule 1. The notebook index, None when the py cell has no stable id the notebook shares."""
    py_cell = py_cells[py_index]
    found: dict[str, int] = {}
    for label, py_key, nb_key in (
        ("name", cell_name, cell_name),
        ("id", _py_cell_id, _notebook_cell_id),
    ):
        value = py_key(py_cell)
        if value is None:
            continue
        nb_matches = _indexes(notebook_cells, nb_key, value)
        if not nb_matches:
            continue
        py_matches = _indexes(py_cells, py_key, value)
        if len(nb_matches) > 1 or len(py_matches) > 1:
            raise _unreliable(
                f"The cell {label} {value!r} is not unique, so it does not identify one cell.",
                {
                    "reason": f"duplicate_{label}",
                    label: value,
                    "candidates": nb_matches,
                    "py_cells_with_same_" + label: py_matches,
                },
            )
        found[label] = nb_matches[0]
    if len(set(found.values())) > 1:
        raise _unreliable(
            "The cell's name and id point at different notebook cells.",
            {"reason": "conflicting_ids", "candidates": sorted(set(found.values()))},
        )
    return next(iter(found.values()), None)


def _claimed_by(
    py_cells: Sequence[dict[str, Any]],
    notebook_cell: dict[str, Any],
    py_index: int,
) -> list[int]:
    """Other py cells that share a stable id with ``notebook_cell``."""
    name, cell_id = cell_name(notebook_cell), _notebook_cell_id(notebook_cell)
    return [
        index
        for index, cell in enumerate(py_cells)
        if index != py_index
        and (
            (name is not None and cell_name(cell) == name)
            or (cell_id is not None and _py_cell_id(cell) == cell_id)
        )
    ]


def match_cell(
    py_cells: Sequence[dict[str, Any]],
    notebook_cells: Sequence[dict[str, Any]],
    py_index: int,
) -> CellMatch:
    """Map ``py_cells[py_index]`` to one of ``notebook_cells`` by stable id or unique content.

    Args:
        py_cells: the cells of the ``.py`` file as jupytext reads them (cell dicts).
        notebook_cells: the cells of the paired notebook.
        py_index: a valid index into ``py_cells``.

    Returns:
        The matched notebook cell index and the rule, ``"id"`` or ``"content"``.

    Raises:
        NotebookError: ``CELL_MAPPING_UNRELIABLE`` when no rule gives exactly one cell: no
            match (``reason: "no_match"``), several notebook candidates
            (``"ambiguous_content"``, ``candidates``), the same content in several ``.py``
            cells (``"duplicated_in_py"``, ``py_duplicates``), a duplicated name or id, or a
            content match whose notebook cell carries a different name/id or is claimed by
            another ``.py`` cell through its name/id (``"conflict"``, ``claimed_by``).
    """
    by_id = _match_by_stable_id(py_cells, notebook_cells, py_index)
    if by_id is not None:
        return CellMatch(by_id, "id")

    py_cell = py_cells[py_index]
    key = _content_key(py_cell)
    candidates = _indexes(notebook_cells, _content_key, key)
    py_duplicates = _indexes(py_cells, _content_key, key)
    base = {"cell_type": key[0], "candidates": candidates}
    if not candidates:
        raise _unreliable(
            "No notebook cell shares this cell's name, id or content (edited since the last "
            "sync?); refusing to guess by position.",
            {**base, "reason": "no_match"},
        )
    if len(py_duplicates) > 1:
        raise _unreliable(
            "Several cells of the .py file have this same content, so it does not identify one "
            "notebook cell.",
            {**base, "reason": "duplicated_in_py", "py_duplicates": py_duplicates},
        )
    if len(candidates) > 1:
        raise _unreliable(
            "Several notebook cells have this content, so it does not identify one of them.",
            {**base, "reason": "ambiguous_content"},
        )
    target = notebook_cells[candidates[0]]
    claimed_by = _claimed_by(py_cells, target, py_index)
    own = {"name": cell_name(py_cell), "id": _py_cell_id(py_cell)}
    theirs = {"name": cell_name(target), "id": _notebook_cell_id(target)}
    clashing = [k for k in own if own[k] is not None and theirs[k] not in (None, own[k])]
    if claimed_by or clashing:
        raise _unreliable(
            "The notebook cell with this content belongs to another cell by name or id.",
            {**base, "reason": "conflict", "claimed_by": claimed_by, "clashing": clashing},
        )
    return CellMatch(candidates[0], "content")
