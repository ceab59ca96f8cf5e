"""The agent skill ``j-cli``: one ``SKILL.md`` (package data) teaching an agent our command line
and tools, installed where each host reads skills.

A skill is a folder named after the skill holding ``SKILL.md`` (YAML front matter with ``name``
and ``description``; the Agent Skills format every host below reads):

========  =============================================  =====================================
host      project                                        user
========  =============================================  =====================================
claude    ``.claude/skills/j-cli/``                      ``$CLAUDE_CONFIG_DIR`` or ``~/.claude``
                                                         ``/skills/j-cli/``
codex     ``.agents/skills/j-cli/``                      ``$CODEX_HOME/skills/j-cli/``
opencode  ``.opencode/skills/j-cli/``                    ``$XDG_CONFIG_HOME/opencode/skills/``
                                                         ``j-cli/``
========  =============================================  =====================================

Sources: Claude Code's skills documentation (``.claude/skills/<name>/SKILL.md``); Codex's
(``.agents/skills`` from the working folder up to the repository root; ``$CODEX_HOME/skills``
for the user, which ``codex debug prompt-input`` lists as a skill root); OpenCode 1.18's
built-in ``customize-opencode`` skill (``.opencode/skill(s)/<name>/SKILL.md``,
``~/.config/opencode/skill(s)/``), which ``opencode debug skill`` confirms. Each host gets its own
folder, so removing one host's skill leaves the others'.

The file is ours by the marker in its front matter and comment (:data:`_assets.OWNED_MARKER`);
a ``SKILL.md`` of someone else's at that path is a ``CONFIG_CONFLICT``. jupyter-jcli 0.9.7
installed its skill (several files and a ``.j-cli-managed.json`` listing them with their
SHA-256) at the same paths for Claude Code and Codex: setup replaces it, ``--remove`` deletes it,
both only when every listed file is unchanged.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath

from jupyter_jcli.errors import ErrorCode
from jupyter_jcli.hosts._assets import owned_state, plan_owned_file, render_asset
from jupyter_jcli.hosts._blocks import plan_reference_ignore
from jupyter_jcli.hosts._files import read_text
from jupyter_jcli.hosts._model import FileChange, HostName, Scope, SetupError, StatusItem
from jupyter_jcli.hosts._paths import claude_config_dir, codex_home, xdg_config_home

__all__ = ["SKILL_ASSET", "SKILL_HOSTS", "SKILL_NAME", "plan", "skill_dir", "status"]

SKILL_NAME = "j-cli"
SKILL_ASSET = "skill/SKILL.md"
SKILL_HOSTS: tuple[HostName, ...] = ("claude", "codex", "opencode")
"""The hosts whose setup installs the skill."""

_EARLIER_LIST = ".j-cli-managed.json"
_EARLIER_SOURCE = "jupyter-jcli:j-cli"


def _skills_root(host: HostName, scope: Scope, root: Path | None) -> tuple[Path, int]:
    """The host's skills folder, and how many of its folders setup may prune when empty
    (``skills`` and, in a project, the host's own dot-folder)."""
    project = scope is Scope.PROJECT
    if host == "claude":
        base = scope.path(root, ".claude", claude_config_dir)
    elif host == "codex":
        base = scope.path(root, ".agents", codex_home)
    else:
        base = scope.path(root, ".opencode", lambda: xdg_config_home() / "opencode")
    return base / "skills", 2 if project else 1


def skill_dir(host: HostName, scope: Scope, root: Path | None) -> Path:
    """The folder of the ``j-cli`` skill for ``host`` in ``scope``."""
    return _skills_root(host, scope, root)[0] / SKILL_NAME


def _earlier_files(folder: Path) -> dict[str, str] | None:
    """The files jupyter-jcli 0.9.7's skill install left (relative path -> content), when its
    list is there and every listed file is unchanged; None without such a list.

    Files are compared by their bytes (SHA-256), never decoded: the content is the bytes as
    ``surrogateescape`` text, which :func:`._files.apply_changes` compares byte for byte. The
    bytecode pip compiles (``__pycache__/*.pyc``), listed or not, goes with the rest whatever its
    hash (another Python recompiles it).

    Raises:
        SetupError: ``CONFIG_CONFLICT`` (details ``path``) when a listed file was changed or
            removed, or the list does not parse.
    """
    listing = folder / _EARLIER_LIST
    text = read_text(listing)
    if text is None:
        return None
    conflict = SetupError(
        ErrorCode.CONFIG_CONFLICT,
        f"{folder} holds the j-cli skill of an earlier jupyter-jcli, changed since; move it "
        "away, then run setup again. Nothing was written.",
        {"path": str(folder)},
    )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise conflict from err
    if not isinstance(data, dict) or data.get("source") != _EARLIER_SOURCE:
        raise conflict
    files = data.get("files")
    if not isinstance(files, dict):
        raise conflict
    found: dict[str, str] = {_EARLIER_LIST: text}
    for name, digest in files.items():
        relative = PurePosixPath(str(name))
        if relative.is_absolute() or ".." in relative.parts:
            raise conflict
        path = folder.joinpath(*relative.parts)
        bytecode = _is_bytecode(relative)
        try:
            content = path.read_bytes()
        except FileNotFoundError as err:
            if bytecode:
                continue
            raise conflict from err
        except OSError as err:
            raise conflict from err
        if not bytecode and hashlib.sha256(content).hexdigest() != digest:
            raise conflict
        found[str(relative)] = content.decode("utf-8", "surrogateescape")
    for path in folder.rglob("*.pyc"):
        relative = PurePosixPath(path.relative_to(folder).as_posix())
        if _is_bytecode(relative) and path.is_file() and str(relative) not in found:
            found[str(relative)] = path.read_bytes().decode("utf-8", "surrogateescape")
    return found


def _is_bytecode(relative: PurePosixPath) -> bool:
    """Whether ``relative`` is compiled bytecode (``__pycache__/NAME.pyc``)."""
    return relative.suffix == ".pyc" and relative.parent.name == "__pycache__"


def plan(host: HostName, scope: Scope, root: Path | None, remove: bool) -> list[FileChange]:
    """The changes that install (or remove) the skill for ``host``.

    Raises:
        SetupError: ``CONFIG_CONFLICT`` when a ``SKILL.md`` of someone else's is in the way, or
            an earlier jupyter-jcli skill there was changed.
    """
    skills, depth = _skills_root(host, scope, root)
    folder = skills / SKILL_NAME
    prune = (folder, skills, skills.parent)[: depth + 1]
    earlier = _earlier_files(folder) or {}
    changes: list[FileChange] = []
    for name, text in sorted(earlier.items(), key=lambda item: -item[0].count("/")):
        if name == "SKILL.md":
            continue
        path = folder / name
        inner = tuple(p for p in path.parents if p != folder and folder in p.parents)
        changes.append(FileChange(path, text, None, inner))
    if scope is Scope.PROJECT:  # the ignore line 0.9.7's --local put beside its skill
        ignore = plan_reference_ignore(skills, {"skill": ["/j-cli/"]}, prune[1:])
        changes += [ignore] if ignore is not None else []
    skill = folder / "SKILL.md"
    if "SKILL.md" in earlier:
        content = None if remove else render_asset(SKILL_ASSET)
        changes.append(FileChange(skill, earlier["SKILL.md"], content, prune if remove else ()))
        return changes
    change = plan_owned_file(skill, render_asset(SKILL_ASSET), remove, prune)
    return changes + ([change] if change is not None else [])


def status(host: HostName, scope: Scope, root: Path | None) -> StatusItem:
    """Whether the skill is installed for ``host`` in ``scope``."""
    path = skill_dir(host, scope, root) / "SKILL.md"
    state = owned_state(path, render_asset(SKILL_ASSET))
    return StatusItem(host, scope, f"skill:{SKILL_NAME}", path, state)
