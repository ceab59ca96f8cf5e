"""OpenCode: a plugin (the ``read_notebook_output`` tool and the guard), and ``jupyter-mcp`` as a
local MCP server.

Files (OpenCode's formats; OpenCode 1.18's plugin and custom-tool docs, and the types of
``@opencode-ai/plugin``: ``Plugin = (input, options?) => Promise<Hooks>``, a tool's ``execute``
answers ``string | {title?, output, metadata?, attachments?}``):

- the plugin: ``.opencode/plugins/jcli.js`` (project) or
  ``$XDG_CONFIG_HOME/opencode/plugins/jcli.js`` (user). OpenCode loads every ``*.{js,ts}`` of
  ``{plugin,plugins}/`` in its config folders and calls each export as a plugin function; the
  file imports ``tool`` from ``@opencode-ai/plugin``, which OpenCode installs into its config
  folders itself. Its ``tool.read_notebook_output`` runs ``j-cli -j notebook outputs|output``
  after asking OpenCode's ``read`` permission, and answers ``{title, output, metadata}`` (an
  image read: the provenance as text, the image as an attachment); its
  ``tool.execute.before`` sends shell, edit and patch calls to ``j-cli hook guard`` and throws
  on a deny. The path is the one jupyter-jcli 0.9 used, so setup replaces that version's plugin
  (and ``--remove`` deletes it); the tool file an earlier setup of ours wrote
  (``tools/read_notebook_output.js``) is deleted, so the tool is not registered twice.
- the server: ``opencode.json`` (project root, or ``$XDG_CONFIG_HOME/opencode/``) ``mcp`` entry
  ``{"type": "local", "command": [ABS, "--root", PROJECT], "enabled": true}``; with a Jupyter
  Server, ``"environment": {"JUPYTER_JCLI_SERVER_TOKEN": "{env:JUPYTER_JCLI_SERVER_TOKEN}"}``
  too: OpenCode substitutes ``{env:VAR}`` anywhere in its config with the variable's value
  (empty when unset) when it loads it, so the token is never in the file. An existing
  ``opencode.jsonc`` is edited instead when there is no ``opencode.json`` (OpenCode writes one in
  the user folder). OpenCode reads both as JSONC; setup does not rewrite a file with comments
  (or trailing commas): when ours is already there as setup would write it (or, on ``--remove``,
  nothing of ours is), the file is left alone; otherwise setup stops (``CONFIG_INVALID``,
  details ``reason: "comments"``), writes nothing, and its message gives the exact member to
  add to ``"mcp"`` by hand. jupyter-jcli 0.9.7's setup wrote only its plugin file, never this
  file.

``jcli-notebook-output`` is not registered here: the native tool is OpenCode's
``read_notebook_output``, and a second one from MCP would only duplicate it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jupyter_jcli.hosts._assets import (
    owned_state,
    plan_owned_file,
    plan_retired_file,
    render_asset,
)
from jupyter_jcli.hosts._entries import (
    entry_state,
    plan_json_file,
    prune_created,
    remove_named,
    set_named,
    table_at,
)
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._jsonconf import JsonDoc, load_jsonc
from jupyter_jcli.hosts._model import FileChange, PlanRequest, Scope, SetupError, StatusItem
from jupyter_jcli.hosts._paths import xdg_config_home
from jupyter_jcli.hosts._servers import (
    WORKBENCH_SERVER,
    KernelServer,
    recorded_server,
    server_spec,
)
from jupyter_jcli.hosts._state import Ledger

__all__ = ["PLUGIN_ASSET", "PLUGIN_FILE", "plan", "plugin_path", "status"]

PLUGIN_ASSET = "opencode_jupyter_jcli.js"
PLUGIN_FILE = "jcli.js"
_RETIRED_TOOL = ("tools", "read_notebook_output.js")


def _folder(scope: Scope, root: Path | None) -> Path:
    return scope.path(root, ".", lambda: xdg_config_home() / "opencode")


def config_path(scope: Scope, root: Path | None) -> Path:
    """The ``opencode.json`` (or existing ``opencode.jsonc``) setup edits."""
    folder = _folder(scope, root)
    plain, commented = folder / "opencode.json", folder / "opencode.jsonc"
    return commented if commented.exists() and not plain.exists() else plain


def _base(scope: Scope, root: Path | None) -> Path:
    folder = _folder(scope, root)
    return folder / ".opencode" if scope is Scope.PROJECT else folder


def plugin_path(scope: Scope, root: Path | None) -> Path:
    """Where the plugin file goes."""
    return _base(scope, root) / "plugins" / PLUGIN_FILE


def _server(scope: Scope, root: Path | None, server: KernelServer | None = None) -> dict[str, Any]:
    spec = server_spec(WORKBENCH_SERVER, scope, root, server)
    entry: dict[str, Any] = {"type": "local", "command": spec.argv, "enabled": True}
    if spec.forward:
        entry["environment"] = {variable: f"{{env:{variable}}}" for variable in spec.forward}
    return entry


def plan(request: PlanRequest) -> tuple[list[FileChange], list[str]]:
    """The file changes that install (or remove) the OpenCode integration; ``server``:
    register ``jupyter-mcp`` to run its kernels there.

    Raises:
        SetupError: ``CONFIG_INVALID`` / ``CONFIG_CONFLICT``.
    """
    scope, root, remove, ledger, server = request
    config = config_path(scope, root)
    plugin = plugin_path(scope, root)
    retired = _base(scope, root).joinpath(*_RETIRED_TOOL)
    notes: list[str] = []
    record = ledger.peek("opencode", config) if remove else ledger.record("opencode", config)
    entries = {WORKBENCH_SERVER: _server(scope, root, server)}

    def edit(doc: JsonDoc) -> None:
        if remove:
            if isinstance(doc.get("mcp"), dict):
                left = remove_named(doc["mcp"], entries, record, "mcp")
                notes.extend(f"{config}: left {n!r}: not written by j-cli." for n in left)
            prune_created(doc, record)
            return
        set_named(table_at(doc, ("mcp",), config, record), entries, config, record, "mcp")

    def by_hand(edited: JsonDoc) -> str:
        if remove:
            return (
                f'Take "{WORKBENCH_SERVER}" out of its "mcp" object there by hand, then run '
                "setup --remove again."
            )
        entry = json.dumps({WORKBENCH_SERVER: edited["mcp"][WORKBENCH_SERVER]}, indent=2)
        return (
            f'Add this member to its "mcp" object by hand (create "mcp" if missing), then run '
            f"setup again:\n{entry[1:-1].strip()}"
        )

    project = scope is Scope.PROJECT
    prune = (plugin.parent, plugin.parent.parent) if project else (plugin.parent,)
    changes = [
        plan_owned_file(plugin, render_asset(PLUGIN_ASSET), remove, prune),
        plan_retired_file(retired, (retired.parent, retired.parent.parent) if project else ()),
        plan_json_file(config, edit, record, remove=remove, by_hand=by_hand),
    ]
    if remove:
        ledger.forget("opencode", config)
    return [c for c in changes if c is not None], notes


def status(scope: Scope, root: Path | None, ledger: Ledger) -> list[StatusItem]:
    """What of the OpenCode integration is installed in ``scope``."""
    config = config_path(scope, root)
    plugin = plugin_path(scope, root)
    items = [
        StatusItem(
            "opencode", scope, "plugin", plugin, owned_state(plugin, render_asset(PLUGIN_ASSET))
        )
    ]
    try:
        doc = load_jsonc(config, read_text(config))
    except SetupError:
        items.append(StatusItem("opencode", scope, f"mcp:{WORKBENCH_SERVER}", config, "invalid"))
        return items
    table = doc.get("mcp")
    current = table.get(WORKBENCH_SERVER) if isinstance(table, dict) else None
    recorded = ledger.peek("opencode", config).get("entries", {}).get(f"mcp/{WORKBENCH_SERVER}")
    argv = recorded.get("command") if isinstance(recorded, dict) else None
    server = recorded_server(argv[1:] if isinstance(argv, list) else None)
    state = entry_state(current, _server(scope, root, server), recorded)
    items.append(StatusItem("opencode", scope, f"mcp:{WORKBENCH_SERVER}", config, state))
    return items
