"""Pure cell-list edits behind the Document mutations: validate first, then build new lists.

Every function takes the current cells (nbformat dicts) and their names and returns new lists;
the inputs are never modified (changed cells are copies), so a refused edit leaves nothing
partly applied. Errors carry the current state of the cell involved.

Owned fields: a cell's ``source``, ``cell_type``, ``metadata.jupyter_mcp.name``, and for new
cells ``id`` (only when ``nbformat_minor >= 5``), ``execution_count`` (``None``) and
``outputs`` (``[]``). Changing a cell's source keeps its outputs and execution count: they
describe the previous source and are stale until the cell runs again (freshness is the kernel
layer's job). Changing the type drops what nbformat forbids for the new type (outputs and
execution count for Markdown/raw, attachments for code).
"""

from __future__ import annotations

import copy
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

from jupyter_jcli.errors import CELL_TYPES, ErrorCode, NotebookError, UsageError
from jupyter_jcli.notebook._pairs import split_source
from jupyter_jcli.notebook._views import CellView
from jupyter_jcli.notebook.io import cell_source
from jupyter_jcli.notebook.names import (
    bound_here,
    derive_base_name,
    rename_stored,
    set_stored_name,
    stored_name,
    unique_name,
    validate_name,
)
from jupyter_jcli.notebook.revs import cell_rev, structure_rev

__all__ = [
    "CELL_TYPES",
    "MAX_DETAIL_SOURCE",
    "AddOptions",
    "MoveOptions",
    "Position",
    "UpdateOptions",
    "Working",
    "add_cell",
    "check_source",
    "move_cell",
    "persist_names",
    "remove_cell",
    "update_cell",
]

"""The nbformat 4 cell types."""

MAX_DETAIL_SOURCE = 20_000
"""Longest source (characters) carried in a REV_MISMATCH error's details."""

Position = Literal["start", "end"]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class Working:
    """Cells being edited, with their names, and what changed so far."""

    path: Path
    cells: list[dict[str, Any]]
    names: list[str]
    nbformat_minor: int
    changed: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    """New name -> the name the cell had when the edit started."""

    def __post_init__(self) -> None:
        self._start = {name: index for index, name in enumerate(self.names)}

    def insert(self, index: int, cell: dict[str, Any], name: str) -> None:
        """Put ``cell``, named ``name``, at ``index`` (``cells`` and ``names`` stay in step)."""
        self.cells.insert(index, cell)
        self.names.insert(index, name)

    def take(self, index: int) -> dict[str, Any]:
        """Remove the cell at ``index`` and its name; the cell."""
        del self.names[index]
        return self.cells.pop(index)

    def origins(self) -> list[int | None]:
        """For each cell, its index in the cells the edit started from (``None``: new)."""
        return [self._start.get(self.renamed.get(name, name)) for name in self.names]

    def rev(self, index: int) -> str:
        cell = self.cells[index]
        return cell_rev(str(cell.get("cell_type", "")), cell_source(cell))

    def structure_rev(self) -> str:
        return structure_rev((self.names[i], self.rev(i)) for i in range(len(self.cells)))

    def index_of(self, name: str, *, role: str = "cell") -> int:
        try:
            return self.names.index(name)
        except ValueError:
            raise NotebookError(
                ErrorCode.CELL_NOT_FOUND,
                f"{self.path} has no {role} named {name!r}.",
                {"path": str(self.path), "name": name, "cell_count": len(self.cells)},
            ) from None

    def state(self, index: int) -> dict[str, Any]:
        source = cell_source(self.cells[index])
        state: dict[str, Any] = {
            "path": str(self.path),
            "name": self.names[index],
            "index": index,
            "cell_type": self.cells[index].get("cell_type"),
            "rev": self.rev(index),
            "source": source[:MAX_DETAIL_SOURCE],
        }
        if len(source) > MAX_DETAIL_SOURCE:
            state["source_truncated"] = True
            state["source_length"] = len(source)
        return state

    def check_rev(self, index: int, expected_rev: str | None) -> None:
        current = self.rev(index)
        if not expected_rev:
            raise UsageError(
                f"No rev was given for cell {self.names[index]!r}: pass the rev you read "
                "(every read shows each cell's rev).",
                {"name": self.names[index], "index": index, "expected_rev": expected_rev},
            )
        if expected_rev != current:
            details = self.state(index)
            details["expected_rev"] = expected_rev
            details["structure_rev"] = self.structure_rev()
            raise NotebookError(
                ErrorCode.REV_MISMATCH,
                f"Cell {self.names[index]!r} is at rev {current}, not {expected_rev}: it changed "
                "since it was read. Read it again and retry with its current rev.",
                details,
            )

    def check_free(self, name: str, *, ignore: int | None = None) -> str:
        validate_name(name)
        for index, other in enumerate(self.names):
            if other == name and index != ignore:
                raise NotebookError(
                    ErrorCode.NAME_CONFLICT,
                    f"{self.path} already has a cell named {name!r} (cell {index}).",
                    {"path": str(self.path), "name": name, "index": index},
                )
        return name


