"""DSH: a native plugin (the ``read_notebook_output`` tool and the guard) and its registration.

DSH has no public plugin documentation or code; setup follows the model of DSH that
jupyter-jcli 0.9.7's own plugin and contract tests draw (its ``dsh_plugin.ts`` and
``tests/js/dsh_plugin.test.mjs``, ``tests/test_setup_dsh.py``):

- DSH composes Cordis plugins listed as rows of a YAML sequence: ``.dsh/cordis.yml`` in the
  project, ``$DSH_HOME/cordis.patch.yml`` (``~/.dsh``) for the user, where rows are added inside
  an ``- insert:`` row. Our row is ``{id: jcli-hooks, name: ./plugins/jcli.ts, config: {hooks:
  true, tools: true}}`` (the user's row names the module by absolute path), in a managed block.
- The module (``plugins/jcli.ts``; plain JavaScript, valid TypeScript) exports ``name``,
  ``inject = ["shell"]`` and ``apply(ctx, config)``; it registers the tool with
  ``ctx.get("tools").register`` and guards calls on ``ctx.on("tools/pre-execute")``, running
  every command through ``ctx.shell`` (see the header of ``assets/dsh_jupyter_jcli.mjs``).

Paths, row id and module name are those of jupyter-jcli 0.9.7, so setup replaces what that
version wrote: its marked row (``# >>> jcli managed (dsh hooks) >>>``) is taken out and its
plugin file (first line ``// Managed by j-cli setup dsh.``) replaced; ``--remove`` deletes both.
The plugin file an earlier setup of ours wrote (``plugins/jupyter-jcli.mjs``) is deleted.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._assets import (
    owned_state,
    plan_owned_file,
    plan_retired_file,
    render_asset,
)
from jupyter_jcli.hosts._blocks import find_block, remove_block, set_block
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._model import FileChange, PlanRequest, Scope, SetupError, StatusItem
from jupyter_jcli.hosts._paths import home, xdg_config_home
from jupyter_jcli.hosts._state import Ledger

__all__ = ["PLUGIN_ASSET", "PLUGIN_FILE", "ROW_ID", "config_path", "plan", "plugin_path", "status"]

PLUGIN_ASSET = "dsh_jupyter_jcli.mjs"
PLUGIN_FILE = "jcli.ts"
ROW_ID = "jcli-hooks"
_RETIRED_FILE = "jupyter-jcli.mjs"
_EARLIER_BLOCK = re.compile(
    r"(?ms)^# >>> jcli managed \(dsh hooks\) >>>\n.*?^# <<< jcli managed \(dsh hooks\) <<<\n?"
)


def dsh_home() -> Path:
    """DSH's user folder: ``$DSH_HOME`` when set, else ``~/.dsh``."""
    value = os.environ.get("DSH_HOME", "")
    return Path(os.path.expanduser(value)) if value else home() / ".dsh"


def _folder(scope: Scope, root: Path | None) -> Path:
    return scope.path(root, ".dsh", dsh_home)


def plugin_path(scope: Scope, root: Path | None) -> Path:
    """Where the plugin module goes."""
    return _folder(scope, root) / "plugins" / PLUGIN_FILE


def config_path(scope: Scope, root: Path | None) -> Path:
    """The composition file that registers the plugin."""
    name = "cordis.yml" if scope is Scope.PROJECT else "cordis.patch.yml"
    return _folder(scope, root) / name


def _row(scope: Scope, root: Path | None) -> list[str]:
    module = (
        "./plugins/" + PLUGIN_FILE
        if scope is Scope.PROJECT
        else "'" + str(plugin_path(scope, root)).replace("'", "''") + "'"
    )
    row = [
        f"- id: {ROW_ID}",
        f"  name: {module}",
        "  config:",
        "    hooks: true",
        "    tools: true",
    ]
    if scope is Scope.USER:
        return ["- insert:", *(f"    {line}" for line in row)]
    return row


def _without_ours(text: str) -> str:
    return _EARLIER_BLOCK.sub("", remove_block(text))


