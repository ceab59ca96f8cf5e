"""Local notebook paths to Jupyter Server paths, through the server's root folder.

A server names a notebook by its path relative to the server's root (``root_dir``), with
``/`` separators: that is the ``path`` of its sessions. The root on this machine is, in order:
``ServerConfig.server_root`` (``--server-root``, ``JUPYTER_JCLI_SERVER_ROOT``); the
``root_dir`` the server itself reports when it runs on this machine (Jupyter Server writes
it, with its URL, in ``jpserver-<pid>.json`` under the Jupyter runtime folder; the REST API
does not expose it); else the current working directory.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jupyter_jcli.errors import ErrorCode, KernelError, UsageError
from jupyter_jcli.kernels._server_config import ServerConfig

__all__ = ["local_server_root", "server_path", "server_root"]

_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", ""})
_MAX_INFO_FILES = 200
"""Runtime files read at most while looking for the server's own (a bound on user data)."""


def _is_local(host: str) -> bool:
    return host in _LOCAL_HOSTS or host == socket.gethostname()


def _pid_alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _same_server(info: dict[str, Any], url: str) -> bool:
    ours = urlsplit(url)
    theirs = urlsplit(str(info.get("url") or ""))
    base = str(info.get("base_url") or theirs.path or "/")
    port = info.get("port", theirs.port)
    return (
        ours.port == port
        and _is_local(ours.hostname or "")
        and ours.path.rstrip("/") == base.rstrip("/")
    )


def local_server_root(url: str) -> Path | None:
    """The ``root_dir`` of the running Jupyter Server (or classic Notebook server) at
    ``url`` when it runs on this machine and wrote its runtime file, else ``None``."""
    from jupyter_core.paths import jupyter_runtime_dir

    folder = Path(jupyter_runtime_dir())
    if not _is_local(urlsplit(url).hostname or "") or not folder.is_dir():
        return None
    found = sorted(folder.glob("jpserver-*.json")) + sorted(folder.glob("nbserver-*.json"))
    for info_file in found[:_MAX_INFO_FILES]:
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(info, dict) or not _same_server(info, url):
            continue
        root = info.get("root_dir") or info.get("notebook_dir")
        if isinstance(root, str) and root and _pid_alive(info.get("pid")):
            return Path(root).resolve()
    return None


def server_root(config: ServerConfig) -> Path:
    """The local folder that is the server's root (see the module docstring).

    Raises:
        UsageError: ``USAGE_ERROR`` (details ``option``, ``value``, ``server_root``: the
            server's own) when ``config.server_root`` is not the root a server running on
            this machine reports for itself, a folder here too: every notebook would map to
            a server path the server does not have (another file, or none).
    """
    reported = local_server_root(config.url)
    given = config.server_root
    if given is None:
        return reported or Path.cwd().resolve()
    if reported is not None and reported != given.resolve() and reported.is_dir():
        raise UsageError(
            f"--server-root {given} is not the root of the Jupyter Server at {config.url}, "
            f"which serves {reported}; drop --server-root (or $JUPYTER_JCLI_SERVER_ROOT) or "
            "give that folder",
            {"option": "server_root", "value": str(given), "server_root": str(reported)},
        )
    return given


def server_path(notebook_path: Path, root: Path) -> str:
    """The server's path for ``notebook_path`` (relative to ``root``, ``/`` separators).

    Raises:
        KernelError: ``SERVER_PATH_OUTSIDE_ROOT`` (details ``notebook_path``,
            ``server_root``) when the notebook is not under ``root``.
    """
    resolved = notebook_path.resolve()
    try:
        relative = resolved.relative_to(root.resolve())
    except ValueError:
        raise KernelError(
            ErrorCode.SERVER_PATH_OUTSIDE_ROOT,
            f"{resolved} is not under the Jupyter Server's root {root}; open a notebook "
            "inside it, or name the local folder of the server's root with --server-root",
            {"notebook_path": str(resolved), "server_root": str(root)},
        ) from None
    return relative.as_posix()
