"""Host integration: ``j-cli setup`` for Claude Code, Codex, OpenCode, DSH and git, and the guard.

Public surface::

    setup_host(host, scope=Scope.PROJECT, project_root=None, *, remove=False, dry_run=False,
               server=None) -> SetupResult
    KernelServer.from_options(url, root=None)   # setup's --server-url / --server-root
    setup_status(project_root=None) -> list[StatusItem]
    unified_diff(change: FileChange) -> str
    Scope, SetupResult, FileChange, StatusItem, SetupError, HOSTS, HostName, KernelServer

The guard lives in :mod:`jupyter_jcli.hosts.guard` (standard library only). This package's
``__init__`` imports nothing itself, so ``j-cli hook guard`` loads only the guard; the names
above are loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jupyter_jcli.hosts._files import unified_diff
    from jupyter_jcli.hosts._model import (
        HOSTS,
        FileChange,
        HostName,
        Scope,
        SetupError,
        SetupResult,
        StatusItem,
    )
    from jupyter_jcli.hosts._run import setup_host, setup_status
    from jupyter_jcli.hosts._servers import KernelServer

__all__ = [
    "HOSTS",
    "FileChange",
    "HostName",
    "KernelServer",
    "Scope",
    "SetupError",
    "SetupResult",
    "StatusItem",
    "setup_host",
    "setup_status",
    "unified_diff",
]

_HOME = {
    "setup_host": "_run",
    "setup_status": "_run",
    "unified_diff": "_files",
    "HOSTS": "_model",
    "FileChange": "_model",
    "HostName": "_model",
    "KernelServer": "_servers",
    "Scope": "_model",
    "SetupError": "_model",
    "SetupResult": "_model",
    "StatusItem": "_model",
}


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
