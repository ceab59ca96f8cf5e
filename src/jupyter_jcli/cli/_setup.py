"""``j-cli setup HOST`` and ``j-cli setup status``: put jupyter-jcli into agent hosts.

Each host command plans the change of the host's config files through :mod:`jupyter_jcli.hosts`
(imported when the command runs) and applies it, or with ``--dry-run`` prints it as a unified
diff and writes nothing. ``-j`` prints one JSON document instead:
``{"schema_version": 1, "status": "ok", "host", "scope", "remove", "dry_run", "changed",
"changes": [{"path", "action", "diff"}], "notes": [...]}``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from jupyter_jcli.cli._emit import echo, emit_json, json_mode, ok_document

__all__ = ["setup"]

_SERVER_HOSTS = ("claude", "codex", "opencode")
"""The hosts that register jupyter-mcp (``jupyter_jcli.hosts._run.SERVER_HOSTS``)."""

_HELP = {
    "claude": "Claude Code: both MCP servers (.mcp.json, approved in .claude/settings.local.json; "
    "or ~/.claude.json), the guard hook (.claude/settings.json) and the j-cli skill "
    "(.claude/skills/j-cli).",
    "codex": "Codex: both MCP servers and the guard hook in config.toml, and the j-cli skill "
    "(.agents/skills/j-cli; or $CODEX_HOME/skills).",
    "opencode": "OpenCode: a plugin with read_notebook_output and the guard "
    "(.opencode/plugins/jcli.js), jupyter-mcp (opencode.json) and the j-cli skill "
    "(.opencode/skills/j-cli).",
    "dsh": "DSH: the plugin with read_notebook_output and the guard (.dsh/plugins/jcli.ts), "
    "registered as the row jcli-hooks of .dsh/cordis.yml (or $DSH_HOME/cordis.patch.yml).",
    "git": "git: ignore **/.j-cli/ in a managed .gitignore block.",
}


@click.group()
def setup() -> None:
    """Install jupyter-jcli into an agent host, for one project or for the user.

    Only managed entries are written; an entry under one of our names that setup did not write
    stops it (CONFIG_CONFLICT, nothing written); running it twice changes nothing; --remove
    takes away exactly what setup added (recorded in .j-cli/setup-state.json, or the user state
    folder for --user) and deletes only files setup created; --dry-run prints the exact change
    and writes nothing.
    """


_PROJECT_ROOT = click.option(
    "--project-root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="The project folder (default: the current folder).",
)
"""The ``--project-root DIR`` option of every setup command."""


def _host_command(host: str) -> Callable[..., None]:
    @click.option(
        "--project", "scope", flag_value="project", default=True, help="This project (default)."
    )
    @click.option("--user", "scope", flag_value="user", help="The user's own configuration.")
    @click.option(
        "--local",
        "scope",
        flag_value="project",
        hidden=True,
        help=(
            "jupyter-jcli 0.9.7's default scope, accepted as --project "
            "(docs/reference/compatibility.md)."
        ),
    )
    @click.option("--remove", is_flag=True, help="Remove what setup wrote.")
    @click.option("--dry-run", is_flag=True, help="Print the change as a diff; write nothing.")
    @_PROJECT_ROOT
    def command(
        *,
        scope: str,
        remove: bool,
        dry_run: bool,
        project_root: Path | None,
        server_url: str | None = None,
        server_root: str | None = None,
        only: tuple[str, ...] = (),
    ) -> None:
        from jupyter_jcli.hosts import KernelServer, Scope, setup_host, unified_diff

        server = None
        if server_url is not None or server_root is not None:
            server = KernelServer.from_options(server_url or "", server_root)
        result = setup_host(
            host,  # type: ignore[arg-type]  # one of HOSTS by construction
            Scope(scope),
            project_root,
            remove=remove,
            dry_run=dry_run,
            server=server,
            only=frozenset(only),
        )
        changes = [
            {"path": str(c.path), "action": c.action, "diff": unified_diff(c)}
            for c in result.changes
        ]
        if json_mode():
            emit_json(
                ok_document(host=host, scope=scope, remove=remove, dry_run=dry_run,
                            changed=bool(changes), changes=changes, notes=result.notes)
            )  # fmt: skip
            return
        if not changes:
            verb = "remove" if remove else "setup"
            echo(f"{host} ({scope}): nothing to change; {verb} is already done.")
        for change in changes:
            echo(
                change["diff"] if dry_run else f"{change['action']:<7} {change['path']}\n", nl=False
            )
        if dry_run and changes:
            echo(f"(dry run: nothing was written; {len(changes)} file(s) would change)")
        for note in result.notes:
            echo(f"note: {note}")

    command.__doc__ = _HELP[host]
    if host != "git":
        command = click.option(
            "--only",
            type=click.Choice(["skill", "hook", "tool"]),
            multiple=True,
            help="Only this component (repeatable): skill, or hook and tool together.",
        )(command)
    if host in _SERVER_HOSTS:
        command = click.option(
            "--server-root",
            metavar="DIR",
            default=None,
            help="With --server-url: the local folder that is the server's root.",
        )(command)
        command = click.option(
            "--server-url",
            metavar="URL",
            default=None,
            help="Register jupyter-mcp to run its kernels on this Jupyter Server. The token is "
            "never written: jupyter-mcp reads $JUPYTER_JCLI_SERVER_TOKEN from the host's "
            "environment.",
        )(command)
    return command


for _host in ("claude", "codex", "opencode", "dsh", "git"):
    setup.command(_host)(_host_command(_host))


@setup.command("status")
@_PROJECT_ROOT
def status_command(project_root: Path | None) -> None:
    """Say what is installed where: every managed item of every host, project and user."""
    from jupyter_jcli.hosts import setup_status

    items = setup_status(project_root)
    if json_mode():
        emit_json(ok_document(items=[item.to_dict() for item in items]))
        return
    for item in items:
        echo(f"{item.host:<9} {item.scope.value:<8} {item.item:<27} {item.state:<10} {item.path}")
