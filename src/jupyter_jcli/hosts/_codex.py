"""Codex: both MCP servers under ``[mcp_servers.NAME]`` and the guard as a ``PreToolUse`` hook.

File: ``.codex/config.toml`` (project) or ``$CODEX_HOME/config.toml`` (user, ``~/.codex`` by
default), edited with tomlkit so comments, ordering and formatting of everything else survive.

Codex's own rules that matter here:

- A server is ``command`` + ``args`` (stdio). ``codex mcp list`` lists servers; it does not
  start them, so it reports them ``enabled``, not connected.
- A server gets only a default set of the environment's variables (``HOME``, ``PATH``, ...)
  plus ``env`` (values, written in the file) and ``env_vars`` (names of variables passed
  through from Codex's own environment). With a Jupyter Server, ``jupyter-mcp`` gets
  ``env_vars = ["JUPYTER_JCLI_SERVER_TOKEN"]``: the token is never in the file.
- A project's ``.codex/config.toml`` is read only when the project is trusted
  (``[projects."PATH"] trust_level = "trusted"`` in the user config, which Codex writes when the
  person accepts its trust prompt). Setup reports an untrusted project; it does not trust it.
- Hooks (on by default since Codex 0.124) live inline as ``[[hooks.PreToolUse]]`` tables; the
  matcher is a regex over tool names (``Bash`` for shell commands, ``apply_patch`` for file
  edits, which Codex also matches as ``Edit``/``Write``). Codex asks the person to review and
  trust a new non-managed hook (``/hooks``) before running it.

jupyter-jcli 0.9.7's setup wrote its hooks into ``.codex/hooks.json`` (``$CODEX_HOME/hooks.json``
for the user), marked ``"_jcli_managed"``: setup takes them out (our guard replaces them) and so
does ``--remove``; a ``hooks.json`` left empty is deleted, as that setup's own ``--remove`` does.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._blocks import plan_reference_ignore
from jupyter_jcli.hosts._entries import (
    entry_state,
    guard_group,
    guard_state,
    list_at,
    plan_json_file,
    prune_created,
    remove_guard,
    remove_named,
    remove_reference_hooks,
    set_hook_group,
    set_named,
    table_at,
)
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._model import FileChange, PlanRequest, Scope, SetupError, StatusItem
from jupyter_jcli.hosts._paths import codex_home
from jupyter_jcli.hosts._servers import (
    SERVER_NAMES,
    WORKBENCH_SERVER,
    KernelServer,
    recorded_server,
    server_specs,
)
from jupyter_jcli.hosts._state import FileRecord, Ledger

__all__ = ["GUARD_MATCHER", "plan", "status"]

GUARD_MATCHER = "Bash|apply_patch"
"""The Codex tools the guard sees: shell commands and patch edits."""


def config_path(scope: Scope, root: Path | None) -> Path:
    """The ``config.toml`` setup edits for ``scope``."""
    return scope.path(root, ".codex/config.toml", lambda: codex_home() / "config.toml")


def _servers(
    scope: Scope, root: Path | None, server: KernelServer | None = None
) -> dict[str, dict[str, Any]]:
    entries: dict[str, dict[str, Any]] = {}
    for name, spec in server_specs(scope, root, server).items():
        entries[name] = {"command": str(spec.command), "args": list(spec.args)}
        if spec.forward:
            entries[name]["env_vars"] = list(spec.forward)
    return entries


def _parse(path: Path, text: str | None) -> Any:
    import tomlkit
    from tomlkit.exceptions import ParseError

    try:
        return tomlkit.parse(text or "")
    except ParseError as err:
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            f"{path} is not valid TOML (line {err.line}, column {err.col}); it was left untouched.",
            {"path": str(path), "line": err.line, "column": err.col},
        ) from err


def plan(request: PlanRequest) -> tuple[list[FileChange], list[str]]:
    """The change of ``config.toml`` that installs (or removes) the Codex integration;
    ``server``: register ``jupyter-mcp`` to run its kernels there. Either way, the hooks
    jupyter-jcli 0.9.7 wrote into ``hooks.json`` are taken out.

    Raises:
        SetupError: ``CONFIG_INVALID`` (the TOML does not parse, or a key has the wrong type),
            ``CONFIG_CONFLICT`` (a server name of ours taken by an entry setup did not write).
    """
    changes, notes = _plan_config(request)
    change = _plan_reference_hooks(request.scope, request.root, request.remove, notes)
    changes += [change] if change is not None else []
    if request.scope is Scope.PROJECT:  # the ignore lines 0.9.7's --local put in .codex/
        folder = config_path(request.scope, request.root).parent
        blocks = {"tool": ["/config.toml"]}  # its /hooks.json block may guard the person's hooks
        ignore = plan_reference_ignore(folder, blocks, (folder,))
        changes += [ignore] if ignore is not None else []
    return changes, notes


def reference_hooks_path(scope: Scope, root: Path | None) -> Path:
    """Where jupyter-jcli 0.9.7's ``setup codex`` wrote its hooks for ``scope``."""
    return scope.path(root, ".codex/hooks.json", lambda: codex_home() / "hooks.json")


