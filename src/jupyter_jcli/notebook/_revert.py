"""Undo at cell granularity: what a mutation changed, and its inverse applied to the cells now.

A mutation records, next to its snapshot, the cell-level difference between the cells it
applied to (*before*) and the cells it wrote (*after*): :func:`record_mutation`. Undo applies
the inverse of that difference to the notebook as it is *now* (:func:`revert`), a three-way
revert with *after* as the base, so everything written since and not touched by the mutation
stays: outputs and execution counts of a run, cache entries, other cells' edits, outside edits.

Cells of *before* and *after* are matched by name (a rename keeps the cell's position, so an
unmatched pair at the same index of lists of equal length is the renamed cell); cells of the
current notebook are found by their current name. A cell's difference is a list of leaves:
values at a key path (``["source"]``, ``["metadata", "jupyter_mcp", "name"]``) compared
recursively through dicts (a dict missing on one side counts as empty; lists and scalars are
leaves). Per leaf, with ``now`` the current value:

- ``now == after``: the leaf gets its *before* value back (or is deleted if it had none);
- ``now == before``: already reverted, nothing to do;
- otherwise the leaf was changed since the mutation: a conflict (``edited_since``).

Structure: a cell the mutation added is removed if its type and source are still those it was
added with (its outputs, if it ran since, go with it), else ``edited_since``; a cell it removed
is put back after the nearest cell that preceded it and still exists (``name_taken`` if its
stored name belongs to another cell now; a fresh nbformat ``id`` if its id does); a cell it
moved goes back the same way unless it was moved again since (``moved_since``); a changed cell
removed since is ``removed_since`` (unless only its computed name had been stored). With
``force`` every conflicting leaf takes its *before* value, a removed-since cell stays removed
and a reinserted cell whose name is taken gets a fresh one. Pure: no files.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from jupyter_jcli._json import json_fields
from jupyter_jcli.notebook._leaves import ABSENT, diff_leaves, put_leaf, revert_leaves, same_field
from jupyter_jcli.notebook.names import BINDING_KEY, METADATA_KEY, set_stored_name, stored_name

__all__ = [
    "Conflict",
    "Reverted",
    "record_mutation",
    "revert",
]

Reason = Literal["edited_since", "removed_since", "moved_since", "name_taken"]

_NAME_PATH = ["metadata", METADATA_KEY, "name"]
_BINDING_PATH = ["metadata", METADATA_KEY, BINDING_KEY]


@dataclass(frozen=True)
class Conflict:
    """A change made since the mutation that the undo would overwrite.

    Attributes:
        cell: the cell's current name (its name after the mutation if it is gone).
        reason: ``edited_since``, ``removed_since``, ``moved_since`` or ``name_taken``.
        fields: dotted key paths that changed since (``source``, ``cell_type``,
            ``metadata.tags``, ...), for ``edited_since``.
    """

    cell: str
    reason: Reason
    fields: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return json_fields(self)


@dataclass(frozen=True)
class Reverted:
    """The cells with the mutation undone.

    Attributes:
        cells: the new cell list (unchanged cells are the current cell objects).
        touched: indexes in ``cells`` of the cells changed, moved or put back (a cell
            whose only change is that its computed name is no longer stored is not).
        removed: current names of the cells taken out.
        conflicts: changes made since that the revert overwrites (``force``) or would.
        origins: for each of ``cells``, its index in the current cells (``None``: put back),
            as the write path's renderer takes it.
        renamed: ``(current name, name it gets back)`` of each cell whose rename is undone.
    """

    cells: list[dict[str, Any]]
    touched: tuple[int, ...]
    removed: tuple[str, ...]
    conflicts: tuple[Conflict, ...]
    origins: tuple[int | None, ...] = ()
    renamed: tuple[tuple[str, str], ...] = ()


def record_mutation(
    before: Sequence[dict[str, Any]],
    before_names: Sequence[str],
    after: Sequence[dict[str, Any]],
    after_names: Sequence[str],
) -> dict[str, Any]:
    """The JSON-ready record of what a mutation changed (see the module docstring).

    Args:
        before: the cells the mutation applied to.
        before_names: their names.
        after: the cells it wrote.
        after_names: their names.

    Returns:
        ``{"format": 1, "cells": [...], "order": ...}``. ``cells`` has one entry per cell
        added (``key``, ``name_after``, ``after_cell``), removed (``key``, ``name_before``,
        ``before_cell``) or changed (``key``, ``name_before``, ``name_after``, ``leaves``:
        ``{"path", "before"?, "after"?}`` with a side omitted where the key was missing,
        ``containers``: ``{"path", "absent": "before" | "after"}`` for dicts missing on one
        side). ``order`` is ``None`` when no cell was added, removed or moved, else
        ``{"before": [[key, name after or None], ...], "after": [[key, name after], ...]}``.
        Keys are ``"b<index before>"`` for cells that existed before, ``"a<index after>"``
        for added cells.
    """
    if len(before) == len(after) and list(before_names) == list(after_names):
        # Nothing added, removed, moved or renamed (the common edit): cell i is cell i, and
        # only the cells that are not the same object can have changed.
        pairs = [(i, i) for i in range(len(before)) if before[i] is not after[i]]
        return {
            "format": 1,
            "cells": _changes(before, before_names, after, after_names, pairs),
            "order": None,
        }
    after_index = {name: j for j, name in enumerate(after_names)}
    match: dict[int, int] = {
        i: after_index[n] for i, n in enumerate(before_names) if n in after_index
    }
    if len(before) == len(after):
        taken = set(match.values())
        for i in range(len(before)):
            if i not in match and i not in taken:
                match[i] = i  # a rename keeps the cell where it is
    key_after = {j: f"b{i}" for i, j in match.items()}
    entries: list[dict[str, Any]] = []
    for i, cell in enumerate(before):
        if i not in match:
            entries.append({"key": f"b{i}", "name_before": before_names[i], "before_cell": cell})
    for j, cell in enumerate(after):
        if j not in key_after:
            key_after[j] = f"a{j}"
            entries.append({"key": f"a{j}", "name_after": after_names[j], "after_cell": cell})
    entries.extend(_changes(before, before_names, after, after_names, sorted(match.items())))
    keys_after = [key_after[j] for j in range(len(after))]
    keys_before = [f"b{i}" for i in range(len(before))]
    kept_before = [f"b{i}" for i in sorted(match, key=lambda i: i)]
    kept_after = [key for key in keys_after if key.startswith("b")]
    order = None
    if len(match) != len(before) or len(match) != len(after) or kept_before != kept_after:
        name_of = {key: after_names[j] for j, key in enumerate(keys_after)}
        order = {
            "before": [[key, name_of.get(key)] for key in keys_before],
            "after": [[key, after_names[j]] for j, key in enumerate(keys_after)],
        }
    return {"format": 1, "cells": entries, "order": order}


def _changes(
    before: Sequence[dict[str, Any]],
    before_names: Sequence[str],
    after: Sequence[dict[str, Any]],
    after_names: Sequence[str],
    pairs: Iterable[tuple[int, int]],
) -> list[dict[str, Any]]:
    """The ``leaves``/``containers`` entries of the matched cells ``(i before, j after)``
    that differ, in the order of ``pairs``."""
    entries: list[dict[str, Any]] = []
    for i, j in pairs:
        if before[i] is after[j] or before[i] == after[j]:
            continue
        leaves: list[dict[str, Any]] = []
        containers: list[dict[str, Any]] = []
        diff_leaves(before[i], after[j], [], leaves, containers)
        entries.append(
            {
                "key": f"b{i}",
                "name_before": before_names[i],
                "name_after": after_names[j],
                "leaves": leaves,
                "containers": containers,
            }
        )
    return entries


def revert(
    record: dict[str, Any], cells: Sequence[dict[str, Any]], names: Sequence[str]
) -> Reverted:
    """Apply the inverse of ``record`` (:func:`record_mutation`) to the current cells.

    Conflicting changes are reported and overwritten (the caller refuses unless forced).

    Args:
        record: what the mutation changed.
        cells: the notebook's cells now (not modified).
        names: their names.

    Returns:
        The reverted cells, what changed and the conflicts (see the module docstring).
    """
    state = _State(names, {name: i for i, name in enumerate(names)})
    index, drop, conflicts, touched = state.index, state.drop, state.conflicts, state.touched
    work: list[dict[str, Any]] = list(cells)
    put_back: dict[str, dict[str, Any]] = {}
    renamed: list[tuple[str, str]] = []
    entries: list[dict[str, Any]] = record["cells"]
    for entry in entries:
        if "after_cell" not in entry:
            continue
        i = index.get(entry["name_after"])
        if i is None:
            continue  # removed since: already gone
        added = entry["after_cell"]
        fields = tuple(f for f in ("cell_type", "source") if not same_field(f, cells[i], added))
        if fields:
            conflicts.append(Conflict(names[i], "edited_since", fields))
        drop.add(i)
    held = {name for name, i in index.items() if i not in drop}
    ids = {str(cell.get("id")) for i, cell in enumerate(cells) if i not in drop}
    for entry in entries:
        if "before_cell" in entry:
            cell = copy.deepcopy(entry["before_cell"])
            name = stored_name(cell)
            if name is not None and name in held:
                conflicts.append(Conflict(name, "name_taken"))
                cell = put_leaf(cell, _NAME_PATH, ABSENT)
            if "id" in cell and str(cell["id"]) in ids:  # nbformat 4.5 ids are unique
                cell["id"] = _fresh_id(ids)
                kept = stored_name(cell)
                if kept is not None:  # the name stays bound to the cell it is back on
                    set_stored_name(cell, kept)
            ids.add(str(cell.get("id")))
            put_back[entry["key"]] = cell
            touched.add(id(cell))
        elif "leaves" in entry:
            i = index.get(entry["name_after"])
            if i is None:
                if _significant(entry):
                    conflicts.append(Conflict(entry["name_after"], "removed_since"))
                continue
            if entry["name_before"] != entry["name_after"]:
                renamed.append((names[i], entry["name_before"]))
            new, edited = revert_leaves(cells[i], entry)
            if edited:
                conflicts.append(Conflict(names[i], "edited_since", edited))
            if new is not cells[i]:
                work[i] = new
                if _significant(entry):  # not only the computed name stored by the mutation
                    touched.add(id(new))
    order = record.get("order")
    slots = [(i, cell) for i, cell in enumerate(work) if i not in drop]
    if order is not None:
        slots = _restore_order(order, slots, put_back, state)
    result = [cell for _i, cell in slots]
    return Reverted(
        cells=result,
        touched=tuple(n for n, cell in enumerate(result) if id(cell) in touched),
        removed=tuple(names[i] for i in sorted(drop)),
        conflicts=tuple(conflicts),
        origins=tuple(i if i >= 0 else None for i, _cell in slots),
        renamed=tuple(renamed),
    )


@dataclass
class _State:
    """What :func:`revert` knows and has found so far."""

    names: Sequence[str]
    index: dict[str, int]
    drop: set[int] = field(default_factory=set)
    conflicts: list[Conflict] = field(default_factory=list)
    touched: set[int] = field(default_factory=set)  # ids of the cell objects changed or placed


def _restore_order(
    order: dict[str, Any],
    slots: list[tuple[int, dict[str, Any]]],
    put_back: dict[str, dict[str, Any]],
    state: _State,
) -> list[tuple[int, dict[str, Any]]]:
    """Take moved cells out and put them and the removed ones back after their former
    predecessor (``slots``: ``(current index or -1, cell)``)."""
    names, index, drop = state.names, state.index, state.drop
    before: list[tuple[str, str | None]] = [(key, name) for key, name in order["before"]]
    after: list[tuple[str, str]] = [(key, name) for key, name in order["after"]]
    name_after = dict(after)
    cell_at = dict(slots)
    key_at = {index[name]: key for key, name in after if name in index}
    kept_before = [key for key, _name in before if key in name_after]
    kept_after = [key for key, _name in after if key.startswith("b")]
    import difflib  # only for an undo that moves cells: kept off the start-up path

    matcher = difflib.SequenceMatcher(None, kept_before, kept_after, autojunk=False)
    in_place = {
        key
        for block in matcher.get_matching_blocks()
        for key in kept_before[block.a : block.a + block.size]
    }
    present = [key for key, name in after if name in index and index[name] not in drop]
    by_now = sorted(present, key=lambda key: index[name_after[key]])
    moving: dict[str, tuple[int, dict[str, Any]]] = {}
    for key in kept_before:
        name = name_after[key]
        if key in in_place or name not in index or index[name] in drop:
            continue
        if _predecessor(present, key) != _predecessor(by_now, key):
            state.conflicts.append(Conflict(names[index[name]], "moved_since"))
        moving[key] = (index[name], cell_at[index[name]])
    placing = {**moving, **{key: (-1, cell) for key, cell in put_back.items()}}
    result = [(i, cell) for i, cell in slots if key_at.get(i) not in moving]
    where = {key_at[i]: n for n, (i, _cell) in enumerate(result) if i in key_at}
    for position, (key, _name) in enumerate(before):
        if key not in placing:
            continue
        at = _anchor_position(before, position, where, result)
        origin, cell = placing[key]
        result.insert(at, (origin, cell))
        state.touched.add(id(cell))
        where = {k: n + (1 if n >= at else 0) for k, n in where.items()}
        where[key] = at
    return result


def _anchor_position(
    before: list[tuple[str, str | None]],
    position: int,
    where: dict[str, int],
    result: list[tuple[int, dict[str, Any]]],
) -> int:
    """Just after the nearest earlier cell of ``before`` still there, else just before the
    nearest later one, else at the end."""
    for key, _name in reversed(before[:position]):
        if key in where:
            return where[key] + 1
    for key, _name in before[position + 1 :]:
        if key in where:
            return where[key]
    return len(result)


def _fresh_id(taken: set[str]) -> str:
    cell_id = uuid.uuid4().hex[:8]
    while cell_id in taken:
        cell_id = uuid.uuid4().hex[:8]
    return cell_id


def _predecessor(sequence: list[str], key: str) -> str | None:
    position = sequence.index(key)
    return sequence[position - 1] if position > 0 else None


def _significant(entry: dict[str, Any]) -> bool:
    """Whether a changed entry did more than store the cell's computed name (and its
    binding to the cell's id)."""
    if entry["name_before"] != entry["name_after"]:
        return True
    leaves: list[dict[str, Any]] = entry["leaves"]
    return any(leaf["path"] not in (_NAME_PATH, _BINDING_PATH) for leaf in leaves)
