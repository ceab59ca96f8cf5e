"""Upgrading from jupyter-jcli 0.9.7: ``j-cli setup`` replaces the native hooks that version's
setup wrote, and ``--remove`` takes them out, leaving everyone else's hooks alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hosts_helpers import run_json, snapshot

from jupyter_jcli.hosts import Scope, setup_host

MARKER = "_jcli_managed"


def reference_hooks(platform: str) -> dict[str, Any]:
    """The ``hooks`` object jupyter-jcli 0.9.7's ``setup claude|codex`` writes (its shape:
    one entry per guard, marked with ``_jcli_managed``; NotebookEdit for Claude only)."""
    flag = "" if platform == "claude" else f" --platform {platform}"

    def entry(command: str, name: str) -> dict[str, str]:
        return {"type": "command", "command": f"{command} {name}{flag}", MARKER: name}

    pre = [
        {"matcher": "Bash", "hooks": [entry("j-cli _hooks", "notebook-exec-guard"),
                                      entry("j-cli _hooks", "python-run-guard")]},
        {"matcher": "Edit|Write", "hooks": [entry("j-cli-hook", "pair-drift-guard-pre")]},
    ]  # fmt: skip
    if platform == "claude":
        pre.append(
            {"matcher": "NotebookEdit", "hooks": [entry("j-cli _hooks", "notebook-edit-guard")]}
        )
    post = [{"matcher": "Edit|Write", "hooks": [entry("j-cli-hook", "pair-drift-guard-post")]}]
    return {"PreToolUse": pre, "PostToolUse": post}


USER_HOOK = {"type": "command", "command": "audit.sh"}


def _write(path: Path, doc: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def _read(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _entries(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        entry
        for groups in doc.get("hooks", {}).values()
        for group in groups
        for entry in group["hooks"]
    ]


def _with_user_hook(platform: str) -> dict[str, Any]:
    hooks = reference_hooks(platform)
    hooks["PreToolUse"][0]["hooks"].append(USER_HOOK)  # shares the reference's Bash group
    return {"permissions": {"allow": ["Read"]}, "hooks": hooks}


def test_setup_claude_replaces_the_reference_hooks_once(project: Path) -> None:
    shared, local = project / ".claude/settings.json", project / ".claude/settings.local.json"
    _write(shared, _with_user_hook("claude"))  # its --project scope
    _write(local, {"env": {"X": "1"}, "hooks": reference_hooks("claude")})  # its default --local
    result = setup_host("claude", Scope.PROJECT, project)
    assert any("jupyter-jcli 0.9.7" in note for note in result.notes)
    settings = _read(shared)
    assert settings["permissions"] == {"allow": ["Read"]}
    entries = _entries(settings)
    assert not any(MARKER in entry for entry in entries)
    assert USER_HOOK in entries
    guards = [e for e in entries if e["command"].endswith("hook guard --host claude")]
    assert len(guards) == 1
    assert "PostToolUse" not in settings["hooks"]
    local_settings = _read(local)
    assert "hooks" not in local_settings and local_settings["env"] == {"X": "1"}
    assert setup_host("claude", Scope.PROJECT, project).changes == []


def test_setup_claude_remove_takes_out_the_reference_hooks(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shared, local = project / ".claude/settings.json", project / ".claude/settings.local.json"
    _write(shared, _with_user_hook("claude"))
    _write(local, {"hooks": reference_hooks("claude")})
    status, document = run_json(capsys, "setup", "claude", "--remove")
    assert status == 0, document
    assert not local.exists(), "a file holding only the reference's hooks is deleted"
    settings = _read(shared)
    assert _entries(settings) == [USER_HOOK]
    assert settings["permissions"] == {"allow": ["Read"]}


def test_setup_claude_user_scope_replaces_the_reference_hooks(home: Path, project: Path) -> None:
    settings_file = home / ".claude" / "settings.json"
    _write(settings_file, {"hooks": reference_hooks("claude")})
    setup_host("claude", Scope.USER)
    entries = _entries(_read(settings_file))
    assert len(entries) == 1 and entries[0]["command"].endswith("hook guard --host claude")
    setup_host("claude", Scope.USER, remove=True)
    assert _read(settings_file) == {}  # the reference wrote the file; it stays, empty


@pytest.mark.parametrize("remove", [False, True])
def test_setup_codex_takes_the_reference_hooks_json_out(project: Path, remove: bool) -> None:
    hooks_json = project / ".codex" / "hooks.json"
    _write(hooks_json, {"hooks": reference_hooks("codex")})
    setup_host("codex", Scope.PROJECT, project, remove=remove)
    assert not hooks_json.exists()
    _write(hooks_json, _with_user_hook("codex"))
    setup_host("codex", Scope.PROJECT, project, remove=remove)
    doc = _read(hooks_json)
    assert _entries(doc) == [USER_HOOK] and doc["permissions"] == {"allow": ["Read"]}


def test_setup_codex_user_scope_takes_the_reference_hooks_out(home: Path, project: Path) -> None:
    hooks_json = home / ".codex" / "hooks.json"
    _write(hooks_json, {"hooks": reference_hooks("codex")})
    setup_host("codex", Scope.USER)
    assert not hooks_json.exists()


def test_a_hooks_json_that_does_not_parse_is_left_alone(project: Path) -> None:
    hooks_json = project / ".codex" / "hooks.json"
    hooks_json.parent.mkdir()
    hooks_json.write_text("{not json", encoding="utf-8")
    result = setup_host("codex", Scope.PROJECT, project)
    assert hooks_json.read_text(encoding="utf-8") == "{not json"
    assert any(str(hooks_json) in note for note in result.notes)


def test_setup_claude_local_remove_takes_out_the_reference_hooks(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """jupyter-jcli 0.9.7's default scope was ``--local``; its users' ``--local --remove``
    must still run (and take out what that setup wrote)."""
    local = project / ".claude/settings.local.json"
    _write(local, {"hooks": reference_hooks("claude")})
    status, document = run_json(capsys, "setup", "claude", "--local", "--remove")
    assert status == 0, document
    assert document["scope"] == "project"
    assert not local.exists()


@pytest.mark.parametrize("host", ["claude", "codex", "opencode", "dsh"])
def test_setup_local_installs_as_project(
    host: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, document = run_json(capsys, "setup", host, "--local")
    assert status == 0, document
    assert document["scope"] == "project" and document["changed"]
    assert setup_host(host, Scope.PROJECT, project).changes == []  # type: ignore[arg-type]


def test_setup_only_skill_installs_and_removes_the_skill_alone(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, document = run_json(capsys, "setup", "claude", "--only", "skill")
    assert status == 0, document
    assert snapshot(project / ".claude").keys() == {"skills/j-cli/SKILL.md"}
    assert not (project / ".mcp.json").exists()
    status, document = run_json(capsys, "setup", "claude", "--only", "skill", "--remove")
    assert status == 0, document
    assert not (project / ".claude" / "skills" / "j-cli").exists()


def test_setup_only_hook_and_tool_leave_the_skill_out(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, document = run_json(capsys, "setup", "codex", "--only", "hook", "--only", "tool")
    assert status == 0, document
    assert not (project / ".agents").exists()
    assert (project / ".codex" / "config.toml").exists()


@pytest.mark.parametrize(
    ("host", "only"), [("claude", ["hook"]), ("opencode", ["tool"]), ("dsh", ["skill"])]
)
def test_setup_only_a_selection_ours_cannot_honour_is_a_usage_error(
    host: str, only: list[str], project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(project)
    args = [arg for value in only for arg in ("--only", value)]
    status, document = run_json(capsys, "setup", host, *args)
    assert (status, document["code"]) == (2, "USAGE_ERROR")
    assert snapshot(project) == before