def persist_names(
    work: Working,
    before: Sequence[Mapping[str, Any]] = (),
    views: Sequence[CellView] = (),
) -> None:
    """Store every cell's computed name in its metadata, bound to the cell's nbformat ``id``
    (``names.set_stored_name``; copying only cells that change).

    ``before`` and ``views``: the cells the edit started from and their views; a cell that
    is still the object it was, keeps its name and had it stored and bound is not looked at
    again."""
    origins = work.origins() if views else [None] * len(work.cells)
    for index, (cell, origin) in enumerate(zip(work.cells, origins, strict=True)):
        if origin is not None and before[origin] is cell:
            view = views[origin]
            if view.name_stored and view.name == work.names[index] and bound_here(cell):
                continue
        if stored_name(cell) != work.names[index] or not bound_here(cell):
            renamed = dict(cell)
            renamed["metadata"] = copy.deepcopy(cell.get("metadata", {}))
            set_stored_name(renamed, work.names[index])
            work.cells[index] = renamed


class AddOptions(TypedDict, total=False):
    """The keyword options of ``Document.add_cell`` (meanings and defaults there), for the
    layers that forward them unchanged (``**options: Unpack[AddOptions]``)."""

    cell_type: str
    name: str | None
    before: str | None
    after: str | None
    position: Position | None
    expected_rev: str | None


class UpdateOptions(TypedDict, total=False):
    """The optional keywords of ``Document.update_cell`` (``None`` keeps that part)."""

    source: str | None
    cell_type: str | None
    new_name: str | None


class MoveOptions(TypedDict, total=False):
    """The optional keywords of ``Document.move_cell`` (the anchor or position)."""

    before: str | None
    after: str | None
    position: Position | None


def add_cell(
    work: Working,
    source: str,
    *,
    cell_type: str,
    name: str | None,
    before: str | None,
    after: str | None,
    position: Position | None,
    expected_rev: str | None,
) -> int:
    """Insert a new cell; returns its index. See ``Document.add_cell`` for the contract (the
    caller checked ``source`` with :func:`check_source` before reading the file)."""
    _check_type(cell_type)
    anchor_role = _one_anchor(before, after, position)
    if anchor_role is not None:
        anchor = before if anchor_role == "before" else after
        assert anchor is not None
        anchor_index = work.index_of(anchor, role="anchor cell")
        if expected_rev is None:
            raise UsageError(
                "expected_rev (the anchor cell's rev) is required to add next to a cell.",
                {"anchor": anchor},
            )
        work.check_rev(anchor_index, expected_rev)
        index = anchor_index if anchor_role == "before" else anchor_index + 1
    else:
        current = work.structure_rev()
        if expected_rev is not None and expected_rev != current:
            raise NotebookError(
                ErrorCode.REV_MISMATCH,
                f"The notebook is at structure rev {current}, not {expected_rev}.",
                {
                    "path": str(work.path),
                    "structure_rev": current,
                    "expected_rev": expected_rev,
                    "cell_count": len(work.cells),
                },
            )
        index = 0 if position == "start" else len(work.cells)
    if name is None:
        name = unique_name(derive_base_name(cell_type, source), work.names)
    else:
        work.check_free(name)
    cell = _new_cell(work, source, cell_type)
    set_stored_name(cell, name)
    work.insert(index, cell, name)
    work.changed.append(name)
    return index


def update_cell(
    work: Working,
    name: str,
    *,
    expected_rev: str,
    source: str | None,
    cell_type: str | None,
    new_name: str | None,
) -> int:
    """Change a cell's source, type and/or name; returns its index (the caller checked
    ``source`` with :func:`check_source` before reading the file)."""
    index = work.index_of(name)
    work.check_rev(index, expected_rev)
    if cell_type is not None:
        _check_type(cell_type)
    if new_name is not None and new_name != name:
        work.check_free(new_name, ignore=index)
    cell = copy.deepcopy(work.cells[index])
    if source is not None and source != cell_source(cell):
        cell["source"] = split_source(source, cell.get("source", []))
    if cell_type is not None and cell_type != cell.get("cell_type"):
        _retype(cell, cell_type)
    if new_name is not None:
        rename_stored(cell, name, new_name)
        work.names[index] = new_name
        if new_name != name:
            work.renamed[new_name] = work.renamed.pop(name, name)
            work.changed.append(name)
    work.cells[index] = cell
    work.changed.append(work.names[index])
    return index


