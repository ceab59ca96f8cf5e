"""Setup, removal and status across hosts: the operations ``j-cli setup`` calls."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

from jupyter_jcli.errors import UsageError
from jupyter_jcli.hosts._files import apply_changes
from jupyter_jcli.hosts._model import HOSTS, HostName, PlanRequest, Scope, SetupResult, StatusItem
from jupyter_jcli.hosts._servers import KernelServer
from jupyter_jcli.hosts._skill import SKILL_HOSTS
from jupyter_jcli.hosts._skill import plan as skill_plan
from jupyter_jcli.hosts._skill import status as skill_status
from jupyter_jcli.hosts._state import load_ledger

__all__ = ["COMPONENTS", "SERVER_HOSTS", "setup_host", "setup_status"]

COMPONENTS = ("skill", "hook", "tool")
"""What ``only`` selects (jupyter-jcli 0.9.7's ``--only`` values): the agent skill, the guard
hook and the tools (MCP servers, or the plugin's tool). Ours installs a host's hook and tools
together (one plugin, or one plan of its config files), so they are selected together."""

SERVER_HOSTS: tuple[HostName, ...] = ("claude", "codex", "opencode")
"""The hosts that register ``jupyter-mcp``, so the ones setup can point at a Jupyter Server."""


def _module(host: HostName) -> ModuleType:
    from jupyter_jcli.hosts import _claude, _codex, _dsh, _git, _opencode

    modules: dict[HostName, ModuleType] = {
        "claude": _claude,
        "codex": _codex,
        "opencode": _opencode,
        "dsh": _dsh,
        "git": _git,
    }
    return modules[host]


def _root(scope: Scope, project_root: Path | None) -> Path | None:
    if scope is Scope.USER:
        return None
    return Path(os.path.realpath(project_root if project_root is not None else Path.cwd()))


def setup_host(
    host: HostName,
    scope: Scope = Scope.PROJECT,
    project_root: Path | None = None,
    *,
    remove: bool = False,
    dry_run: bool = False,
    server: KernelServer | None = None,
    only: frozenset[str] = frozenset(),
) -> SetupResult:
    """Install (or remove) jupyter-jcli's integration with one host.

    Only managed configuration is written: our own keys, hook groups, files and managed blocks.
    For Claude Code, Codex and OpenCode, the agent skill ``j-cli`` too (:mod:`._skill`).
    Running it twice changes nothing the second time; ``remove`` takes away only what setup
    wrote; ``dry_run`` plans the same changes and writes nothing.

    Args:
        host: ``claude``, ``codex``, ``opencode``, ``dsh`` or ``git``.
        scope: ``Scope.PROJECT`` (the project's files; the read-only server gets
            ``--root PROJECT``) or ``Scope.USER`` (the user's config; no root).
        project_root: the project folder (project scope); the current folder when None.
            Symlinks are resolved.
        remove: remove instead of install.
        dry_run: plan only.
        server: register ``jupyter-mcp`` with ``--server-url`` (and ``--server-root``) of
            this Jupyter Server, the token passed through from the host's environment
            (``JUPYTER_JCLI_SERVER_TOKEN``), never written; hosts of :data:`SERVER_HOSTS`
            only. Ignored by ``remove`` (which takes back what setup wrote, whatever it was).
        only: a subset of :data:`COMPONENTS` to install or remove; empty selects all.
            ``{"skill"}`` is the skill alone; ``hook`` and ``tool`` go together (with or
            without ``skill``).

    Returns:
        The result: the planned/applied :class:`FileChange` list (empty when nothing changes)
        and notes for the person.

    Raises:
        UsageError: ``USAGE_ERROR`` for a ``server`` with a host that runs no kernel, and for
            an ``only`` that names an unknown component, ``hook`` without ``tool`` (or the
            reverse), or ``skill`` for a host without one.
        SetupError: ``CONFIG_INVALID`` (a config does not parse; it is left untouched),
            ``CONFIG_CONFLICT`` (an entry or file under our name is someone else's),
            ``CONFIG_CHANGED`` (a file changed while planning), ``FILE_WRITE_FAILED``.
    """
    if server is not None and host not in SERVER_HOSTS:
        raise UsageError(
            f"{host} registers no kernel server: --server-url is for {', '.join(SERVER_HOSTS)}",
            {"host": host, "hosts": list(SERVER_HOSTS)},
        )
    with_skill, with_config = _selection(host, only)
    root = _root(scope, project_root)
    ledger = load_ledger(scope, root)
    module = _module(host)
    request = PlanRequest(scope, root, remove, ledger, None if remove else server)
    changes, notes = module.plan(request) if with_config else ([], [])
    changes, notes = list(changes), list(notes)
    if with_skill:  # the agent skill, where the host reads skills
        changes.extend(skill_plan(host, scope, root, remove))
    if server is not None and not remove:
        notes.append(
            f"jupyter-mcp runs its kernels on {server.url}; it reads the server's token from "
            "JUPYTER_JCLI_SERVER_TOKEN in the environment the host is started from (setup "
            "never writes the token): export it there before starting the host."
        )
    if changes:  # the ledger changes with the configs, and is written after them
        ledger_change = ledger.change()
        if ledger_change is not None:
            changes.append(ledger_change)
    result = SetupResult(host, scope, remove, dry_run, changes, notes)
    if not dry_run:
        apply_changes(result.changes)
    return result


def _selection(host: HostName, only: frozenset[str]) -> tuple[bool, bool]:
    """Whether ``only`` selects the skill, and the host's config (hook and tools)."""
    if not only:
        return host in SKILL_HOSTS, True
    details = {"host": host, "only": sorted(only), "components": list(COMPONENTS)}
    if not only <= set(COMPONENTS):
        raise UsageError(f"--only takes {', '.join(COMPONENTS)}", details)
    if len(only & {"hook", "tool"}) == 1:
        raise UsageError(
            "--only hook and --only tool go together: the guard hook and the tools are "
            "installed as one (select both, or skill alone)",
            details,
        )
    if "skill" in only and host not in SKILL_HOSTS:
        raise UsageError(
            f"{host} gets no skill from setup (skills: {', '.join(SKILL_HOSTS)})", details
        )
    return "skill" in only, "hook" in only


def setup_status(project_root: Path | None = None) -> list[StatusItem]:
    """Every managed item of every host, in the project (``project_root`` or the current
    folder) and in the user's configuration; reading only."""
    root = _root(Scope.PROJECT, project_root)
    ledgers = {scope: load_ledger(scope, root) for scope in (Scope.PROJECT, Scope.USER)}
    items: list[StatusItem] = []
    for host in HOSTS:
        module = _module(host)
        for scope in (Scope.PROJECT, Scope.USER):
            scope_root = root if scope is Scope.PROJECT else None
            items.extend(module.status(scope, scope_root, ledgers[scope]))
            if host in SKILL_HOSTS:
                items.append(skill_status(host, scope, scope_root))
    return items
