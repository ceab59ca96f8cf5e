"""Pure merges behind the writes that are not user mutations: execution results and caches.

Each function takes the fresh cells (nbformat dicts, changed in place by replacing an entry
with a new dict, never by editing the dict it held) and their views, and returns the names of
the cells it changed, in document order. A value that describes content that is gone (a cell
removed, retyped or edited since) is skipped.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jupyter_jcli.notebook._views import CellView
from jupyter_jcli.notebook.io import value_at
from jupyter_jcli.notebook.names import METADATA_KEY, bound_here, set_stored_name

__all__ = ["CellOutputs", "OutputUpdate", "merge_metadata", "merge_outputs", "store_names"]

_UPDATABLE = ("display_data", "execute_result")


@dataclass(frozen=True)
class CellOutputs:
    """What one run of a code cell produced.

    Attributes:
        rev: the rev of the source that ran.
        outputs: nbformat v4 outputs; they replace the cell's outputs.
        execution_count: the kernel's execution count (``None`` if none).
    """

    rev: str
    outputs: list[dict[str, Any]]
    execution_count: int | None


@dataclass(frozen=True)
class OutputUpdate:
    """A new MIME bundle for an output already in the file (``update_display_data``).

    Attributes:
        cell: the name of the cell holding the output.
        index: the output's index in that cell's outputs.
        data: the new ``data`` bundle.
        metadata: the new ``metadata``.
    """

    cell: str
    index: int
    data: dict[str, Any]
    metadata: dict[str, Any]


def merge_outputs(
    views: Sequence[CellView],
    cells: list[dict[str, Any]],
    results: Mapping[str, CellOutputs],
    updates: Sequence[OutputUpdate] = (),
) -> list[str]:
    """Store ``results`` in the code cells whose rev is the one that ran, then apply
    ``updates`` to ``display_data``/``execute_result`` outputs of code cells (other output
    types, missing indexes and bundles already equal are skipped)."""
    written: set[str] = set()
    by_name = {view.name: view for view in views}
    for name, result in results.items():
        found = by_name.get(name)
        if found is None or found.cell_type != "code" or found.rev != result.rev:
            continue
        cell = dict(cells[found.index])
        cell["outputs"] = copy.deepcopy(result.outputs)
        cell["execution_count"] = result.execution_count
        cells[found.index] = cell
        written.add(name)
    for update in updates:
        found = by_name.get(update.cell)
        if found is not None and found.cell_type == "code" and _update(cells, found, update):
            written.add(update.cell)
    return [view.name for view in views if view.name in written]


def store_names(views: Sequence[CellView], cells: list[dict[str, Any]]) -> tuple[CellView, ...]:
    """Store every cell's name (bound to its nbformat ``id``) where the file does not hold it
    yet, so that the names a run found stay the cells' own (``names`` module, rule 1: a cell
    inserted or pasted later never takes one). Returns the views, ``name_stored`` set."""
    stored = list(views)
    for view in views:
        cell = cells[view.index]
        if view.name_stored and bound_here(cell):
            continue
        named = dict(cell)
        named["metadata"] = copy.deepcopy(cell.get("metadata", {}))
        set_stored_name(named, view.name)
        cells[view.index] = named
        stored[view.index] = replace(view, name_stored=True)
    return tuple(stored)


def _update(cells: list[dict[str, Any]], found: CellView, update: OutputUpdate) -> bool:
    outputs = cells[found.index].get("outputs")
    if not isinstance(outputs, list) or not 0 <= update.index < len(outputs):
        return False
    output = outputs[update.index]
    if not isinstance(output, dict) or output.get("output_type") not in _UPDATABLE:
        return False
    if output.get("data") == update.data and output.get("metadata") == update.metadata:
        return False
    new_outputs = list(outputs)
    new_outputs[update.index] = {
        **output,
        "data": copy.deepcopy(update.data),
        "metadata": copy.deepcopy(update.metadata),
    }
    cells[found.index] = {**cells[found.index], "outputs": new_outputs}
    return True


def merge_metadata(
    views: Sequence[CellView],
    cells: list[dict[str, Any]],
    key: str,
    values: Mapping[str, tuple[str, Any]],
) -> list[str]:
    """Set ``metadata.jupyter_mcp.<key>`` from ``values`` (cell name -> ``(rev the value was
    computed for, JSON value)``) on the cells whose rev matches and whose entry differs."""
    written: list[str] = []
    for view in views:
        rev, value = values.get(view.name, ("", None))
        if rev != view.rev or _entry(cells[view.index], key) == value:
            continue
        cells[view.index] = _with_entry(cells[view.index], key, value)
        written.append(view.name)
    return written


def _entry(cell: dict[str, Any], key: str) -> Any:
    return value_at(cell, "metadata", METADATA_KEY, key)


def _with_entry(cell: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """A copy of ``cell`` with ``metadata.jupyter_mcp.<key> = value`` (other keys kept)."""
    metadata = cell.get("metadata")
    new_metadata = dict(metadata) if isinstance(metadata, dict) else {}
    section = new_metadata.get(METADATA_KEY)
    new_section = dict(section) if isinstance(section, dict) else {}
    new_section[key] = copy.deepcopy(value)
    new_metadata[METADATA_KEY] = new_section
    new_cell = dict(cell)
    new_cell["metadata"] = new_metadata
    return new_cell
