"""Managed entries inside parsed configs: named server entries, hook groups, name lists.

Every function edits a parsed document in place and touches only entries that are ours:
a server entry under one of our names whose ``command`` starts one of our scripts, a hook whose
command is our guard, a name of ours in a list. A foreign entry under our name is never
overwritten (``CONFIG_CONFLICT``) and never removed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any, Literal

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._jsonconf import JsonDoc, dump_json, load_json
from jupyter_jcli.hosts._model import FileChange, SetupError
from jupyter_jcli.hosts._servers import is_guard_command, is_our_command

__all__ = [
    "EntryState",
    "entry_state",
    "hook_group_state",
    "plan_json_file",
    "remove_hook_groups",
    "remove_named",
    "set_hook_group",
    "set_named",
    "table_at",
]

EntryState = Literal["installed", "outdated", "absent", "foreign"]


def table_at(doc: MutableMapping[str, Any], keys: tuple[str, ...], path: Path) -> Any:
    """The mapping at ``doc[keys...]``, created when missing.

    Raises:
        SetupError: ``CONFIG_INVALID`` when something on the way is not a mapping.
    """
    node: Any = doc
    for depth, key in enumerate(keys):
        if key not in node:
            node[key] = {}
        node = node[key]
        if not isinstance(node, MutableMapping):
            raise SetupError(
                ErrorCode.CONFIG_INVALID,
                f"{path}: {'.'.join(keys[: depth + 1])} must be a table/object; it was left "
                "untouched.",
                {"path": str(path), "key": ".".join(keys[: depth + 1])},
            )
    return node


def entry_state(
    current: object, desired: Mapping[str, Any], command_key: str = "command"
) -> EntryState:
    """How an existing named entry compares with the one setup would write."""
    if current is None:
        return "absent"
    if not isinstance(current, Mapping) or not is_our_command(current.get(command_key)):
        return "foreign"
    return "installed" if _plain(current) == _plain(desired) else "outdated"


def set_named(
    table: MutableMapping[str, Any],
    entries: Mapping[str, Mapping[str, Any]],
    path: Path,
    command_key: str = "command",
) -> None:
    """Put each entry under its name, replacing only our own older entries.

    Raises:
        SetupError: ``CONFIG_CONFLICT`` (details ``path``, ``name``) when a name is taken by an
            entry that does not start one of our scripts.
    """
    for name, desired in entries.items():
        state = entry_state(table.get(name), desired, command_key)
        if state == "foreign":
            raise SetupError(
                ErrorCode.CONFIG_CONFLICT,
                f"{path} already has a server named {name!r} that j-cli did not write; "
                "rename or remove it, then run setup again. Nothing was written.",
                {"path": str(path), "name": name},
            )
        if state != "installed":
            table[name] = copy.deepcopy(dict(desired))


def remove_named(
    table: MutableMapping[str, Any], names: tuple[str, ...], command_key: str = "command"
) -> list[str]:
    """Delete our entries among ``names``; returns the names left alone as someone else's."""
    foreign: list[str] = []
    for name in names:
        current = table.get(name)
        if current is None:
            continue
        if isinstance(current, Mapping) and is_our_command(current.get(command_key)):
            del table[name]
        else:
            foreign.append(name)
    return foreign


def set_hook_group(groups: list[Any], desired: Mapping[str, Any], host: str) -> None:
    """Make ``desired`` the one matcher group holding our guard for ``host``.

    An existing group of ours is replaced in place (keeping its position); duplicates are
    dropped; our hook is taken out of groups shared with someone else's hooks.
    """
    placed = False
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if not _group_has_guard(group, host):
            continue
        others = [hook for hook in group["hooks"] if not _is_guard(hook, host)]
        if others:
            group["hooks"] = others
            continue
        if placed:
            del groups[index]
        else:
            groups[index] = copy.deepcopy(dict(desired))
            placed = True
    if not placed:
        groups.append(copy.deepcopy(dict(desired)))


def remove_hook_groups(groups: list[Any], host: str) -> None:
    """Delete our guard for ``host``: whole groups of ours, or our hook inside shared groups."""
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if not _group_has_guard(group, host):
            continue
        others = [hook for hook in group["hooks"] if not _is_guard(hook, host)]
        if others:
            group["hooks"] = others
        else:
            del groups[index]


def hook_group_state(groups: object, desired: Mapping[str, Any], host: str) -> EntryState:
    """Whether our guard group is there exactly as setup would write it."""
    if not isinstance(groups, list):
        return "absent"
    ours = [group for group in groups if _group_has_guard(group, host)]
    if not ours:
        return "absent"
    return "installed" if [_plain(g) for g in ours] == [_plain(desired)] else "outdated"


def plan_json_file(
    path: Path,
    edit: Callable[[JsonDoc], None],
    *,
    delete_if_empty: bool = False,
    prune_dirs: tuple[Path, ...] = (),
) -> FileChange | None:
    """Plan one JSON file's change: read, parse, apply ``edit`` to a copy, serialise.

    Returns:
        None when the edit changes nothing (so a second setup writes nothing); otherwise the
        change, a delete when ``delete_if_empty`` and the edited document is ``{}``.

    Raises:
        SetupError: ``CONFIG_INVALID`` when the file does not parse; whatever ``edit`` raises.
    """
    before = read_text(path)
    doc = load_json(path, before)
    edited = copy.deepcopy(doc)
    edit(edited)
    if edited == doc and before is not None:
        return None
    if not edited and before is None:
        return None
    if delete_if_empty and not edited:
        return FileChange(path, before, None, prune_dirs)
    return FileChange(path, before, dump_json(edited, before))


def _is_guard(hook: object, host: str) -> bool:
    return isinstance(hook, Mapping) and is_guard_command(hook.get("command"), host)


def _group_has_guard(group: object, host: str) -> bool:
    if not isinstance(group, MutableMapping):
        return False
    hooks = group.get("hooks")
    return isinstance(hooks, list) and any(_is_guard(hook, host) for hook in hooks)


def _plain(value: object) -> object:
    """A comparable plain-Python copy (tomlkit containers become dicts and lists)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    return value
