"""What a caller sees of a document's cells and of a mutation (re-exported by ``document``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypedDict

from jupyter_jcli._json import json_fields
from jupyter_jcli.notebook.io import cell_source
from jupyter_jcli.notebook.names import first_name, stored_name
from jupyter_jcli.notebook.revs import cell_rev

__all__ = [
    "CellAddress",
    "CellAddressDict",
    "CellView",
    "MutationCheck",
    "MutationResult",
    "address_fields",
    "cell_view",
    "cell_views",
]


class CellAddress(Protocol):
    """Anything that names one cell as a caller sees it: a :class:`CellView` and every
    per-cell row of a workbench result."""

    @property
    def index(self) -> int:
        """Physical zero-based position."""
        ...

    @property
    def name(self) -> str:
        """The cell's name."""
        ...

    @property
    def cell_type(self) -> str:
        """``"code"``, ``"markdown"`` or ``"raw"``."""
        ...

    @property
    def rev(self) -> str:
        """The cell's rev."""
        ...


class CellAddressDict(TypedDict):
    """A cell's address as JSON fields, and as the keywords of every per-cell row type."""

    index: int
    name: str
    cell_type: str
    rev: str


def address_fields(cell: CellAddress) -> CellAddressDict:
    """The fields that open every per-cell row: ``index``, ``name``, ``cell_type``, ``rev``
    (in that order); the JSON form's first keys, and the row types' first keywords
    (``ReadCell(**address_fields(view), ...)``)."""
    return {"index": cell.index, "name": cell.name, "cell_type": cell.cell_type, "rev": cell.rev}


@dataclass(frozen=True)
class CellView:
    """One cell as a caller sees it.

    Attributes:
        index: physical zero-based position.
        name: unique kebab-case name.
        cell_type: ``"code"``, ``"markdown"`` or ``"raw"``.
        rev: content hash of type and source (12 hex digits).
        source: the joined source text.
        cell_id: the nbformat cell ``id`` (nbformat >= 4.5), else ``None``.
        name_stored: whether the name is already stored in the file (else computed).
        first_name: for a renamed cell without an ``id``, the name it had before its first
            rename (``names.FIRST_NAME_KEY``), else ``None``.
    """

    index: int
    name: str
    cell_type: str
    rev: str
    source: str
    cell_id: str | None
    name_stored: bool
    first_name: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return json_fields(self, "index name cell_type rev source cell_id name_stored")


@dataclass(frozen=True)
class MutationResult:
    """What a mutation did.

    Attributes:
        operation: ``"add_cell"``, ``"update_cell"``, ``"remove_cell"`` or ``"move_cell"``.
        path: the target file (``.ipynb`` or ``.py``).
        cell: the target cell after the mutation (``None`` after a removal).
        removed: the removed cell as it was (removals only).
        structure_rev: the notebook's structure rev after the mutation.
        previous_structure_rev: the structure rev of the content the mutation applied to.
        changed: names of the cells added, edited, renamed (old and new name), moved or
            removed.
        reloaded: an outside edit was found and the mutation applied on top of it.
        written: the files rewritten (empty if the bytes did not change).
    """

    operation: str
    path: Path
    cell: CellView | None
    removed: CellView | None
    structure_rev: str
    previous_structure_rev: str
    changed: tuple[str, ...]
    reloaded: bool
    written: tuple[Path, ...]


MutationCheck = Callable[[MutationResult, tuple[CellView, ...]], None]
"""A caller's validation of a mutation before anything is written: called under the lock
with the result the mutation will return and every cell as it will be; whatever it raises
refuses the mutation, with no file, snapshot or temporary file written."""


def cell_view(cell: dict[str, Any], name: str, index: int) -> CellView:
    """The view of ``cell`` called ``name`` at ``index``."""
    cell_type = str(cell.get("cell_type", ""))
    source = cell_source(cell)
    cell_id = cell.get("id")
    return CellView(
        index=index,
        name=name,
        cell_type=cell_type,
        rev=cell_rev(cell_type, source),
        source=source,
        cell_id=cell_id if isinstance(cell_id, str) else None,
        name_stored=stored_name(cell) == name,
        first_name=first_name(cell),
    )


def cell_views(
    cells: Sequence[dict[str, Any]],
    names: Sequence[str],
    old_cells: Sequence[dict[str, Any]] = (),
    old_views: Sequence[CellView] = (),
) -> tuple[CellView, ...]:
    """The view of every cell; a cell that is still the very object ``old_views`` described
    (``old_cells``, aligned with them), under the same name, keeps its view (moved to its
    new index): only new or changed cells are hashed."""
    if len(old_cells) != len(old_views):
        raise ValueError("old_cells and old_views must be aligned")
    known: dict[int, CellView] | None = None
    views = []
    for index, (cell, name) in enumerate(zip(cells, names, strict=True)):
        if index < len(old_cells) and old_cells[index] is cell:
            view: CellView | None = old_views[index]  # the common case: a cell in its place
        else:
            if known is None:  # cells moved, added or removed: look them up by identity
                known = {id(old): seen for old, seen in zip(old_cells, old_views, strict=True)}
            view = known.get(id(cell))
        if view is None or view.name != name:
            views.append(cell_view(cell, name, index))
        else:
            views.append(view if view.index == index else replace(view, index=index))
    return tuple(views)
