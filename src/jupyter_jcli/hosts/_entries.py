"""Managed entries inside parsed configs: named server entries, hook groups, name lists.

Every function edits a parsed document in place and touches only what is ours. A server entry
under one of our names is ours when it is exactly the entry setup would write now, or exactly
the one the ledger (:mod:`._state`) says setup wrote there (an older installation); anything else
under our name is someone else's: never overwritten (``CONFIG_CONFLICT``) and never removed. A
hook is ours when its command is our guard; a name in a list is ours only when the ledger says
setup added it; a container (object, table, list) is removed only when setup created it and it
is empty again. The hooks jupyter-jcli 0.9.7's setup wrote are recognised by its own marker
(:func:`remove_reference_hooks`): setup replaces them with ours and ``--remove`` takes them out;
so is the ``jcli-notebook-output`` server entry it registered (:func:`is_reference_server`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, MutableMapping
from pathlib import Path
from typing import Any, Literal

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._jsonconf import JsonDoc, dump_json, is_plain_json, load_json, load_jsonc
from jupyter_jcli.hosts._jsonedit import patch_json_text, same_json
from jupyter_jcli.hosts._model import FileChange, SetupError
from jupyter_jcli.hosts._servers import READONLY_SERVER, guard_command, is_guard_command
from jupyter_jcli.hosts._state import FileRecord

__all__ = [
    "REFERENCE_HOOK_MARKER",
    "REFERENCE_HOOK_VALUES",
    "EntryState",
    "add_items",
    "entry_state",
    "guard_group",
    "guard_state",
    "hook_group_state",
    "is_reference_server",
    "list_at",
    "plain_value",
    "plan_json_file",
    "prune_created",
    "remove_guard",
    "remove_hook_groups",
    "remove_items",
    "remove_named",
    "remove_reference_hooks",
    "set_hook_group",
    "set_named",
    "table_at",
]

EntryState = Literal["installed", "outdated", "absent", "foreign"]

REFERENCE_HOOK_MARKER = "_jcli_managed"
"""The key jupyter-jcli 0.9.7's setup puts in each native hook entry it writes
(``{"type": "command", "command": "j-cli _hooks notebook-exec-guard", "_jcli_managed":
"notebook-exec-guard"}``), in Claude Code's settings files and Codex's ``hooks.json``."""
REFERENCE_HOOK_VALUES = frozenset(
    {"notebook-exec-guard", "nbconvert-guard", "pair-drift-guard-pre", "pair-drift-guard",
     "notebook-edit-guard", "pair-drift-guard-notebook", "pair-drift-guard-post",
     "python-run-guard"}
)  # fmt: skip
"""The marker's values that reference's setup owns (its current names and older aliases)."""


def table_at(
    doc: MutableMapping[str, Any],
    keys: tuple[str, ...],
    path: Path,
    record: FileRecord | None = None,
    make: Callable[[], Any] = dict,
) -> Any:
    """The mapping at ``doc[keys...]``, created (with ``make``) when missing; each container
    created is noted in ``record["containers"]``.

    Raises:
        SetupError: ``CONFIG_INVALID`` when something on the way is not a mapping.
    """
    node: Any = doc
    for depth, key in enumerate(keys):
        if key not in node:
            node[key] = make()
            if record is not None:
                created = record.setdefault("containers", [])
                if list(keys[: depth + 1]) not in created:
                    created.append(list(keys[: depth + 1]))
        node = node[key]
        if not isinstance(node, MutableMapping):
            raise SetupError(
                ErrorCode.CONFIG_INVALID,
                f"{path}: {'.'.join(keys[: depth + 1])} must be a table/object; it was left "
                "untouched.",
                {"path": str(path), "key": ".".join(keys[: depth + 1])},
            )
    return node


def list_at(doc: MutableMapping[str, Any], keys: tuple[str, ...], path: Path,
            record: FileRecord, make: Callable[[], Any] = list) -> Any:  # fmt: skip
    """The list at ``doc[keys...]`` (its parents via :func:`table_at`), created when missing.

    Raises:
        SetupError: ``CONFIG_INVALID`` when it (or a parent) has the wrong type.
    """
    parent = table_at(doc, keys[:-1], path, record)
    if keys[-1] not in parent:
        parent[keys[-1]] = make()
        created = record.setdefault("containers", [])
        if list(keys) not in created:
            created.append(list(keys))
    found = parent[keys[-1]]
    if not isinstance(found, list):
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            f"{path}: {'.'.join(keys)} must be a list/array; it was left untouched.",
            {"path": str(path), "key": ".".join(keys)},
        )
    return found


def prune_created(doc: MutableMapping[str, Any], record: FileRecord) -> None:
    """Remove each container setup created that is empty now, deepest first."""
    for keys in sorted(record.get("containers", []), key=len, reverse=True):
        node: Any = doc
        for key in keys[:-1]:
            node = node.get(key) if isinstance(node, MutableMapping) else None
        if not isinstance(node, MutableMapping) or keys[-1] not in node:
            continue
        value = node[keys[-1]]
        if isinstance(value, (MutableMapping, list)) and len(value) == 0:
            del node[keys[-1]]


def entry_state(
    current: object, desired: Mapping[str, Any], recorded: object = None, name: str | None = None
) -> EntryState:
    """How an existing named entry compares with the one setup would write (``desired``) and
    the one the ledger says setup wrote (``recorded``); under ``name``, the entry jupyter-jcli
    0.9.7's setup registered (:func:`is_reference_server`) is ``outdated`` (ours to replace)."""
    if current is None:
        return "absent"
    plain = plain_value(current)
    if same_json(plain, plain_value(desired)):
        return "installed"
    if recorded is not None and same_json(plain, plain_value(recorded)):
        return "outdated"
    if name is not None and is_reference_server(name, plain):
        return "outdated"
    return "foreign"


