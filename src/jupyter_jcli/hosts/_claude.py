"""Claude Code: both MCP servers, their approval, and the guard hook.

Files (Claude Code's own formats):

=======================  =================================  ====================================
what                     project scope                      user scope
=======================  =================================  ====================================
MCP servers              ``.mcp.json`` ``mcpServers``       ``~/.claude.json`` ``mcpServers``
                                                            (what ``claude mcp add --scope user``
                                                            writes)
approval of the servers  ``.claude/settings.local.json``    (user servers need none)
                         ``enabledMcpjsonServers``
guard hook               ``.claude/settings.json``          ``~/.claude/settings.json``
                         ``hooks.PreToolUse``               ``hooks.PreToolUse``
=======================  =================================  ====================================

A server entry is ``{"type": "stdio", "command": ABS, "args": [...], "env": {}}``; with a
Jupyter Server, ``jupyter-mcp``'s ``env`` is ``{"JUPYTER_JCLI_SERVER_TOKEN":
"${JUPYTER_JCLI_SERVER_TOKEN:-}"}``: Claude Code expands ``${VAR}`` / ``${VAR:-default}`` in
``command``, ``args``, ``env``, ``url`` and ``headers`` when it starts a server (in
``.mcp.json`` and ``~/.claude.json``), so the token travels from the person's environment and
is never in the file; the empty default keeps an unset variable from being an error. Project
servers from ``.mcp.json`` stay "pending approval" until approved; setup records the approval of
our two names in the personal (not committed) ``settings.local.json``, where Claude Code keeps
approvals itself: it appends only the names not listed yet, the ledger (:mod:`._state`) notes
which, and ``--remove`` takes out only those. A name of ours the person listed in
``disabledMcpjsonServers`` is their choice: setup stops with ``CONFIG_CONFLICT``. Claude Code
still reads a project's settings only once the person has trusted
the folder (its trust dialog); setup does not answer that dialog for them.

The guard group matches ``Write|Edit|MultiEdit|NotebookEdit|Bash``: ``NotebookEdit`` keeps the
JSON valid but edits cells without their revs, so the guard denies it on a notebook too.

The hook entries jupyter-jcli 0.9.7's setup wrote (``j-cli _hooks ...`` / ``j-cli-hook ...``,
marked ``"_jcli_managed"``) in ``.claude/settings.json``, ``.claude/settings.local.json`` (its
default ``--local`` scope) or ``~/.claude/settings.json`` are taken out by setup (ours replace
them: one guard, no duplicates) and by ``--remove``; a file left empty by that is deleted, as
that setup's own ``--remove`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._entries import (
    add_items,
    entry_state,
    guard_group,
    guard_state,
    list_at,
    plan_json_file,
    prune_created,
    remove_guard,
    remove_items,
    remove_named,
    remove_reference_hooks,
    set_hook_group,
    set_named,
    table_at,
)
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._jsonconf import JsonDoc, load_json
from jupyter_jcli.hosts._model import FileChange, PlanRequest, Scope, SetupError, StatusItem
from jupyter_jcli.hosts._paths import claude_config_dir, claude_user_config
from jupyter_jcli.hosts._servers import (
    SERVER_NAMES,
    WORKBENCH_SERVER,
    KernelServer,
    recorded_server,
    server_specs,
)
from jupyter_jcli.hosts._state import Ledger

__all__ = ["GUARD_MATCHER", "plan", "status"]

GUARD_MATCHER = "Write|Edit|MultiEdit|NotebookEdit|Bash"
"""The Claude Code tools the guard sees (a regex over tool names, Claude Code's matcher rule)."""


def _files(scope: Scope, root: Path | None) -> tuple[Path, Path, Path | None]:
    """(servers file, settings file for the hook, approvals file or None)."""
    if scope is Scope.PROJECT:
        assert root is not None
        return (
            root / ".mcp.json",
            root / ".claude" / "settings.json",
            (root / ".claude" / "settings.local.json"),
        )
    return claude_user_config(), claude_config_dir() / "settings.json", None


def _servers(
    scope: Scope, root: Path | None, server: KernelServer | None = None
) -> dict[str, dict[str, Any]]:
    return {
        name: {
            "type": "stdio",
            "command": str(spec.command),
            "args": list(spec.args),
            "env": {variable: f"${{{variable}:-}}" for variable in spec.forward},
        }
        for name, spec in server_specs(scope, root, server).items()
    }


def plan(request: PlanRequest) -> tuple[list[FileChange], list[str]]:
    """The file changes that install (or remove) Claude Code's integration, and notes;
    ``server``: register ``jupyter-mcp`` to run its kernels there.

    Raises:
        SetupError: ``CONFIG_INVALID`` / ``CONFIG_CONFLICT`` (see :mod:`._entries`); a conflict
            in any of the files writes none of them.
    """
    scope, root, remove, ledger, server = request
    servers_file, settings_file, approvals_file = _files(scope, root)
    notes: list[str] = []
    servers = _servers(scope, root, server)
    records = {
        path: ledger.peek("claude", path) if remove else ledger.record("claude", path)
        for path in (servers_file, settings_file, approvals_file)
        if path is not None
    }

    def edit_servers(doc: JsonDoc) -> None:
        record = records[servers_file]
        if remove:
            if isinstance(doc.get("mcpServers"), dict):
                left = remove_named(doc["mcpServers"], servers, record, "mcpServers")
                notes.extend(
                    f"{servers_file}: left {name!r}: not written by j-cli." for name in left
                )
            prune_created(doc, record)
            return
        table = table_at(doc, ("mcpServers",), servers_file, record)
        set_named(table, servers, servers_file, record, "mcpServers")

    replaced = {path: 0 for path in records}

    def drop_reference_hooks(path: Path, doc: JsonDoc) -> None:
        replaced[path] = remove_reference_hooks(doc)
        if replaced[path]:
            verb = "removed" if remove else "replaced by ours"
            notes.append(f"{path}: {replaced[path]} hook entries jupyter-jcli 0.9.7 wrote, {verb}.")

    def edit_hook(doc: JsonDoc) -> None:
        record = records[settings_file]
        drop_reference_hooks(settings_file, doc)
        if remove:
            remove_guard(doc, "claude")
            prune_created(doc, record)
            return
        groups = list_at(doc, ("hooks", "PreToolUse"), settings_file, record)
        set_hook_group(groups, guard_group("claude", GUARD_MATCHER), "claude")

    def edit_approvals(doc: JsonDoc) -> None:
        assert approvals_file is not None
        record = records[approvals_file]
        drop_reference_hooks(approvals_file, doc)
        names = doc.get("enabledMcpjsonServers")
        if remove:
            if isinstance(names, list):
                remove_items(names, record, "enabledMcpjsonServers")
            prune_created(doc, record)
            return
        disabled = doc.get("disabledMcpjsonServers")
        taken = [n for n in SERVER_NAMES if isinstance(disabled, list) and n in disabled]
        if taken:
            raise SetupError(
                ErrorCode.CONFIG_CONFLICT,
                f"{approvals_file} disables {taken[0]!r} (disabledMcpjsonServers); setup does not "
                "override that choice. Take it out of that list, then run setup again. Nothing "
                "was written.",
                {"path": str(approvals_file), "name": taken[0], "key": "disabledMcpjsonServers"},
            )
        names = list_at(doc, ("enabledMcpjsonServers",), approvals_file, record)
        add_items(names, SERVER_NAMES, record, "enabledMcpjsonServers")

    def emptied_by(path: Path) -> Callable[[], bool]:
        return lambda: replaced[path] > 0  # whether the edit took out 0.9.7's hooks

    prune = (settings_file.parent,) if scope is Scope.PROJECT else ()
    changes = [plan_json_file(servers_file, edit_servers, records[servers_file], remove=remove)]
    for path, edit in ((settings_file, edit_hook), (approvals_file, edit_approvals)):
        if path is not None:
            changes.append(
                plan_json_file(
                    path,
                    edit,
                    records[path],
                    remove=remove,
                    prune_dirs=prune,
                    emptied_by_edit=emptied_by(path),
                )
            )
    if remove:
        for path in records:
            ledger.forget("claude", path)
    elif scope is Scope.PROJECT and root is not None and not _trusted(root):
        notes.append(
            "Claude Code reads this project's settings once you trust the folder: start `claude` "
            "in it once and accept the trust prompt."
        )
    return [c for c in changes if c is not None], notes


def status(scope: Scope, root: Path | None, ledger: Ledger) -> list[StatusItem]:
    """What of Claude Code's integration is installed in ``scope``."""
    servers_file, settings_file, _ = _files(scope, root)
    items: list[StatusItem] = []
    recorded = ledger.peek("claude", servers_file).get("entries", {})
    ours = recorded.get(f"mcpServers/{WORKBENCH_SERVER}")
    servers = _servers(scope, root, recorded_server(ours.get("args") if ours else None))
    doc = _load_or_none(servers_file)
    for name in SERVER_NAMES:
        if doc is None:
            items.append(StatusItem("claude", scope, f"mcp:{name}", servers_file, "invalid"))
            continue
        table = doc.get("mcpServers")
        current = table.get(name) if isinstance(table, dict) else None
        state = entry_state(current, servers[name], recorded.get(f"mcpServers/{name}"), name)
        items.append(StatusItem("claude", scope, f"mcp:{name}", servers_file, state))
    settings = _load_or_none(settings_file)
    if settings is None:
        items.append(StatusItem("claude", scope, "hook:guard", settings_file, "invalid"))
    else:
        state = guard_state(settings, "claude", GUARD_MATCHER)
        items.append(StatusItem("claude", scope, "hook:guard", settings_file, state))
    return items


def _trusted(root: Path) -> bool:
    """Whether Claude Code's user state records that the person trusted ``root``."""
    try:
        doc = load_json(claude_user_config(), read_text(claude_user_config()))
    except SetupError:
        return False
    projects = doc.get("projects")
    entry = projects.get(str(root)) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("hasTrustDialogAccepted") is True


def _load_or_none(path: Path) -> JsonDoc | None:
    try:
        return load_json(path, read_text(path))
    except SetupError:
        return None
