"""The two MCP servers and the guard command, as every host config names them.

=========================  ==================================================================
``jcli-notebook-output``   the read-only server (one tool, ``read_notebook_output``);
                           project scope: ``--root PROJECT``; user scope: no root (the server
                           uses the client's roots, ``ROOTS_REQUIRED`` without them)
``jupyter-mcp``            the kernel-attached workbench server; project scope: ``--root
                           PROJECT``; user scope: no root (the server's root is then the
                           working directory the host starts it in); with a
                           :class:`KernelServer`, also ``--server-url URL [--server-root DIR]``
guard                      ``j-cli hook guard --host HOST``
=========================  ==================================================================

The Jupyter Server's token is never written into a host's config nor onto a command line:
``jupyter-mcp`` reads it from ``JUPYTER_JCLI_SERVER_TOKEN`` in its environment, and each host
is told to pass that variable through by name (:attr:`ServerSpec.forward`), in its own
documented way: Claude Code's ``${VAR:-}`` expansion in ``env`` (it also hands its own
environment down), Codex's ``env_vars`` list (Codex passes only a default set otherwise),
OpenCode's ``{env:VAR}`` substitution in ``environment``.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from jupyter_jcli.hosts._model import Scope
from jupyter_jcli.hosts._paths import JCLI_SCRIPT, READONLY_SCRIPT, WORKBENCH_SCRIPT, script_path

__all__ = [
    "READONLY_SERVER",
    "SERVER_NAMES",
    "TOKEN_ENV",
    "WORKBENCH_SERVER",
    "KernelServer",
    "ServerSpec",
    "guard_argv",
    "guard_command",
    "is_guard_command",
    "recorded_server",
    "server_spec",
    "server_specs",
]

READONLY_SERVER = "jcli-notebook-output"
WORKBENCH_SERVER = "jupyter-mcp"
SERVER_NAMES: tuple[str, ...] = (READONLY_SERVER, WORKBENCH_SERVER)

_SCRIPT_OF = {READONLY_SERVER: READONLY_SCRIPT, WORKBENCH_SERVER: WORKBENCH_SCRIPT}

TOKEN_ENV = "JUPYTER_JCLI_SERVER_TOKEN"
"""The variable ``jupyter-mcp`` reads the Jupyter Server's token from (as
:data:`jupyter_jcli.server.SERVER_TOKEN_ENV`)."""


@dataclass(frozen=True)
class KernelServer:
    """The Jupyter Server ``jupyter-mcp`` is registered to run its kernels on (no token: see
    the module docstring).

    Attributes:
        url: the server's base URL, normalised (ends in ``/``).
        root: the local folder that is the server's root, absolute; ``None``: the server's.
    """

    url: str
    root: Path | None = None

    @classmethod
    def from_options(cls, url: str, root: str | Path | None = None) -> KernelServer:
        """The server of ``--server-url URL [--server-root DIR]``.

        Raises:
            UsageError: ``USAGE_ERROR`` for a URL that is not ``http(s)://host[/prefix]``.
        """
        from jupyter_jcli.server import server_config

        config = server_config(url, None, root, environ={})
        assert config is not None  # a URL was given
        return cls(config.url, config.server_root)

    @property
    def args(self) -> tuple[str, ...]:
        """``--server-url URL`` and, when set, ``--server-root DIR``."""
        root = () if self.root is None else ("--server-root", str(self.root))
        return ("--server-url", self.url, *root)


@dataclass(frozen=True)
class ServerSpec:
    """How a host starts one of our stdio MCP servers.

    Attributes:
        name: the server name in the host config.
        command: absolute path of the console script.
        args: its arguments (``["--root", PROJECT]`` in project scope, else empty; then the
            :class:`KernelServer`'s).
        forward: environment variables the host must pass through to the server by name
            (:data:`TOKEN_ENV` with a :class:`KernelServer`), never written as values.
    """

    name: str
    command: Path
    args: tuple[str, ...]
    forward: tuple[str, ...] = ()

    @property
    def argv(self) -> list[str]:
        """Command and arguments as one list (OpenCode's ``command`` array)."""
        return [str(self.command), *self.args]


def server_spec(
    name: str, scope: Scope, project_root: Path | None, server: KernelServer | None = None
) -> ServerSpec:
    """The spec of server ``name`` (``jcli-notebook-output`` or ``jupyter-mcp``) for a scope;
    ``server`` applies to ``jupyter-mcp`` only (the read-only server runs no kernel)."""
    args: tuple[str, ...] = ()
    if scope is Scope.PROJECT and project_root is not None:
        args = ("--root", str(project_root))
    if server is None or name != WORKBENCH_SERVER:
        return ServerSpec(name, script_path(_SCRIPT_OF[name]), args)
    return ServerSpec(name, script_path(_SCRIPT_OF[name]), args + server.args, (TOKEN_ENV,))


def server_specs(
    scope: Scope, project_root: Path | None, server: KernelServer | None = None
) -> dict[str, ServerSpec]:
    """:func:`server_spec` of each of :data:`SERVER_NAMES`, by name."""
    return {name: server_spec(name, scope, project_root, server) for name in SERVER_NAMES}


def recorded_server(args: object) -> KernelServer | None:
    """The :class:`KernelServer` whose options are in ``args``, the arguments of a
    ``jupyter-mcp`` entry setup wrote (so ``j-cli setup status`` compares an entry with the
    one setup would write for the same server); ``None`` without ``--server-url``."""
    if not isinstance(args, Sequence) or isinstance(args, str):
        return None
    words = [str(word) for word in args]
    values = {flag: words[i + 1] for i, flag in enumerate(words[:-1]) if flag.startswith("--")}
    url = values.get("--server-url")
    if url is None:
        return None
    root = values.get("--server-root")
    return KernelServer(url, Path(root) if root is not None else None)


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