def clear_outputs(work: Working, names: Sequence[str]) -> int:
    """Empty the ``outputs`` and ``execution_count`` of the named code cells; returns the
    first one's index. Every name is checked before any cell changes.

    Raises:
        NotebookError: ``CELL_NOT_FOUND``.
        UsageError: ``USAGE_ERROR`` for no names, or a Markdown or raw cell (details
            ``cells``).
    """
    if not names:
        raise UsageError("clear_outputs needs one or more cell names.")
    indexes = [work.index_of(name) for name in dict.fromkeys(names)]
    other = [work.names[i] for i in indexes if work.cells[i].get("cell_type") != "code"]
    if other:
        raise UsageError("Only code cells have outputs.", {"cells": other, "path": str(work.path)})
    for index in indexes:
        cell = work.cells[index]
        if cell.get("outputs") or cell.get("execution_count") is not None:
            work.cells[index] = {**cell, "outputs": [], "execution_count": None}
            work.changed.append(work.names[index])
    return indexes[0]


def remove_cell(work: Working, name: str, *, expected_rev: str) -> int:
    """Delete a cell; returns the index it had."""
    index = work.index_of(name)
    work.check_rev(index, expected_rev)
    work.take(index)
    work.changed.append(name)
    return index


def move_cell(
    work: Working,
    name: str,
    *,
    expected_rev: str,
    before: str | None,
    after: str | None,
    position: Position | None,
) -> int:
    """Move a cell; returns its new index."""
    index = work.index_of(name)
    work.check_rev(index, expected_rev)
    anchor_role = _one_anchor(before, after, position)
    anchor = before if anchor_role == "before" else after
    if anchor_role is not None:
        assert anchor is not None
        work.index_of(anchor, role="anchor cell")
        if anchor == name:
            raise UsageError(f"Cannot move cell {name!r} next to itself.", {"name": name})
    cell = work.take(index)
    if anchor_role is None:
        new_index = 0 if position == "start" else len(work.cells)
    else:
        assert anchor is not None
        anchor_index = work.names.index(anchor)
        new_index = anchor_index if anchor_role == "before" else anchor_index + 1
    work.insert(new_index, cell, name)
    if new_index != index:
        work.changed.append(name)
    return new_index


def _one_anchor(
    before: str | None, after: str | None, position: Position | None
) -> Literal["before", "after"] | None:
    given = [
        label
        for label, value in (("before", before), ("after", after), ("position", position))
        if value is not None
    ]
    if len(given) > 1:
        raise UsageError(
            f"Give only one of before, after and position (got {', '.join(given)}).",
            {"given": given},
        )
    if position is not None and position not in ("start", "end"):
        raise UsageError(
            f"position must be 'start' or 'end', not {position!r}.", {"position": position}
        )
    if before is not None:
        return "before"
    if after is not None:
        return "after"
    return None


def check_source(source: object) -> str:
    """Return ``source`` if it can be written: a string that UTF-8 can encode.

    A lone UTF-16 surrogate (U+D800..U+DFFF, e.g. an undecodable command-line byte that
    Python's ``surrogateescape`` turned into ``\\udcff``) has no UTF-8 encoding; writing it
    would corrupt the notebook for every reader, so it is refused before anything is written.

    Raises:
        NotebookError: ``INVALID_SOURCE`` (details ``reason``, and for a lone surrogate its
            ``offset`` in characters and ``code_point`` as ``"U+DCFF"``).
    """
    if not isinstance(source, str):
        raise NotebookError(
            ErrorCode.INVALID_SOURCE,
            f"A cell source must be text, not {type(source).__name__}.",
            {"reason": "not_text", "type": type(source).__name__},
        )
    found = _LONE_SURROGATE.search(source)
    if found is not None:
        code_point = f"U+{ord(found.group()):04X}"
        raise NotebookError(
            ErrorCode.INVALID_SOURCE,
            f"The source holds a lone surrogate ({code_point}) at character {found.start()}, "
            "which is not valid Unicode text and cannot be saved as UTF-8; pass the text as "
            "valid UTF-8.",
            {"reason": "lone_surrogate", "offset": found.start(), "code_point": code_point},
        )
    return source


def _check_type(cell_type: str) -> None:
    if cell_type not in CELL_TYPES:
        raise NotebookError(
            ErrorCode.INVALID_CELL_TYPE,
            f"{cell_type!r} is not a cell type; use one of {', '.join(CELL_TYPES)}.",
            {"cell_type": cell_type, "allowed": list(CELL_TYPES)},
        )


def _new_cell(work: Working, source: str, cell_type: str) -> dict[str, Any]:
    like: object = []
    if work.cells and all(isinstance(cell.get("source"), str) for cell in work.cells):
        like = ""
    cell: dict[str, Any] = {"cell_type": cell_type, "metadata": {}}
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    cell["source"] = split_source(source, like)
    if work.nbformat_minor >= 5:
        taken = {str(other.get("id")) for other in work.cells}
        cell_id = uuid.uuid4().hex[:8]
        while cell_id in taken:
            cell_id = uuid.uuid4().hex[:8]
        cell["id"] = cell_id
    return cell


def _retype(cell: dict[str, Any], cell_type: str) -> None:
    """Change the type, dropping fields nbformat 4 forbids for the new type."""
    cell["cell_type"] = cell_type
    if cell_type == "code":
        cell.pop("attachments", None)
        cell.setdefault("execution_count", None)
        cell.setdefault("outputs", [])
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)
