"""DSH: a native plugin module with the ``read_notebook_output`` tool and the guard.

DSH has no public plugin documentation; the plugin keeps exactly the contract of issue 5 and
documents its own shape (see the header of ``assets/dsh_jupyter_jcli.mjs``):

- it receives DSH's shell service and runs every command through it: ``resolve(request)``
  builds a command spec, ``execute(spec)`` starts it, ``await handle.result()`` gives
  ``{exitCode, stdout, stderr}``;
- the tool and the guard both await that result, and a non-zero exit or output that is not the
  expected JSON is an error, never a success.

File: ``.dsh/plugins/jupyter-jcli.mjs`` (project) or
``$XDG_CONFIG_HOME/dsh/plugins/jupyter-jcli.mjs`` (user), written whole and marked as ours.
"""

from __future__ import annotations

from pathlib import Path

from jupyter_jcli.hosts._assets import owned_state, plan_owned_file, render_asset
from jupyter_jcli.hosts._model import FileChange, PlanRequest, Scope, StatusItem
from jupyter_jcli.hosts._paths import xdg_config_home
from jupyter_jcli.hosts._state import Ledger

__all__ = ["PLUGIN_ASSET", "PLUGIN_FILE", "plan", "plugin_path", "status"]

PLUGIN_ASSET = "dsh_jupyter_jcli.mjs"
PLUGIN_FILE = "jupyter-jcli.mjs"


def plugin_path(scope: Scope, root: Path | None) -> Path:
    """Where the plugin module goes."""
    return scope.path(root, ".dsh", lambda: xdg_config_home() / "dsh") / "plugins" / PLUGIN_FILE


def plan(request: PlanRequest) -> tuple[list[FileChange], list[str]]:
    """The change that installs (or removes) the DSH plugin (a file of our own, marked as
    ours: the ledger is not needed).

    Raises:
        SetupError: ``CONFIG_CONFLICT`` when a file of someone else's is at the plugin's path.
    """
    scope, root, remove, _, _ = request
    path = plugin_path(scope, root)
    prune = (path.parent, path.parent.parent) if scope is Scope.PROJECT else (path.parent,)
    change = plan_owned_file(path, render_asset(PLUGIN_ASSET), remove, prune)
    return ([change] if change is not None else []), []


def status(scope: Scope, root: Path | None, ledger: Ledger) -> list[StatusItem]:
    """Whether the DSH plugin is installed in ``scope``."""
    path = plugin_path(scope, root)
    return [StatusItem("dsh", scope, "plugin", path, owned_state(path, render_asset(PLUGIN_ASSET)))]