def _plan_reference_hooks(
    scope: Scope, root: Path | None, remove: bool, notes: list[str]
) -> FileChange | None:
    """The change that takes the reference's hooks out of its ``hooks.json``; a file that does
    not parse is left alone, with a note (it is not ours, and Codex refuses it anyway)."""
    path = reference_hooks_path(scope, root)
    removed = [0]

    def edit(doc: dict[str, Any]) -> None:
        removed[0] = remove_reference_hooks(doc)

    try:
        change = plan_json_file(
            path, edit, FileRecord(), remove=remove, emptied_by_edit=lambda: removed[0] > 0
        )
    except SetupError:
        notes.append(f"{path}: not valid JSON; left untouched (hooks there were not checked).")
        return None
    if removed[0]:
        verb = "removed" if remove else "replaced by ours"
        notes.append(f"{path}: {removed[0]} hook entries jupyter-jcli 0.9.7 wrote, {verb}.")
    return change


def _plan_config(request: PlanRequest) -> tuple[list[FileChange], list[str]]:
    """:func:`plan` for ``config.toml``."""
    scope, root, remove, ledger, server = request
    import tomlkit

    path = config_path(scope, root)
    before = read_text(path)
    doc = _parse(path, before)
    notes: list[str] = []
    servers = _servers(scope, root, server)
    if remove:
        record = ledger.peek("codex", path)
        table = doc.get("mcp_servers")
        if isinstance(table, MutableMapping):
            left = remove_named(table, servers, record, "mcp_servers")
            notes.extend(
                f"{path}: left [mcp_servers.{name}]: not written by j-cli." for name in left
            )
        remove_guard(doc, "codex")
        prune_created(doc, record)
        ledger.forget("codex", path)
    else:
        record = ledger.record("codex", path)
        table = table_at(
            doc, ("mcp_servers",), path, record, lambda: tomlkit.table(is_super_table=True)
        )
        set_named(table, servers, path, record, "mcp_servers")
        table_at(doc, ("hooks",), path, record, lambda: tomlkit.table(is_super_table=True))
        groups = list_at(doc, ("hooks", "PreToolUse"), path, record, tomlkit.aot)
        set_hook_group(groups, guard_group("codex", GUARD_MATCHER), "codex")
        notes.append(
            "Codex asks you to review and trust a new hook before it runs: open `codex` and "
            "trust the j-cli guard in /hooks."
        )
        if scope is Scope.PROJECT and root is not None and not _trusted(root):
            notes.append(
                f"Codex reads {path} only in a trusted project: start `codex` in {root} once and "
                "trust it."
            )
    after = tomlkit.dumps(doc)
    if after == (before or ""):
        return [], notes
    if before is None:
        record["created"] = True
        return [FileChange(path, None, after)], notes
    if remove:
        after = _restore_ending(before, after, record.get("ending"))
    elif "ending" not in record:
        record["ending"] = _ending(before)
    if remove and not after.strip() and record.get("created"):
        return [
            FileChange(path, before, None, (path.parent,) if scope is Scope.PROJECT else ())
        ], notes
    return [FileChange(path, before, after)], notes


def _ending(text: str) -> str:
    """The run of line breaks ``text`` ends with."""
    return text[len(text.rstrip("\r\n")) :]


def _restore_ending(before: str, after: str, ending: str | None) -> str:
    """tomlkit keeps the blank lines that separated a removed table: end the text as it ended
    before setup (the ledger's ``ending``), else as it ends now."""
    return after.rstrip("\r\n") + (ending if ending is not None else _ending(before))


def status(scope: Scope, root: Path | None, ledger: Ledger) -> list[StatusItem]:
    """What of the Codex integration is installed in ``scope``."""
    path = config_path(scope, root)
    try:
        doc = _parse(path, read_text(path))
    except SetupError:
        return [
            StatusItem("codex", scope, item, path, "invalid")
            for item in (*(f"mcp:{n}" for n in SERVER_NAMES), "hook:guard")
        ]
    recorded = ledger.peek("codex", path).get("entries", {})
    ours = recorded.get(f"mcp_servers/{WORKBENCH_SERVER}")
    servers = _servers(scope, root, recorded_server(ours.get("args") if ours else None))
    table = doc.get("mcp_servers")
    items = [
        StatusItem(
            "codex",
            scope,
            f"mcp:{name}",
            path,
            entry_state(
                table.get(name) if isinstance(table, MutableMapping) else None,
                servers[name],
                recorded.get(f"mcp_servers/{name}"),
                name,
            ),
        )
        for name in SERVER_NAMES
    ]
    state = guard_state(doc, "codex", GUARD_MATCHER)
    items.append(StatusItem("codex", scope, "hook:guard", path, state))
    return items


def _trusted(root: Path) -> bool:
    """Whether the user's Codex config marks ``root`` as a trusted project."""
    user = codex_home() / "config.toml"
    try:
        doc = _parse(user, read_text(user))
    except SetupError:
        return False
    projects = doc.get("projects")
    entry = projects.get(str(root)) if isinstance(projects, MutableMapping) else None
    return isinstance(entry, MutableMapping) and entry.get("trust_level") == "trusted"