def is_reference_server(name: str, entry: object) -> bool:
    """Whether ``entry``, under ``name``, is exactly the MCP server jupyter-jcli 0.9.7's setup
    registered (through ``claude mcp add`` / ``codex mcp add``): only ``jcli-notebook-output``,
    ``command`` ``j-cli``, ``args`` ``["mcp", "serve"]`` (user scope) or ``["mcp", "serve",
    "--root", ABSOLUTE]``, ``type`` ``stdio`` or none, ``env`` empty or none, nothing else."""
    if name != READONLY_SERVER or not isinstance(entry, Mapping):
        return False
    if set(entry) - {"type", "command", "args", "env"}:
        return False
    args = entry.get("args")
    rooted = (
        isinstance(args, list)
        and len(args) == 4
        and args[:3] == ["mcp", "serve", "--root"]
        and isinstance(args[3], str)
        and Path(args[3]).is_absolute()
    )
    return (
        entry.get("type", "stdio") == "stdio"
        and entry.get("command") == "j-cli"
        and (args == ["mcp", "serve"] or rooted)
        and entry.get("env") in (None, {})
    )


def set_named(
    table: MutableMapping[str, Any],
    entries: Mapping[str, Mapping[str, Any]],
    path: Path,
    record: FileRecord,
    prefix: str,
) -> None:
    """Put each entry under its name, replacing only our own entries; note them in ``record``.

    Raises:
        SetupError: ``CONFIG_CONFLICT`` (details ``path``, ``name``) when a name is taken by an
            entry setup did not write.
    """
    written = record.setdefault("entries", {})
    for name, desired in entries.items():
        key = f"{prefix}/{name}"
        state = entry_state(table.get(name), desired, written.get(key), name)
        if state == "foreign":
            raise SetupError(
                ErrorCode.CONFIG_CONFLICT,
                f"{path} already has a server named {name!r} that j-cli setup did not write; "
                "rename or remove it, then run setup again. Nothing was written.",
                {"path": str(path), "name": name},
            )
        if state != "installed":
            table[name] = copy.deepcopy(dict(desired))
        written[key] = copy.deepcopy(plain_value(desired))


def remove_named(
    table: MutableMapping[str, Any],
    entries: Mapping[str, Mapping[str, Any]],
    record: FileRecord,
    prefix: str,
) -> list[str]:
    """Delete our entries among ``entries``' names; returns the names left alone as someone
    else's."""
    foreign: list[str] = []
    written = record.get("entries", {})
    for name, desired in entries.items():
        current = table.get(name)
        state = entry_state(current, desired, written.get(f"{prefix}/{name}"), name)
        if state in ("installed", "outdated"):
            del table[name]
        elif state == "foreign":
            foreign.append(name)
    return foreign