def _row_ids(rows: object) -> list[str]:
    ids: list[str] = []
    for row in rows if isinstance(rows, list) else []:
        if not isinstance(row, dict):
            continue
        if isinstance(row.get("id"), str):
            ids.append(row["id"])
        ids.extend(_row_ids(row.get("insert")))
    return ids


def _check_rows(path: Path, text: str) -> None:
    """Check that the composition (without our rows) is a YAML sequence of rows, and that no row
    of someone else's has our id.

    Raises:
        SetupError: ``CONFIG_INVALID`` (details ``path``, ``reason``), ``CONFIG_CONFLICT``.
    """
    import yaml

    try:
        rows = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            f"{path} is not valid YAML ({err}); it was left untouched.",
            {"path": str(path), "reason": "yaml"},
        ) from err
    block_list = rows is None or (isinstance(rows, list) and not text.lstrip().startswith("["))
    if not block_list or any(not isinstance(row, dict) for row in rows or []):
        raise SetupError(
            ErrorCode.CONFIG_INVALID,
            f"{path} is not a block-style YAML sequence of plugin rows; add the row by hand.",
            {"path": str(path), "reason": "not_a_row_list"},
        )
    if ROW_ID in _row_ids(rows):
        raise SetupError(
            ErrorCode.CONFIG_CONFLICT,
            f"{path} already has a row {ROW_ID!r} that j-cli did not write; nothing was written.",
            {"path": str(path), "id": ROW_ID},
        )


def _plan_config(path: Path, scope: Scope, root: Path | None, remove: bool) -> FileChange | None:
    before = read_text(path)
    if before is None:
        return None if remove else FileChange(path, None, set_block(None, _row(scope, root)))
    rest = _without_ours(before)
    if remove:
        if rest == before:
            return None
        return FileChange(path, before, None if not rest.strip() else rest)
    _check_rows(path, rest)
    after = set_block(rest if rest.strip() else None, _row(scope, root))
    return None if after == before else FileChange(path, before, after)


def plan(request: PlanRequest) -> tuple[list[FileChange], list[str]]:
    """The changes that install (or remove) the DSH plugin and its row (files and blocks of our
    own, marked as ours: the ledger is not needed).

    Raises:
        SetupError: ``CONFIG_CONFLICT`` when a file of someone else's is at the plugin's path or
            a row of someone else's has our id; ``CONFIG_INVALID`` when the composition file is
            not a YAML sequence of rows.
    """
    scope, root, remove, _, _ = request
    path = plugin_path(scope, root)
    project = scope is Scope.PROJECT
    prune = (path.parent, path.parent.parent) if project else (path.parent,)
    # where an earlier setup of ours put the plugin: .dsh/plugins/, $XDG_CONFIG_HOME/dsh/plugins/
    retired = (path.parent if project else xdg_config_home() / "dsh" / "plugins") / _RETIRED_FILE
    changes = [
        _plan_config(config_path(scope, root), scope, root, remove),
        plan_owned_file(path, render_asset(PLUGIN_ASSET), remove, prune),
        plan_retired_file(retired, () if project else (retired.parent,)),
    ]
    return [c for c in changes if c is not None], []


def _row_state(
    scope: Scope, root: Path | None
) -> Literal["installed", "outdated", "absent", "invalid"]:
    path = config_path(scope, root)
    try:
        text = read_text(path)
        found = find_block(text or "")
    except SetupError:
        return "invalid"
    if text is None or found is None:
        return "outdated" if text and _EARLIER_BLOCK.search(text) else "absent"
    begin, end = found
    body = text.splitlines()[begin + 1 : end]
    return "installed" if body == _row(scope, root) else "outdated"


def status(scope: Scope, root: Path | None, ledger: Ledger) -> list[StatusItem]:
    """Whether the DSH plugin and its row are installed in ``scope``."""
    path = plugin_path(scope, root)
    return [
        StatusItem("dsh", scope, "plugin", path, owned_state(path, render_asset(PLUGIN_ASSET))),
        StatusItem(
            "dsh", scope, f"row:{ROW_ID}", config_path(scope, root), _row_state(scope, root)
        ),
    ]
