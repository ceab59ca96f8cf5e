"""git: a managed block in ``.gitignore`` that ignores ``**/.j-cli/`` (saved runs, snapshots).

Project scope edits ``PROJECT/.gitignore``; user scope edits the global excludes file
(``core.excludesFile``, else git's default ``$XDG_CONFIG_HOME/git/ignore``).
"""

from __future__ import annotations

from pathlib import Path

from jupyter_jcli.hosts._blocks import find_block, remove_block, set_block
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._model import FileChange, PlanRequest, Scope, SetupError, StatusItem
from jupyter_jcli.hosts._paths import git_user_excludes
from jupyter_jcli.hosts._state import Ledger

__all__ = ["IGNORE_LINES", "plan", "status"]

IGNORE_LINES = ["**/.j-cli/"]
"""The body of the managed block."""


def ignore_path(scope: Scope, root: Path | None) -> Path:
    """The ignore file setup edits for ``scope``."""
    return scope.path(root, ".gitignore", git_user_excludes)


def plan(request: PlanRequest) -> tuple[list[FileChange], list[str]]:
    """The change of the ignore file (deleted by a removal only when setup created it).

    Raises:
        SetupError: ``CONFIG_INVALID`` when the file is not text or the block is damaged.
    """
    scope, root, remove, ledger, _ = request
    path = ignore_path(scope, root)
    before = read_text(path)
    if remove:
        record = ledger.peek("git", path)
        ledger.forget("git", path)
        if before is None:
            return [], []
        found = find_block(before)
        after: str | None = remove_block(before)
        ending = record.get("ending")
        block_ended_file = found is not None and found[1] == len(before.splitlines()) - 1
        if block_ended_file and ending is not None and after is not None:
            after = after.rstrip("\r\n") + ending  # the line breaks the file ended with
        if after == before:
            return [], []
        return [
            FileChange(path, before, None if record.get("created") and not after else after)
        ], []
    after = set_block(before, IGNORE_LINES)
    if after == before:
        return [], []
    record = ledger.record("git", path)
    if before is None:
        record["created"] = True
    elif "ending" not in record:
        record["ending"] = before[len(before.rstrip("\r\n")) :]
    return [FileChange(path, before, after)], []


def status(scope: Scope, root: Path | None, ledger: Ledger) -> list[StatusItem]:
    """Whether the managed block is in the ignore file."""
    path = ignore_path(scope, root)
    try:
        text = read_text(path)
        found = find_block(text) if text is not None else None
    except SetupError:
        return [StatusItem("git", scope, "gitignore", path, "invalid")]
    if text is None or found is None:
        return [StatusItem("git", scope, "gitignore", path, "absent")]
    if set_block(text, IGNORE_LINES) == text:
        return [StatusItem("git", scope, "gitignore", path, "installed")]
    return [StatusItem("git", scope, "gitignore", path, "outdated")]