def add_items(items: list[Any], names: tuple[str, ...], record: FileRecord, key: str) -> None:
    """Append the missing ``names`` to ``items``, noting in ``record`` the ones setup added."""
    added = record.setdefault("items", {}).setdefault(key, [])
    for name in names:
        if name not in items:
            items.append(name)
            if name not in added:
                added.append(name)


def remove_items(items: list[Any], record: FileRecord, key: str) -> None:
    """Take out of ``items`` the names the ledger says setup added (nobody else's)."""
    for name in record.get("items", {}).get(key, []):
        if name in items:
            items.remove(name)


def set_hook_group(groups: list[Any], desired: Mapping[str, Any], host: str) -> None:
    """Make ``desired`` the one matcher group holding our guard for ``host``.

    An existing group of ours is replaced in place (keeping its position); duplicates are
    dropped; our hook is taken out of groups shared with someone else's hooks.
    """
    ours = _strip_guard(groups, host)
    if not ours:
        groups.append(copy.deepcopy(dict(desired)))
        return
    groups[ours[0]] = copy.deepcopy(dict(desired))
    for index in ours[1:]:
        del groups[index]


GUARD_HOOK_TIMEOUT_S = 10
"""Seconds a host lets our guard hook run."""


def guard_group(host: str, matcher: str) -> dict[str, Any]:
    """The ``PreToolUse`` matcher group that runs our guard for ``host`` (``claude``,
    ``codex``) on the tools ``matcher`` names (the hook format Claude Code and Codex share)."""
    return {
        "matcher": matcher,
        "hooks": [
            {"type": "command", "command": guard_command(host), "timeout": GUARD_HOOK_TIMEOUT_S}
        ],
    }


def _guard_groups(doc: Mapping[str, Any]) -> object:
    """``doc["hooks"]["PreToolUse"]``, the matcher groups our guard is in (``None`` when
    ``hooks`` is not a table)."""
    hooks = doc.get("hooks")
    return hooks.get("PreToolUse") if isinstance(hooks, Mapping) else None


def remove_guard(doc: Mapping[str, Any], host: str) -> None:
    """Delete our guard for ``host`` from ``doc``'s ``PreToolUse`` groups
    (:func:`remove_hook_groups`); a config without them is left as it is."""
    groups = _guard_groups(doc)
    if isinstance(groups, list):
        remove_hook_groups(groups, host)


def guard_state(doc: Mapping[str, Any], host: str, matcher: str) -> EntryState:
    """Whether ``doc`` holds our guard group for ``host`` exactly as setup writes it
    (:func:`hook_group_state` of :func:`guard_group`)."""
    return hook_group_state(_guard_groups(doc), guard_group(host, matcher), host)


def remove_hook_groups(groups: list[Any], host: str) -> None:
    """Delete our guard for ``host``: whole groups of ours, or our hook inside shared groups."""
    for index in _strip_guard(groups, host):
        del groups[index]


def _strip_guard(groups: list[Any], host: str) -> list[int]:
    """Take our guard for ``host`` out of the groups it shares with other hooks; return the
    indexes of the groups holding nothing but it, last first."""
    ours: list[int] = []
    for index in range(len(groups) - 1, -1, -1):
        group = groups[index]
        if not _group_has_guard(group, host):
            continue
        others = [hook for hook in group["hooks"] if not _is_guard(hook, host)]
        if others:
            group["hooks"] = others
        else:
            ours.append(index)
    return ours


