"""Where things are: our console scripts, and each host's user configuration folder.

Console scripts are written into host configs as **absolute paths**. A host starts an MCP server
or a hook from its own working directory and with its own ``PATH``, where a virtual
environment's ``bin`` is usually not active; the absolute path of the script installed beside
the running interpreter (``Path(sys.executable).parent``, the environment's ``bin`` or
``Scripts``) works from anywhere, and pins the host to the same installation that ran setup.
The interpreter path is not resolved through symlinks: a venv's ``python`` is a symlink to the
base interpreter, and resolving it would leave the venv.

User folders follow each host's own rule, read from the environment each call (so tests can
point ``HOME``, ``CODEX_HOME``, ``XDG_CONFIG_HOME`` and ``CLAUDE_CONFIG_DIR`` elsewhere):

=================  ==========================================================================
Claude Code        ``$CLAUDE_CONFIG_DIR`` or ``~/.claude`` (``settings.json``); user MCP servers
                   in ``.claude.json`` under ``$CLAUDE_CONFIG_DIR`` or ``~``
Codex              ``$CODEX_HOME`` or ``~/.codex`` (``config.toml``)
OpenCode           ``$XDG_CONFIG_HOME/opencode`` or ``~/.config/opencode``
DSH                ``$XDG_CONFIG_HOME/dsh`` or ``~/.config/dsh``
git                ``core.excludesFile``, else ``$XDG_CONFIG_HOME/git/ignore`` (git's default)
=================  ==========================================================================
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

__all__ = [
    "JCLI_SCRIPT",
    "READONLY_SCRIPT",
    "WORKBENCH_SCRIPT",
    "claude_config_dir",
    "claude_user_config",
    "codex_home",
    "git_user_excludes",
    "home",
    "script_path",
    "xdg_config_home",
]

JCLI_SCRIPT = "j-cli"
READONLY_SCRIPT = "jcli-notebook-output"
WORKBENCH_SCRIPT = "jupyter-mcp"

_GIT_TIMEOUT_S = 10


def script_path(name: str) -> Path:
    """Absolute path of one of our console scripts.

    The script beside the running interpreter when it exists there; else the one ``PATH``
    finds; else the path beside the interpreter where it will be once installed (setup still
    writes it, and ``j-cli setup status`` reports it missing).
    """
    folder = Path(os.path.abspath(sys.executable)).parent
    candidates = [folder / name]
    if os.name == "nt":  # pragma: no cover - Windows console scripts are .exe launchers
        candidates.insert(0, folder / f"{name}.exe")
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    found = shutil.which(name)
    if found:
        return Path(os.path.abspath(found))
    return candidates[-1]


def home() -> Path:
    """The user's home folder (``HOME`` on POSIX)."""
    return Path(os.path.expanduser("~"))


def xdg_config_home() -> Path:
    """``$XDG_CONFIG_HOME`` when set (and absolute), else ``~/.config``."""
    value = os.environ.get("XDG_CONFIG_HOME", "")
    return Path(value) if value and os.path.isabs(value) else home() / ".config"


def codex_home() -> Path:
    """Codex's home: ``$CODEX_HOME`` when set, else ``~/.codex``."""
    value = os.environ.get("CODEX_HOME", "")
    return Path(value) if value else home() / ".codex"


def claude_config_dir() -> Path:
    """Claude Code's user settings folder: ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``."""
    value = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(value) if value else home() / ".claude"


def claude_user_config() -> Path:
    """Claude Code's user state file (user-scope MCP servers, project trust):
    ``$CLAUDE_CONFIG_DIR/.claude.json`` or ``~/.claude.json``."""
    value = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return (Path(value) if value else home()) / ".claude.json"


def git_user_excludes() -> Path:
    """The user's global git ignore file: ``git config --global core.excludesFile`` when set,
    else git's default ``$XDG_CONFIG_HOME/git/ignore``."""
    git = shutil.which("git")
    if git:
        try:
            done = subprocess.run(
                [git, "config", "--global", "--get", "core.excludesFile"],
                capture_output=True,
                text=True,
                timeout=_GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            done = None
        if done is not None and done.returncode == 0 and done.stdout.strip():
            return Path(os.path.expanduser(done.stdout.strip()))
    return xdg_config_home() / "git" / "ignore"
