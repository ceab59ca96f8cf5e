"""``j-cli hook guard --host HOST``: the agent-host hook that guards notebooks.

Reads the host's hook event (JSON) from stdin, writes the host's answer to stdout and a
diagnostic (if any) to stderr, and exits 0: see :mod:`jupyter_jcli.hosts.guard`. The guard is
imported only when the command runs, and it needs nothing beyond the standard library, so a
hook call loads click, the ``j-cli`` command tree and the guard module, nothing heavy.
"""

from __future__ import annotations

import sys

import click

__all__ = ["GUARD_HOST_CHOICES", "hook", "hooks_command"]

GUARD_HOST_CHOICES = ("claude", "codex", "dsh")
"""The ``--host`` values (the same as :data:`jupyter_jcli.hosts.guard.GUARD_HOSTS`)."""


@click.group()
def hook() -> None:
    """Hooks that agent hosts (Claude Code, Codex, DSH) call; `j-cli setup` installs them."""


@hook.command("guard")
@click.option(
    "--host",
    "host",
    type=click.Choice(GUARD_HOST_CHOICES),
    required=True,
    help="Whose hook protocol the event on stdin and the answer on stdout follow.",
)
def guard_command(host: str) -> None:
    """Deny raw .ipynb text edits and whole-notebook runs; allow everything else.

    Reads one hook event (JSON) on stdin. A denial names the tool to use instead
    (read_notebook_output, j-cli, the jupyter-mcp tools). Fails open: an unreadable event is
    allowed with a diagnostic on stderr.
    """
    from jupyter_jcli.cli._hooks import MAX_EVENT_BYTES
    from jupyter_jcli.hosts.guard import run_guard

    try:
        data = sys.stdin.buffer.read(MAX_EVENT_BYTES + 1)
    except (OSError, ValueError) as err:  # no readable stdin: allow, never block the host
        click.echo(f"j-cli hook guard: could not read stdin ({err}); allowed", err=True)
        data = b""
    text = data.decode("utf-8", errors="replace") if len(data) <= MAX_EVENT_BYTES else ""
    outcome = run_guard(host, text)  # type: ignore[arg-type]  # click.Choice guarantees the value
    if outcome.stdout:
        sys.stdout.write(outcome.stdout)
        sys.stdout.flush()
    if outcome.stderr:
        sys.stderr.write(outcome.stderr)
        sys.stderr.flush()


@click.command(
    "_hooks",
    hidden=True,
    add_help_option=False,
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def hooks_command(args: tuple[str, ...]) -> int:
    """The reference's hook command line (hidden): see :mod:`jupyter_jcli.cli._hooks`. Its
    own arguments are parsed there, so a bad name or option is a surfaced failure (exit 1),
    never click's usage error (exit 2, which hosts read as a deny)."""
    from jupyter_jcli.cli._hooks import serve

    return serve(list(args))