def remove_reference_hooks(doc: MutableMapping[str, Any]) -> int:
    """Delete the hook entries jupyter-jcli 0.9.7's setup wrote (:data:`REFERENCE_HOOK_MARKER`
    with a value in :data:`REFERENCE_HOOK_VALUES`) from ``doc["hooks"][EVENT][i]["hooks"]``,
    every event; a matcher group, an event list and ``hooks`` itself that this empties are
    deleted too (as that setup's own ``--remove`` does); everything else stays.

    Returns:
        How many entries were deleted.
    """
    hooks = doc.get("hooks")
    if not isinstance(hooks, MutableMapping):
        return 0
    removed = 0
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        removed_before = removed
        for index in range(len(groups) - 1, -1, -1):
            group = groups[index]
            entries = group.get("hooks") if isinstance(group, MutableMapping) else None
            if not isinstance(entries, list):
                continue
            kept = [entry for entry in entries if not _is_reference_hook(entry)]
            if len(kept) == len(entries):
                continue
            removed += len(entries) - len(kept)
            if kept:
                group["hooks"] = kept
            else:
                del groups[index]
        if not groups and removed > removed_before:
            del hooks[event]
    if not hooks and removed:
        del doc["hooks"]
    return removed


def _is_reference_hook(entry: object) -> bool:
    return isinstance(entry, Mapping) and entry.get(REFERENCE_HOOK_MARKER) in REFERENCE_HOOK_VALUES


def hook_group_state(groups: object, desired: Mapping[str, Any], host: str) -> EntryState:
    """Whether our guard group is there exactly as setup would write it."""
    if not isinstance(groups, list):
        return "absent"
    ours = [group for group in groups if _group_has_guard(group, host)]
    if not ours:
        return "absent"
    return "installed" if [plain_value(g) for g in ours] == [plain_value(desired)] else "outdated"


def plan_json_file(
    path: Path,
    edit: Callable[[JsonDoc], None],
    record: FileRecord,
    *,
    remove: bool,
    prune_dirs: tuple[Path, ...] = (),
    emptied_by_edit: Callable[[], bool] | None = None,
    by_hand: Callable[[JsonDoc], str] | None = None,
) -> FileChange | None:
    """Plan one JSON file's change: read, parse, apply ``edit`` to a copy, splice the difference
    into the text (:func:`patch_json_text`: the rest keeps its bytes).

    A file setup creates is noted in ``record``; a removal deletes the file only when setup
    created it and nothing is left in it, or when ``emptied_by_edit`` says the edit took out
    entries someone's setup wrote there (jupyter-jcli 0.9.7's hooks) and nothing is left.

    With ``by_hand``, the file is read as JSONC (comments, trailing commas): such a file is
    left alone when the edit changes nothing, and refused when it would (setup does not rewrite
    it without its comments), with ``by_hand(edited)`` (what to write there by hand) in the
    message.

    Returns:
        None when the edit changes nothing (so a second setup writes nothing); else the change.

    Raises:
        SetupError: ``CONFIG_INVALID`` when the file does not parse, or (details ``reason:
            "comments"``) when it is JSONC and must change; whatever ``edit`` raises.
    """
    before = read_text(path)
    jsonc = by_hand is not None and not is_plain_json(before)
    doc = load_jsonc(path, before) if jsonc else load_json(path, before)
    edited = copy.deepcopy(doc)
    edit(edited)
    if jsonc and by_hand is not None and not same_json(edited, doc):
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            f"{path} has comments (JSONC), which j-cli setup does not rewrite; nothing was "
            f"written. {by_hand(edited)}",
            {"path": str(path), "reason": "comments"},
        )
    if before is None:
        if not edited or remove:
            return None
        record["created"] = True
        return FileChange(path, None, dump_json(edited, None))
    if same_json(edited, doc):
        return None
    if not edited and (
        (remove and record.get("created")) or (emptied_by_edit is not None and emptied_by_edit())
    ):
        return FileChange(path, before, None, prune_dirs)
    if not doc and not before.strip():
        return FileChange(path, before, dump_json(edited, None))
    return FileChange(path, before, patch_json_text(before, doc, edited))


def _is_guard(hook: object, host: str) -> bool:
    return isinstance(hook, Mapping) and is_guard_command(hook.get("command"), host)


def _group_has_guard(group: object, host: str) -> bool:
    if not isinstance(group, MutableMapping):
        return False
    hooks = group.get("hooks")
    return isinstance(hooks, list) and any(_is_guard(hook, host) for hook in hooks)


def plain_value(value: object) -> object:
    """A comparable plain-Python copy (tomlkit containers become dicts and lists)."""
    unwrap = getattr(value, "unwrap", None)  # tomlkit items: their plain Python value
    if callable(unwrap):
        value = unwrap()
    if isinstance(value, Mapping):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value
