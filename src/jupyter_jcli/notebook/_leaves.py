"""A cell's difference as leaves (``notebook._revert``): values at key paths, compared
recursively through dicts, recorded between two versions of a cell and put back on a third.

A leaf is ``{"path": [...], "before": ..., "after": ...}`` (``before``/``after`` omitted when
the key was missing); a container is a dict on the path missing on one side
(``{"path": [...], "absent": "before" | "after"}``), so reverting removes or adds it again.
Sources compare as text (a list of lines equals its joined string).
"""

from __future__ import annotations

import copy
from typing import Any

from jupyter_jcli.notebook.io import cell_source

__all__ = [
    "ABSENT",
    "diff_leaves",
    "equal_leaf",
    "get_leaf",
    "put_leaf",
    "revert_leaves",
    "same_field",
]

ABSENT: Any = object()
"""A key missing from a dict (never stored: leaves omit ``before``/``after`` instead)."""


def diff_leaves(
    before: dict[str, Any],
    after: dict[str, Any],
    path: list[str],
    leaves: list[dict[str, Any]],
    containers: list[dict[str, Any]],
) -> None:
    for key in [*before, *(key for key in after if key not in before)]:
        old = before.get(key, ABSENT)
        new = after.get(key, ABSENT)
        if old is not ABSENT and new is not ABSENT and old == new:
            continue
        where = [*path, key]
        if _dict_or_absent(old) and _dict_or_absent(new):
            if old is ABSENT:
                containers.append({"path": where, "absent": "before"})
            if new is ABSENT:
                containers.append({"path": where, "absent": "after"})
            diff_leaves(
                old if old is not ABSENT else {},
                new if new is not ABSENT else {},
                where,
                leaves,
                containers,
            )
            continue
        leaf: dict[str, Any] = {"path": where}
        if old is not ABSENT:
            leaf["before"] = old
        if new is not ABSENT:
            leaf["after"] = new
        leaves.append(leaf)


def _dict_or_absent(value: object) -> bool:
    return value is ABSENT or isinstance(value, dict)


def revert_leaves(
    cell: dict[str, Any], entry: dict[str, Any]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """``cell`` with the entry's leaves put back (the same object if nothing changes), and
    the dotted paths of the leaves changed since."""
    new = cell
    edited: list[str] = []
    containers: list[dict[str, Any]] = entry["containers"]
    for container in sorted(containers, key=lambda c: len(c["path"])):
        if container["absent"] == "after" and get_leaf(new, container["path"]) is ABSENT:
            new = put_leaf(new, container["path"], {})
    for leaf in entry["leaves"]:
        path: list[str] = leaf["path"]
        old = leaf.get("before", ABSENT)
        now = get_leaf(new, path)
        if equal_leaf(path, now, leaf.get("after", ABSENT)):
            new = put_leaf(new, path, old)
        elif not equal_leaf(path, now, old):
            edited.append(".".join(path))
            new = put_leaf(new, path, old)
    for container in sorted(containers, key=lambda c: -len(c["path"])):
        if container["absent"] == "before" and get_leaf(new, container["path"]) == {}:
            new = put_leaf(new, container["path"], ABSENT)
    return new, tuple(edited)


def same_field(field: str, cell: dict[str, Any], other: dict[str, Any]) -> bool:
    return equal_leaf([field], cell.get(field, ABSENT), other.get(field, ABSENT))


def equal_leaf(path: list[str], left: Any, right: Any) -> bool:
    if left is ABSENT or right is ABSENT:
        return left is right
    if path == ["source"]:
        return cell_source({"source": left}) == cell_source({"source": right})
    return bool(left == right)


def get_leaf(cell: dict[str, Any], path: list[str]) -> Any:
    node: Any = cell
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return ABSENT
        node = node[key]
    return node


def put_leaf(cell: dict[str, Any], path: list[str], value: Any) -> dict[str, Any]:
    """A copy of ``cell`` with ``value`` at ``path`` (deleted for ``ABSENT``); dicts on the
    path are copied, the rest is shared."""
    root = dict(cell)
    node = root
    for key in path[:-1]:
        child = node.get(key)
        child = dict(child) if isinstance(child, dict) else {}
        node[key] = child
        node = child
    if value is ABSENT:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = copy.deepcopy(value)
    return root
