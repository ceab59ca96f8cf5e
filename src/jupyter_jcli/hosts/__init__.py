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

from typing import TYPE_CHECKING

from jupyter_jcli import lazy_exports

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

_PUBLIC = {
    "_files": "unified_diff",
    "_model": "HOSTS FileChange HostName Scope SetupError SetupResult StatusItem",
    "_run": "setup_host setup_status",
    "_servers": "KernelServer",
}
"""Per submodule, the public names it gives; each is imported on first access (PEP 562)."""

if not TYPE_CHECKING:  # mypy reads the imports above, with no __getattr__ to hide a typo
    __getattr__, __dir__, __all__ = lazy_exports(globals(), _PUBLIC)
