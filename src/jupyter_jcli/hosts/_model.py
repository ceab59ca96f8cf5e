"""The value types of host setup: scopes, planned file changes, results and status lines."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from jupyter_jcli.errors import ErrorCode, JcliError

if TYPE_CHECKING:
    from jupyter_jcli.hosts._servers import KernelServer
    from jupyter_jcli.hosts._state import Ledger

__all__ = [
    "HOSTS",
    "Action",
    "FileChange",
    "HostName",
    "PlanRequest",
    "Scope",
    "SetupError",
    "SetupResult",
    "StatusItem",
]

HostName = Literal["claude", "codex", "opencode", "dsh", "git"]
HOSTS: tuple[HostName, ...] = ("claude", "codex", "opencode", "dsh", "git")
"""Every host ``j-cli setup`` knows, in the order ``j-cli setup status`` reports them."""

Action = Literal["create", "update", "delete"]


class Scope(str, Enum):
    """Where a host's configuration is written: one project, or the user's own config."""

    PROJECT = "project"
    USER = "user"

    def path(self, root: Path | None, project: str, user: Callable[[], Path]) -> Path:
        """``root / project`` for the project scope (``root``: the project folder), else
        ``user()``, the user's own file or folder (looked up only for the user scope)."""
        if self is Scope.PROJECT:
            assert root is not None
            return root / project
        return user()


class PlanRequest(NamedTuple):
    """What every host's ``plan`` is asked: install or remove its integration in ``scope``.

    Attributes:
        scope: project or user configuration.
        root: the project folder (``None`` for the user scope).
        remove: take away what setup wrote instead of installing.
        ledger: what setup wrote before (and records what it writes now).
        server: the Jupyter Server ``jupyter-mcp`` runs its kernels on (hosts that register
            ``jupyter-mcp`` only; ``None``: local kernels).
    """

    scope: Scope
    root: Path | None
    remove: bool
    ledger: Ledger
    server: KernelServer | None = None


class SetupError(JcliError):
    """Host setup could not proceed; the files involved are left untouched.

    Codes: ``CONFIG_INVALID`` (an existing config does not parse), ``CONFIG_CONFLICT`` (an entry
    under one of our names belongs to someone else), ``CONFIG_CHANGED`` (a file changed between
    reading and writing), ``FILE_WRITE_FAILED``.
    """

    def __init__(
        self, code: ErrorCode, message: str, details: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(code, message, details)


@dataclass(frozen=True)
class FileChange:
    """One planned change of one file.

    Attributes:
        path: the file (absolute).
        before: its current text, None when it does not exist.
        after: its text after the change, None to delete it.
        prune_dirs: folders to remove after a delete, innermost first, each only if empty
            (the folders setup created for a file of its own).
    """

    path: Path
    before: str | None
    after: str | None
    prune_dirs: tuple[Path, ...] = ()

    @property
    def action(self) -> Action:
        """``create``, ``update`` or ``delete``."""
        if self.before is None:
            return "create"
        return "delete" if self.after is None else "update"


@dataclass(frozen=True)
class StatusItem:
    """One managed item of one host in one scope, as found on disk.

    Attributes:
        host: the host.
        scope: ``project`` or ``user``.
        item: what it is (``mcp:jcli-notebook-output``, ``hook:guard``,
            ``plugin``, ``row:jcli-hooks``, ``skill:j-cli``, ``gitignore``).
        path: the file that holds it.
        state: ``installed`` (as setup would write it now), ``outdated`` (ours, but different:
            run setup again), ``absent``, ``foreign`` (someone else's entry under our name) or
            ``invalid`` (the file does not parse).
    """

    host: HostName
    scope: Scope
    item: str
    path: Path
    state: Literal["installed", "outdated", "absent", "foreign", "invalid"]

    def to_dict(self) -> dict[str, str]:
        """JSON form: host, scope, item, path, state."""
        return {
            "host": self.host,
            "scope": self.scope.value,
            "item": self.item,
            "path": str(self.path),
            "state": self.state,
        }


@dataclass
class SetupResult:
    """What one ``j-cli setup HOST`` run changed (or, with ``dry_run``, would change).

    Attributes:
        host: the host.
        scope: the scope.
        remove: whether this was a removal.
        dry_run: True when nothing was written.
        changes: the file changes, in the order they are applied.
        notes: sentences for the person: what the host still needs (approval, trust, ...).
    """

    host: HostName
    scope: Scope
    remove: bool
    dry_run: bool
    changes: list[FileChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
