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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from jupyter_jcli.errors import ErrorCode, NotebookError
from jupyter_jcli.notebook.io import cell_source
from jupyter_jcli.notebook.names import stored_name

__all__ = ["CellMatch", "CellMatcher", "cell_name", "match_cell", "normalized_source"]

MappingRule = Literal["id", "content"]


@dataclass(frozen=True)
class CellMatch:
    """The notebook cell a ``.py`` cell maps to, and the rule that mapped it."""

    notebook_cell_index: int
    mapping: MappingRule


def cell_name(cell: dict[str, Any]) -> str | None:
    """The cell's name at ``metadata.jupyter_mcp.name``, or None when absent or not a string."""
    return stored_name(cell) or None


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


def _group(cells: Sequence[Any], key: Callable[[Any], Any]) -> dict[Any, list[int]]:
    """Indexes of ``cells`` by ``key`` (None keys left out), in order; one pass."""
    groups: dict[Any, list[int]] = {}
    for index, cell in enumerate(cells):
        value = key(cell)
        if value is not None:
            groups.setdefault(value, []).append(index)
    return groups


def _unreliable(message: str, details: dict[str, Any]) -> NotebookError:
    return NotebookError(ErrorCode.CELL_MAPPING_UNRELIABLE, message, details)


class CellMatcher:
    """Maps the cells of a ``.py`` file to the cells of its notebook.

    Every key (name, id, normalized content) is indexed once, in one pass per side, so
    matching all ``n`` cells costs ``O(n)`` rather than one scan of both files per cell.

    Args:
        py_cells: the cells of the ``.py`` file as jupytext reads them (cell dicts).
        notebook_cells: the cells of the paired notebook.
    """

    def __init__(
        self, py_cells: Sequence[dict[str, Any]], notebook_cells: Sequence[dict[str, Any]]
    ) -> None:
        self._py_cells = py_cells
        self._nb_cells = notebook_cells
        self._py_keys = [_content_key(cell) for cell in py_cells]
        self._py = {
            "name": _group(py_cells, cell_name),
            "id": _group(py_cells, _py_cell_id),
            "content": _group(range(len(py_cells)), self._py_keys.__getitem__),
        }
        self._nb = {
            "name": _group(notebook_cells, cell_name),
            "id": _group(notebook_cells, _notebook_cell_id),
            "content": _group(notebook_cells, _content_key),
        }

    def _by_stable_id(self, py_index: int) -> int | None:
        """Rule 1: the notebook index, None when the cell has no id the notebook shares."""
        py_cell = self._py_cells[py_index]
        found: dict[str, int] = {}
        for label, value in (("name", cell_name(py_cell)), ("id", _py_cell_id(py_cell))):
            if value is None:
                continue
            nb_matches = self._nb[label].get(value, [])
            if not nb_matches:
                continue
            py_matches = self._py[label].get(value, [])
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

    def _claimed_by(self, notebook_cell: dict[str, Any], py_index: int) -> list[int]:
        """Other py cells that share a stable id with ``notebook_cell``."""
        name, cell_id = cell_name(notebook_cell), _notebook_cell_id(notebook_cell)
        claimants = set(self._py["name"].get(name, []) if name is not None else [])
        claimants.update(self._py["id"].get(cell_id, []) if cell_id is not None else [])
        claimants.discard(py_index)
        return sorted(claimants)

    def match(self, py_index: int) -> CellMatch:
        """Map ``py_cells[py_index]`` (a valid index); same rules and errors as
        :func:`match_cell`."""
        by_id = self._by_stable_id(py_index)
        if by_id is not None:
            return CellMatch(by_id, "id")
        py_cell = self._py_cells[py_index]
        key = self._py_keys[py_index]
        candidates = list(self._nb["content"].get(key, []))
        py_duplicates = self._py["content"].get(key, [])
        base = {"cell_type": key[0], "candidates": candidates}
        if not candidates:
            raise _unreliable(
                "No notebook cell shares this cell's name, id or content (edited since the "
                "last sync?); refusing to guess by position.",
                {**base, "reason": "no_match"},
            )
        if len(py_duplicates) > 1:
            raise _unreliable(
                "Several cells of the .py file have this same content, so it does not "
                "identify one notebook cell.",
                {**base, "reason": "duplicated_in_py", "py_duplicates": list(py_duplicates)},
            )
        if len(candidates) > 1:
            raise _unreliable(
                "Several notebook cells have this content, so it does not identify one of them.",
                {**base, "reason": "ambiguous_content"},
            )
        target = self._nb_cells[candidates[0]]
        claimed_by = self._claimed_by(target, py_index)
        own = {"name": cell_name(py_cell), "id": _py_cell_id(py_cell)}
        theirs = {"name": cell_name(target), "id": _notebook_cell_id(target)}
        clashing = [k for k in own if own[k] is not None and theirs[k] not in (None, own[k])]
        if claimed_by or clashing:
            raise _unreliable(
                "The matching sources have conflicting cell IDs or names: the notebook cell "
                "with this content belongs to another cell.",
                {**base, "reason": "conflict", "claimed_by": claimed_by, "clashing": clashing},
            )
        return CellMatch(candidates[0], "content")

    def match_all(self) -> list[CellMatch | NotebookError]:
        """The match of every ``.py`` cell, in order, or the error refusing it."""
        results: list[CellMatch | NotebookError] = []
        for index in range(len(self._py_cells)):
            try:
                results.append(self.match(index))
            except NotebookError as err:
                results.append(err)
        return results


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
    return CellMatcher(py_cells, notebook_cells).match(py_index)
