"""The two MCP servers and the guard command, as every host config names them.

=========================  ==================================================================
``jcli-notebook-output``   the read-only server (one tool, ``read_notebook_output``);
                           project scope: ``--root PROJECT``; user scope: no root (the server
                           uses the client's roots, ``ROOTS_REQUIRED`` without them)
``jupyter-mcp``            the kernel-attached workbench server; project scope: ``--root
                           PROJECT``; user scope: no root (the server's root is then the
                           working directory the host starts it in)
guard                      ``j-cli hook guard --host HOST``
=========================  ==================================================================
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from jupyter_jcli.hosts._model import Scope
from jupyter_jcli.hosts._paths import JCLI_SCRIPT, READONLY_SCRIPT, WORKBENCH_SCRIPT, script_path

__all__ = [
    "READONLY_SERVER",
    "SERVER_NAMES",
    "WORKBENCH_SERVER",
    "ServerSpec",
    "guard_argv",
    "guard_command",
    "is_guard_command",
    "server_spec",
]

READONLY_SERVER = "jcli-notebook-output"
WORKBENCH_SERVER = "jupyter-mcp"
SERVER_NAMES: tuple[str, ...] = (READONLY_SERVER, WORKBENCH_SERVER)

_SCRIPT_OF = {READONLY_SERVER: READONLY_SCRIPT, WORKBENCH_SERVER: WORKBENCH_SCRIPT}


@dataclass(frozen=True)
class ServerSpec:
    """How a host starts one of our stdio MCP servers.

    Attributes:
        name: the server name in the host config.
        command: absolute path of the console script.
        args: its arguments (``["--root", PROJECT]`` in project scope, else empty).
    """

    name: str
    command: Path
    args: tuple[str, ...]

    @property
    def argv(self) -> list[str]:
        """Command and arguments as one list (OpenCode's ``command`` array)."""
        return [str(self.command), *self.args]


def server_spec(name: str, scope: Scope, project_root: Path | None) -> ServerSpec:
    """The spec of server ``name`` (``jcli-notebook-output`` or ``jupyter-mcp``) for a scope."""
    args: tuple[str, ...] = ()
    if scope is Scope.PROJECT and project_root is not None:
        args = ("--root", str(project_root))
    return ServerSpec(name, script_path(_SCRIPT_OF[name]), args)


def guard_argv(host: str) -> list[str]:
    """The guard hook as an argument list: ``[/abs/j-cli, hook, guard, --host, HOST]``."""
    return [str(script_path(JCLI_SCRIPT)), "hook", "guard", "--host", host]


def guard_command(host: str) -> str:
    """The guard hook as one shell command line (hosts run hook commands through a shell)."""
    return shlex.join(guard_argv(host))


def is_guard_command(command: object, host: str) -> bool:
    """Whether a hook's shell ``command`` is our guard for ``host``."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    return (
        len(words) >= 5
        and Path(words[0]).name.removesuffix(".exe") == JCLI_SCRIPT
        and words[1:5] == ["hook", "guard", "--host", host]
    )
