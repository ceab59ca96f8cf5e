"""Where a Jupyter Server is, and how its root maps to this machine.

:class:`ServerConfig` is where a Jupyter Server is and how to authenticate to it;
:func:`server_config` builds one from command-line options and the environment
(``JUPYTER_JCLI_SERVER_URL``, ``JUPYTER_JCLI_SERVER_TOKEN``, ``JUPYTER_JCLI_SERVER_ROOT``,
``JUPYTER_JCLI_KERNEL_USERNAME``).

Local notebook paths map to server paths through the server's root folder
(:func:`server_root`, :func:`server_path`: the one rule, for kernels and notebook stores). A
server names a notebook by its path relative to its root (``root_dir``), with ``/``
separators: that is the ``path`` of its sessions and of its contents API. The root on this
machine is, in order: ``ServerConfig.server_root`` (``--server-root``,
``JUPYTER_JCLI_SERVER_ROOT``); the ``root_dir`` the server itself reports when it runs on
this machine (Jupyter Server writes it, with its URL, in ``jpserver-<pid>.json`` under the
Jupyter runtime folder; the REST API does not expose it); else the current working
directory.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jupyter_jcli.errors import ErrorCode, JcliError, UsageError

__all__ = [
    "KERNEL_USERNAME_ENV",
    "SERVER_ROOT_ENV",
    "SERVER_TOKEN_ENV",
    "SERVER_URL_ENV",
    "ServerConfig",
    "kernel_username",
    "local_server_root",
    "pid_alive",
    "server_config",
    "server_path",
    "server_root",
]

SERVER_URL_ENV = "JUPYTER_JCLI_SERVER_URL"
"""Environment variable: the Jupyter Server base URL (as ``--server-url``)."""
SERVER_TOKEN_ENV = "JUPYTER_JCLI_SERVER_TOKEN"
"""Environment variable: the Jupyter Server token (as ``--token``; the only way host setup
passes a token, so it never lands in a host's config file)."""
SERVER_ROOT_ENV = "JUPYTER_JCLI_SERVER_ROOT"
"""Environment variable: the local folder the server's root maps to (as ``--server-root``)."""
KERNEL_USERNAME_ENV = "JUPYTER_JCLI_KERNEL_USERNAME"
"""Environment variable: the ``KERNEL_USERNAME`` sent to a gateway (as ``--kernel-username``)."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """A Jupyter Server (JupyterLab, JupyterHub, Kernel Gateway, Enterprise Gateway).

    Attributes:
        url: the base URL with its path prefix and a trailing ``/``
            (``https://hub.example.org/user/ana/``); REST paths such as ``api/kernels`` are
            joined to it.
        token: sent as ``Authorization: token <token>``; ``None`` for a server without auth.
        verify: verify TLS certificates (``True``), or the path of a CA bundle to verify with.
        server_root: the local folder that is the server's root (notebook paths are mapped
            to server paths relative to it); ``None``: ask the server for its ``root_dir``.
        kernel_username: the ``KERNEL_USERNAME`` a kernel started through ``POST api/kernels``
            (a gateway) gets in its ``env``: the user Enterprise Gateway authorizes, and
            impersonates where it is set up to; ``None``: the local user's name
            (:func:`kernel_username`).
    """

    url: str
    token: str | None = field(default=None, repr=False)  # never in a log or an error
    verify: bool | str = True
    server_root: Path | None = None
    kernel_username: str | None = None


def kernel_username(config: ServerConfig) -> str | None:
    """The ``KERNEL_USERNAME`` to send: the configured one, else this process's user name
    (:func:`getpass.getuser`: ``$LOGNAME``, ``$USER``, ..., then the password database);
    ``None`` when neither is known (nothing is sent, and the gateway picks its own)."""
    if config.kernel_username:
        return config.kernel_username
    try:
        return getpass.getuser() or None
    except (KeyError, OSError):  # a uid without a name (3.13 raises OSError, older KeyError)
        return None


def server_config(
    url: str | None = None,
    token: str | None = None,
    server_root: str | os.PathLike[str] | None = None,
    *,
    kernel_username: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> ServerConfig | None:
    """The server to use from options, falling back to the environment variables.

    Returns ``None`` (local kernels) when neither ``url`` nor ``JUPYTER_JCLI_SERVER_URL`` is
    set. The URL is normalised to end in ``/``.

    Raises:
        UsageError: ``USAGE_ERROR`` for a URL that is not ``http``/``https`` with a host, a
            root or a kernel user name given without a URL, an empty kernel user name, or a
            root that is not a folder here.
    """
    env = os.environ if environ is None else environ
    url = url or env.get(SERVER_URL_ENV) or None
    token = token or env.get(SERVER_TOKEN_ENV) or None
    root = server_root or env.get(SERVER_ROOT_ENV) or None
    username = kernel_username or env.get(KERNEL_USERNAME_ENV) or None
    if kernel_username is not None and not kernel_username.strip():
        raise UsageError(  # an empty name would silently fall back to the local user's
            "--kernel-username needs a user name", {"option": "kernel_username"}
        )
    if url is None:
        if server_root:
            raise UsageError("--server-root needs --server-url", {"option": "server_root"})
        if kernel_username is not None:  # local kernels have no KERNEL_USERNAME to send
            raise UsageError("--kernel-username needs --server-url", {"option": "kernel_username"})
        return None
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a bad port or IPv6 literal raises here)
    except ValueError as exc:  # "http://[::1", "http://h:99999"
        raise UsageError(
            f"the server URL is not a valid URL ({exc})", {"option": "server_url"}
        ) from exc
    if parts.scheme not in ("http", "https") or not parts.netloc:
        shown = parts._replace(query="", fragment="").geturl()
        raise UsageError(  # never echo a query: it may hold a token (?token=...)
            f"the server URL must be http:// or https:// with a host, not {shown!r}",
            {"option": "server_url", "value": shown},
        )
    if parts.query or parts.fragment:
        raise UsageError(
            "the server URL must not have a query or fragment (pass the token with --token)",
            {"option": "server_url"},
        )
    base = url if url.endswith("/") else url + "/"
    if root is not None and not Path(root).expanduser().is_dir():  # every path would map wrong
        raise UsageError(
            f"the server root {root!r} is not a folder on this machine (--server-root names "
            "the local folder that is the server's root)",
            {"option": "server_root", "value": str(root)},
        )
    return ServerConfig(
        url=base,
        token=token,
        server_root=Path(root).expanduser().resolve() if root is not None else None,
        kernel_username=username,
    )


_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", ""})
_MAX_INFO_FILES = 200
"""Runtime files read at most while looking for the server's own (a bound on user data)."""


def pid_alive(pid: int | None) -> bool:
    """Whether process ``pid`` runs (a zombie, which has ended, does not)."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (macOS): the signal check is all we have
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def _is_local(host: str) -> bool:
    return host in _LOCAL_HOSTS or host == socket.gethostname()


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
        root, pid = info.get("root_dir") or info.get("notebook_dir"), info.get("pid")
        if isinstance(root, str) and root and isinstance(pid, int) and pid_alive(pid):
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


def server_path(
    local_path: str | os.PathLike[str],
    root: Path,
    *,
    resolve: bool = True,
    error: type[JcliError] = JcliError,
) -> str:
    """The server's path for ``local_path``: relative to ``root``, ``/`` separators (the
    ``path`` of the server's sessions and of its contents API).

    Args:
        local_path: a path on this machine (relative: to the current folder).
        root: the local folder that is the server's root (:func:`server_root`).
        resolve: follow symbolic links on both sides (the kernels' rule: a notebook reached
            through a link is the server's file it points to); ``False``: absolute paths
            as written (the notebook stores' rule, ``os.path.abspath``: a path names the
            server's file by its spelling, as the person typed it).
        error: the :class:`~jupyter_jcli.errors.JcliError` class to raise (the caller's
            branch of the tree: ``KernelError`` for the kernel layer).

    Raises:
        JcliError: ``SERVER_PATH_OUTSIDE_ROOT`` (of class ``error``; details
            ``notebook_path``, ``server_root``) when the path is not under ``root``.
    """
    if resolve:
        absolute, base = Path(local_path).resolve(), root.resolve()
    else:
        absolute, base = Path(os.path.abspath(local_path)), Path(os.path.abspath(root))
    try:
        relative = absolute.relative_to(base)
    except ValueError:
        raise error(
            ErrorCode.SERVER_PATH_OUTSIDE_ROOT,
            f"{absolute} is not under {root}, the folder taken as the Jupyter Server's root "
            "(--server-root, else the root a server on this machine reports for itself, else "
            "the current folder); open a notebook inside it (or name it by its path on the "
            "server), or name the local folder of the server's root with --server-root",
            {"notebook_path": str(absolute), "server_root": str(root)},
        ) from None
    return relative.as_posix()
