"""Adapter files we own whole: the OpenCode tool and the DSH plugin, shipped as package data.

An asset is a template under ``jupyter_jcli/hosts/assets/``; rendering replaces
``"__JCLI_ARGV__"`` (a JSON string literal in the template) with the JSON array of the absolute
``j-cli`` command, and each ``// @include NAME`` line with the asset ``NAME`` (code both
adapters share, such as ``read_call.js``: the installed file stands alone). The first line of
every asset carries :data:`OWNED_MARKER`: setup replaces and ``--remove`` deletes a file at the
target path only when it carries the marker, never a file of someone else's.
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

__all__ = ["OWNED_MARKER", "owned_state", "plan_owned_file", "render_asset"]

OWNED_MARKER = "Managed by jupyter-jcli"
_PLACEHOLDER = '"__JCLI_ARGV__"'
_INCLUDE = re.compile(r"^// @include (\S+)\n", re.MULTILINE)


def render_asset(name: str) -> str:
    """The asset ``name`` with its includes and the absolute ``j-cli`` command filled in."""
    template = _INCLUDE.sub(lambda line: _asset_text(line.group(1)), _asset_text(name))
    argv = json.dumps([str(script_path(JCLI_SCRIPT))])
    return template.replace(_PLACEHOLDER, argv)


def _asset_text(name: str) -> str:
    return (resources.files("jupyter_jcli.hosts") / "assets" / name).read_text("utf-8")


def _is_ours(text: str) -> bool:
    first = text.split("\n", 1)[0]
    return OWNED_MARKER in first


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
