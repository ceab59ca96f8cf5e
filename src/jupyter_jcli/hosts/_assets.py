"""Adapter files we own whole: the OpenCode and DSH plugins, shipped as package data.

An asset is a template under ``jupyter_jcli/hosts/assets/``; rendering replaces
``"__JCLI_ARGV__"`` (a JSON string literal in the template) with the JSON array of the absolute
``j-cli`` command, ``"__GUARDED_TOOLS__"`` with the JSON array of the tool names the guard judges
(lower case; a plugin sends only those calls to ``j-cli hook guard``), and each
``// @include NAME`` line with the asset ``NAME`` (code both adapters share, such as
``read_call.js``: the installed file stands alone). The first line of every asset (in a
skill's ``SKILL.md``, a line of its first twelve, after the YAML front matter opens) carries
:data:`OWNED_MARKER`: setup replaces and ``--remove`` deletes a file at the target path only
when it carries the marker (or :data:`EARLIER_MARKER`, the mark jupyter-jcli 0.9 put on the
plugins it wrote), never a file of someone else's.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Literal

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._model import FileChange, SetupError
from jupyter_jcli.hosts._paths import JCLI_SCRIPT, script_path

__all__ = [
    "EARLIER_MARKER",
    "OWNED_MARKER",
    "owned_state",
    "plan_owned_file",
    "plan_retired_file",
    "render_asset",
]

OWNED_MARKER = "Managed by jupyter-jcli"
EARLIER_MARKER = "Managed by j-cli setup"
"""The first line of the plugins jupyter-jcli 0.9 wrote (``// Managed by j-cli setup opencode.``,
``// Managed by j-cli setup dsh.``): the same distribution's files, which setup replaces."""
_PLACEHOLDER = '"__JCLI_ARGV__"'
_GUARDED_PLACEHOLDER = '"__GUARDED_TOOLS__"'
_INCLUDE = re.compile(r"^// @include (\S+)\n", re.MULTILINE)


def render_asset(name: str) -> str:
    """The asset ``name`` with its includes and the absolute ``j-cli`` command filled in."""
    template = _INCLUDE.sub(lambda line: _asset_text(line.group(1)), _asset_text(name))
    argv = json.dumps([str(script_path(JCLI_SCRIPT))])
    return template.replace(_PLACEHOLDER, argv).replace(
        _GUARDED_PLACEHOLDER, json.dumps(sorted(guarded_tools()))
    )


def guarded_tools() -> frozenset[str]:
    """The tool names (lower case) whose calls the guard judges: shell, edit and patch tools
    (:mod:`jupyter_jcli.hosts.guard`), and ``notebookedit``."""
    from jupyter_jcli.hosts import guard

    return guard._EDIT_TOOLS | guard._PATCH_TOOLS | guard._SHELL_TOOLS | {"notebookedit"}


def _asset_text(name: str) -> str:
    return (resources.files("jupyter_jcli.hosts") / "assets" / name).read_text("utf-8")


def _is_ours(text: str) -> bool:
    """The marker on the first line; in a Markdown file with YAML front matter (a skill), on one
    of its first lines after it."""
    lines = text.split("\n", 12)
    head = lines[:12] if lines[0].strip() == "---" else lines[:1]
    return any(OWNED_MARKER in line or EARLIER_MARKER in line for line in head)


def owned_state(path: Path, content: str) -> Literal["installed", "outdated", "absent", "foreign"]:
    """Whether the file at ``path`` is ours and current."""
    try:
        current = read_text(path)
    except SetupError:
        return "foreign"
    if current is None:
        return "absent"
    if not _is_ours(current):
        return "foreign"
    return "installed" if current == content else "outdated"


def plan_owned_file(
    path: Path, content: str, remove: bool, prune_dirs: tuple[Path, ...] = ()
) -> FileChange | None:
    """Plan writing (or deleting) a whole file of ours.

    Raises:
        SetupError: ``CONFIG_CONFLICT`` (details ``path``) when a file without our marker is in
            the way (nothing is written or deleted).
    """
    before = read_text(path)
    if before is not None and not _is_ours(before):
        if remove:
            return None
        raise SetupError(
            ErrorCode.CONFIG_CONFLICT,
            f"{path} exists and was not written by j-cli; move it away, then run setup again. "
            "Nothing was written.",
            {"path": str(path)},
        )
    if remove:
        return None if before is None else FileChange(path, before, None, prune_dirs)
    return None if before == content else FileChange(path, before, content)


def plan_retired_file(path: Path, prune_dirs: tuple[Path, ...] = ()) -> FileChange | None:
    """Plan deleting a file an earlier setup wrote where setup no longer writes it (one of ours
    by its marker); a file of someone else's there, or none, is left alone."""
    try:
        before = read_text(path)
    except SetupError:
        return None
    if before is None or not _is_ours(before):
        return None
    return FileChange(path, before, None, prune_dirs)
