"""``j-cli setup HOST``: managed entries only, idempotent, exact removal, dry runs, bad configs."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hosts_helpers import run_json, snapshot

from jupyter_jcli.hosts import Scope, SetupError, setup_host, setup_status
from jupyter_jcli.hosts._files import apply_changes

BIN = Path(sys.executable).parent

# Someone else's configuration, in each host's own format and style, that setup must keep.
FOREIGN: dict[str, dict[str, str]] = {
    "claude": {
        ".mcp.json": json.dumps(
            {"mcpServers": {"other": {"command": "npx", "args": ["-y", "other-server"]}}}, indent=4
        )
        + "\n",
        ".claude/settings.json": json.dumps(
            {
                "permissions": {"allow": ["Bash(ls:*)"]},
                "hooks": {
                    "PreToolUse": [
                        {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
                    ]
                },
            },
            indent=2,
        )
        + "\n",
    },
    "codex": {
        ".codex/config.toml": '# team settings\nmodel = "o3"  # keep\n\n'
        '[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs-mcp"]\n',
    },
    "opencode": {
        "opencode.json": '{\n  "$schema": "https://opencode.ai/config.json",\n'
        '  "mcp": {\n    "other": {\n      "type": "remote",\n      "url": "https://example.invalid/mcp"\n'
        "    }\n  }\n}\n",
        ".opencode/tools/mine.ts": "export default {}\n",
    },
    "dsh": {
        ".dsh/plugins/other.mjs": "export default {}\n",
        ".dsh/cordis.yml": "# my plugins\n- id: other\n  name: ./plugins/other.mjs\n",
    },
    "git": {".gitignore": "__pycache__/\n*.pyc\n"},
}


def _write(folder: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("host", ["claude", "codex", "opencode", "dsh", "git"])
def test_setup_twice_changes_nothing_and_remove_restores_every_byte(
    project: Path, home: Path, host: Any
) -> None:
    _write(project, FOREIGN[host])
    before = snapshot(project)
    first = setup_host(host, Scope.PROJECT, project)
    assert first.changes, "the first setup writes something"
    after_first = snapshot(project)
    second = setup_host(host, Scope.PROJECT, project)
    assert second.changes == []
    assert snapshot(project) == after_first
    for relative, data in before.items():  # nothing of anyone else's was lost
        if relative.endswith(".ipynb") or relative.startswith(
            (".opencode/tools/mine", ".dsh/plugins/")
        ):
            assert after_first[relative] == data
    removed = setup_host(host, Scope.PROJECT, project, remove=True)
    assert removed.changes
    assert snapshot(project) == before
    assert setup_host(host, Scope.PROJECT, project, remove=True).changes == []
    assert not any(home.rglob("*.json")), "project setup writes nothing in the user's home"


@pytest.mark.parametrize("host", ["claude", "codex", "opencode", "dsh", "git"])
def test_setup_from_nothing_and_remove_leaves_no_trace(project: Path, host: Any) -> None:
    before = snapshot(project)
    setup_host(host, Scope.PROJECT, project)
    assert snapshot(project) != before
    setup_host(host, Scope.PROJECT, project, remove=True)
    assert snapshot(project) == before
    assert sorted(p.name for p in project.iterdir()) == ["text_outputs_and_images.ipynb"]


def test_claude_project_config_names_both_servers_by_absolute_script_with_root(
    project: Path,
) -> None:
    setup_host("claude", Scope.PROJECT, project)
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["jcli-notebook-output"] == {
        "type": "stdio",
        "command": str(BIN / "jcli-notebook-output"),
        "args": ["--root", str(project)],
        "env": {},
    }
    assert servers["jupyter-mcp"]["command"] == str(BIN / "jupyter-mcp")
    assert servers["jupyter-mcp"]["args"] == ["--root", str(project)]
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    (group,) = settings["hooks"]["PreToolUse"]
    assert group["matcher"] == "Write|Edit|MultiEdit|NotebookEdit|Bash"
    assert group["hooks"][0]["command"] == f"{BIN / 'j-cli'} hook guard --host claude"
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["jcli-notebook-output", "jupyter-mcp"]


def test_claude_user_setup_writes_user_config_without_root(project: Path, home: Path) -> None:
    state = home / ".claude.json"
    original = json.dumps({"userID": "abc", "projects": {}}, indent=2) + "\n"
    state.write_text(original)
    setup_host("claude", Scope.USER)
    doc = json.loads(state.read_text())
    assert doc["userID"] == "abc"
    assert doc["mcpServers"]["jcli-notebook-output"]["args"] == []
    assert doc["mcpServers"]["jupyter-mcp"]["args"] == []
    assert (home / ".claude" / "settings.json").is_file()
    assert snapshot(project) == {
        "text_outputs_and_images.ipynb": snapshot(project)["text_outputs_and_images.ipynb"]
    }
    setup_host("claude", Scope.USER, remove=True)
    assert state.read_text() == original  # the mcpServers setup added is gone with its entries
    assert not (home / ".claude" / "settings.json").exists()  # setup created it: deleted
    assert not (home / ".local" / "state" / "jupyter-jcli" / "setup-state.json").exists()


def test_codex_user_setup_goes_to_codex_home_and_keeps_its_style(home: Path) -> None:
    config = home / ".codex" / "config.toml"
    config.parent.mkdir()
    original = '# mine\nmodel = "o3"   # spaced comment\n\n'
    original += '[projects."/somewhere"]\ntrust_level = "trusted"\n'
    config.write_text(original)
    setup_host("codex", Scope.USER)
    text = config.read_text()
    assert text.startswith(original)
    doc = tomlkit.parse(text)
    assert doc["mcp_servers"]["jcli-notebook-output"]["command"] == str(
        BIN / "jcli-notebook-output"
    )
    assert list(doc["mcp_servers"]["jcli-notebook-output"]["args"]) == []
    (group,) = doc["hooks"]["PreToolUse"]
    assert group["matcher"] == "Bash|apply_patch"
    setup_host("codex", Scope.USER, remove=True)
    assert config.read_text() == original


def test_opencode_installs_its_plugin_and_only_the_workbench_server(project: Path) -> None:
    result = setup_host("opencode", Scope.PROJECT, project)
    plugin = project / ".opencode" / "plugins" / "jcli.js"
    text = plugin.read_text()
    assert text.splitlines()[0].startswith("// Managed by jupyter-jcli")
    assert f'const JCLI = ["{BIN / "j-cli"}"]' in text
    assert "__JCLI_ARGV__" not in text and "__GUARDED_TOOLS__" not in text
    doc = json.loads((project / "opencode.json").read_text())
    assert doc == {
        "mcp": {
            "jupyter-mcp": {
                "type": "local",
                "command": [str(BIN / "jupyter-mcp"), "--root", str(project)],
                "enabled": True,
            }
        }
    }
    assert {c.action for c in result.changes} == {"create"}


def test_opencode_user_setup_edits_an_existing_jsonc_without_comments(home: Path) -> None:
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    (folder / "opencode.jsonc").write_text('{\n  "$schema": "https://opencode.ai/config.json"\n}')
    setup_host("opencode", Scope.USER)
    doc = json.loads((folder / "opencode.jsonc").read_text())
    assert doc["mcp"]["jupyter-mcp"]["command"] == [str(BIN / "jupyter-mcp")]
    assert (folder / "plugins" / "jcli.js").is_file()
    assert not (folder / "opencode.json").exists()


def test_git_block_ignores_run_outputs(project: Path) -> None:
    setup_host("git", Scope.PROJECT, project)
    lines = (project / ".gitignore").read_text().splitlines()
    assert "**/.j-cli/" in lines
    assert lines[0].startswith("# >>> jupyter-jcli")


@pytest.mark.parametrize(
    ("host", "relative", "text", "reason"),
    [
        ("claude", ".mcp.json", '{"mcpServers": {"a": }', "syntax"),
        ("claude", ".claude/settings.json", "[1, 2]", "not an object"),
        ("codex", ".codex/config.toml", "[mcp_servers\ncommand = 1\n", None),
        (
            "git",
            ".gitignore",
            "# >>> jupyter-jcli (managed by `j-cli setup`; do not edit) >>>\nx\n",
            None,
        ),
    ],
)
def test_a_config_that_does_not_parse_is_reported_and_left_untouched(
    *,
    project: Path,
    capsys: pytest.CaptureFixture[str],
    host: str,
    relative: str,
    text: str,
    reason: str | None,
) -> None:
    _write(project, {relative: text})
    before = snapshot(project)
    status, document = run_json(capsys, "setup", host)
    assert status == 1
    assert document["code"] == "CONFIG_INVALID"
    if reason is not None:
        assert document["details"]["reason"] == reason
    assert snapshot(project) == before
    status, document = run_json(capsys, "setup", host, "--remove")
    assert document["code"] == "CONFIG_INVALID"
    assert snapshot(project) == before


def test_a_foreign_entry_under_our_name_is_a_conflict_and_survives_remove(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    foreign = {"mcpServers": {"jupyter-mcp": {"command": "uvx", "args": ["jupyter-mcp-server"]}}}
    _write(project, {".mcp.json": json.dumps(foreign)})
    before = snapshot(project)
    status, document = run_json(capsys, "setup", "claude")
    assert (status, document["code"]) == (1, "CONFIG_CONFLICT")
    assert document["details"]["name"] == "jupyter-mcp"
    assert snapshot(project) == before
    status, document = run_json(capsys, "setup", "claude", "--remove")
    assert status == 0
    assert json.loads((project / ".mcp.json").read_text()) == foreign
    assert any("jupyter-mcp" in note for note in document["notes"])


def test_a_foreign_file_at_the_plugin_path_is_a_conflict(project: Path) -> None:
    _write(project, {".opencode/plugins/jcli.js": "export default 1\n"})
    before = snapshot(project)
    with pytest.raises(Exception) as caught:
        setup_host("opencode", Scope.PROJECT, project)
    assert getattr(caught.value, "code", None) == "CONFIG_CONFLICT"
    assert snapshot(project) == before
    setup_host("opencode", Scope.PROJECT, project, remove=True)
    assert snapshot(project) == before


@pytest.mark.parametrize("host", ["claude", "codex", "opencode", "dsh", "git"])
def test_dry_run_prints_the_exact_diff_and_writes_nothing(
    project: Path, capsys: pytest.CaptureFixture[str], host: str
) -> None:
    _write(project, FOREIGN[host])
    before = snapshot(project)
    status, planned = run_json(capsys, "setup", host, "--dry-run")
    assert status == 0
    assert planned["dry_run"] is True and planned["changed"] is True
    assert snapshot(project) == before
    status, applied = run_json(capsys, "setup", host)
    assert [c["diff"] for c in applied["changes"]] == [c["diff"] for c in planned["changes"]]
    assert all(c["diff"].startswith("--- ") for c in planned["changes"])
    status, again = run_json(capsys, "setup", host, "--dry-run")
    assert again["changed"] is False and again["changes"] == []
    status, planned_removal = run_json(capsys, "setup", host, "--remove", "--dry-run")
    assert planned_removal["changed"] is True
    assert {c["action"] for c in planned_removal["changes"]} <= {"update", "delete"}


def test_dry_run_text_is_a_unified_diff(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from jupyter_jcli.cli import run

    assert run(["setup", "git", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("--- /dev/null\n+++ ")
    assert "+**/.j-cli/\n" in out
    assert not (project / ".gitignore").exists()


def test_a_file_changed_after_planning_is_never_overwritten(project: Path) -> None:
    plan = setup_host("git", Scope.PROJECT, project, dry_run=True)
    (project / ".gitignore").write_text("written meanwhile\n")
    with pytest.raises(Exception) as caught:
        apply_changes(plan.changes)
    assert getattr(caught.value, "code", None) == "CONFIG_CHANGED"
    assert (project / ".gitignore").read_text() == "written meanwhile\n"


def test_status_says_what_is_installed_where(
    project: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    setup_host("claude", Scope.PROJECT, project)
    setup_host("dsh", Scope.USER)
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text("broken = [\n")
    states = {(i.host, i.scope.value, i.item): i.state for i in setup_status(project)}
    assert states[("claude", "project", "mcp:jcli-notebook-output")] == "installed"
    assert states[("claude", "project", "hook:guard")] == "installed"
    assert states[("claude", "user", "mcp:jupyter-mcp")] == "absent"
    assert states[("dsh", "user", "plugin")] == "installed"
    assert states[("dsh", "project", "plugin")] == "absent"
    assert states[("codex", "project", "hook:guard")] == "invalid"
    assert states[("git", "project", "gitignore")] == "absent"
    # as if an older setup had written another root: the entry and the ledger say so
    for path in (project / ".mcp.json", project / ".j-cli" / "setup-state.json"):
        path.write_text(path.read_text().replace(f'"{project}"', '"/old"'))
    assert '"/old"' in (project / ".mcp.json").read_text()
    status, document = run_json(capsys, "setup", "status")
    assert status == 0
    found = {(i["host"], i["scope"], i["item"]): i["state"] for i in document["items"]}
    assert found[("claude", "project", "mcp:jupyter-mcp")] == "outdated"
    assert setup_host("claude", Scope.PROJECT, project).changes  # setup repairs it
    assert {
        i.state for i in setup_status(project) if i.host == "claude" and i.scope.value == "project"
    } == {"installed"}


def test_a_moved_installation_updates_our_entries_in_place(project: Path) -> None:
    setup_host("codex", Scope.PROJECT, project)
    path = project / ".codex" / "config.toml"
    ledger = project / ".j-cli" / "setup-state.json"  # what the older installation wrote
    for file in (path, ledger):
        file.write_text(file.read_text().replace(str(BIN), "/old/venv/bin"))
    result = setup_host("codex", Scope.PROJECT, project)
    assert [(c.path, c.action) for c in result.changes] == [(path, "update"), (ledger, "update")]
    assert "/old/venv/bin" not in ledger.read_text()
    text = path.read_text()
    assert "/old/venv/bin" not in text
    assert text.count("[[hooks.PreToolUse]]") == 1


OWN_SERVER = "/opt/my/own/jupyter-mcp"

# One of our server names taken by the person's own server, in each host's file.
TAKEN: dict[str, tuple[str, str]] = {
    "claude": (
        ".mcp.json",
        json.dumps({"mcpServers": {"jupyter-mcp": {"command": OWN_SERVER, "args": ["--x"]}}}),
    ),
    "codex": (".codex/config.toml", f'[mcp_servers.jupyter-mcp]\ncommand = "{OWN_SERVER}"\n'),
    "opencode": (
        "opencode.json",
        json.dumps({"mcp": {"jupyter-mcp": {"type": "local", "command": [OWN_SERVER]}}}),
    ),
}


@pytest.mark.parametrize("host", sorted(TAKEN))
def test_our_name_on_someone_elses_server_is_a_conflict_and_remove_leaves_it(
    project: Path, capsys: pytest.CaptureFixture[str], host: str
) -> None:
    relative, text = TAKEN[host]
    files = {relative: text}
    if host == "claude":  # the person already approved their own jupyter-mcp
        files[".claude/settings.local.json"] = '{"enabledMcpjsonServers": ["jupyter-mcp"]}'
    _write(project, files)
    before = snapshot(project)
    status, document = run_json(capsys, "setup", host)
    assert (status, document["code"]) == (1, "CONFIG_CONFLICT")
    assert document["details"]["name"] == "jupyter-mcp"
    assert snapshot(project) == before
    status, document = run_json(capsys, "setup", host, "--remove")
    assert status == 0
    assert snapshot(project) == before, "remove touched nothing of the person's"


def test_a_user_scope_server_of_someone_elses_is_a_conflict(home: Path) -> None:
    config = home / ".claude.json"
    config.write_text(json.dumps({"mcpServers": {"jcli-notebook-output": {"command": OWN_SERVER}}}))
    before = config.read_bytes()
    with pytest.raises(SetupError) as caught:
        setup_host("claude", Scope.USER)
    assert caught.value.code == "CONFIG_CONFLICT"
    assert config.read_bytes() == before
    assert not (home / ".claude").exists()


def test_remove_takes_back_only_the_approvals_setup_added(project: Path) -> None:
    local = project / ".claude" / "settings.local.json"
    original = '{\n  "enabledMcpjsonServers": [\n    "jupyter-mcp",\n    "other"\n  ]\n}\n'
    _write(project, {".claude/settings.local.json": original})
    setup_host("claude", Scope.PROJECT, project)
    names = json.loads(local.read_text())["enabledMcpjsonServers"]
    assert names == ["jupyter-mcp", "other", "jcli-notebook-output"]
    setup_host("claude", Scope.PROJECT, project, remove=True)
    assert local.read_text() == original  # the person's own "jupyter-mcp" stays approved
    assert not (project / ".mcp.json").exists()  # setup created it: deleted
    assert not (project / ".j-cli").exists()


def test_a_server_the_person_disabled_is_not_re_enabled(project: Path) -> None:
    _write(project, {".claude/settings.local.json": '{"disabledMcpjsonServers": ["jupyter-mcp"]}'})
    before = snapshot(project)
    with pytest.raises(SetupError) as caught:
        setup_host("claude", Scope.PROJECT, project)
    assert caught.value.code == "CONFIG_CONFLICT"
    assert caught.value.details["key"] == "disabledMcpjsonServers"
    assert snapshot(project) == before


def test_a_hand_edited_entry_of_ours_is_no_longer_ours(project: Path) -> None:
    setup_host("opencode", Scope.PROJECT, project)
    config = project / "opencode.json"
    config.write_text(config.read_text().replace('"enabled": true', '"enabled": false'))
    with pytest.raises(SetupError) as caught:
        setup_host("opencode", Scope.PROJECT, project)
    assert caught.value.code == "CONFIG_CONFLICT"
    setup_host("opencode", Scope.PROJECT, project, remove=True)
    assert json.loads(config.read_text())["mcp"]["jupyter-mcp"]["enabled"] is False


def _styles(doc: dict[str, Any]) -> dict[str, str]:
    return {
        "compact": json.dumps(doc, separators=(",", ":")),
        "spaced": json.dumps(doc),
        "indent4": json.dumps(doc, indent=4) + "\n",
        "tabs-crlf": json.dumps(doc, indent="\t").replace("\n", "\r\n") + "\r\n",
        "empty": "{}\n",
    }


ROUND_TRIP: dict[str, dict[str, dict[str, Any]]] = {
    "claude": {
        ".mcp.json": {"mcpServers": {"other": {"command": "npx", "args": ["-y", "o"]}}},
        ".claude/settings.json": {
            "permissions": {"allow": ["Bash(ls:*)"]},
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "a.sh"}]}
                ]
            },
        },
        ".claude/settings.local.json": {"enabledMcpjsonServers": ["other"]},
    },
    "opencode": {"opencode.json": {"$schema": "https://opencode.ai/config.json", "mcp": {}}},
}


@pytest.mark.parametrize("style", ["compact", "spaced", "indent4", "tabs-crlf", "empty"])
@pytest.mark.parametrize("host", sorted(ROUND_TRIP))
def test_setup_keeps_other_bytes_and_remove_restores_them_exactly(
    project: Path, host: str, style: str
) -> None:
    files = {relative: _styles(doc)[style] for relative, doc in ROUND_TRIP[host].items()}
    _write(project, files)
    before = snapshot(project)
    setup_host(host, Scope.PROJECT, project)
    for relative, text in files.items():
        after = (project / relative).read_bytes().decode()
        doc = json.loads(after)
        assert doc != json.loads(text)
        if style == "compact":  # nothing of the person's was re-indented or re-spaced
            assert after.startswith(text[:-3])
            assert "\n" not in after and ": " not in after and ", " not in after
        if style == "indent4":
            assert after.startswith(text[: text.index("\n", 2)])
            assert "\n        " in after and after.endswith("}\n")
        if style == "tabs-crlf":
            assert "\r\n\t" in after and "\n  " not in after
    assert setup_host(host, Scope.PROJECT, project).changes == []
    setup_host(host, Scope.PROJECT, project, remove=True)
    assert snapshot(project) == before


def test_user_claude_config_round_trip_is_byte_identical(home: Path) -> None:
    config = home / ".claude.json"
    original = '{"numStartups":3,"projects":{"/p":{"allowedTools":[]}},"mcpServers":{}}'
    config.write_text(original)
    setup_host("claude", Scope.USER)
    assert config.read_text().startswith('{"numStartups":3,"projects":{"/p":{"allowedTools":[]}}')
    setup_host("claude", Scope.USER, remove=True)
    assert config.read_text() == original  # the person's (empty) mcpServers stays


@pytest.mark.parametrize(
    "original",
    [
        '# mine\nmodel = "o3"',
        'model = "o3"\n\n[mcp_servers]\n\n[mcp_servers.docs]\ncommand = "npx"\n',
        '[hooks]\n[[hooks.PreToolUse]]\nmatcher = "Bash"\nhooks = [{type = "command", '
        'command = "a.sh"}]\n',
        "\n",
    ],
)
def test_codex_round_trip_is_byte_identical(project: Path, original: str) -> None:
    _write(project, {".codex/config.toml": original})
    before = snapshot(project)
    setup_host("codex", Scope.PROJECT, project)
    assert (project / ".codex" / "config.toml").read_text().startswith(original.rstrip("\n"))
    setup_host("codex", Scope.PROJECT, project, remove=True)
    assert snapshot(project) == before


@pytest.mark.parametrize("original", ["a/\nb/", "a/\n", "", "a/\r\n"])
def test_git_round_trip_is_byte_identical(project: Path, original: str) -> None:
    _write(project, {".gitignore": original})
    before = snapshot(project)
    setup_host("git", Scope.PROJECT, project)
    setup_host("git", Scope.PROJECT, project, remove=True)
    assert snapshot(project) == before


def _reference_server(host: str, args: list[str], extra: str = "") -> str:
    """The ``jcli-notebook-output`` entry jupyter-jcli 0.9.7's setup registered (through
    ``claude mcp add`` / ``codex mcp add``), as its host wrote it."""
    if host == "claude":
        entry = {"type": "stdio", "command": "j-cli", "args": args, "env": {}}
        if extra:
            entry["env"] = {"X": extra}
        return json.dumps({"mcpServers": {"jcli-notebook-output": entry}, "numStartups": 3})
    quoted = ", ".join(json.dumps(a) for a in args)
    text = 'model = "o3"\n\n[mcp_servers.jcli-notebook-output]\ncommand = "j-cli"\n'
    text += f"args = [{quoted}]\n"
    return text + (f'cwd = "{extra}"\n' if extra else "")


@pytest.mark.parametrize("host", ["claude", "codex"])
@pytest.mark.parametrize("scope", [Scope.PROJECT, Scope.USER])
def test_the_server_entry_of_jupyter_jcli_0_9_is_replaced_and_removed(
    project: Path, home: Path, host: str, scope: Scope
) -> None:
    if scope is Scope.PROJECT:
        args = ["mcp", "serve", "--root", str(project)]
        config = project / (".mcp.json" if host == "claude" else ".codex/config.toml")
    else:
        args = ["mcp", "serve"]
        config = home / (".claude.json" if host == "claude" else ".codex/config.toml")
    root = project if scope is Scope.PROJECT else None

    def servers() -> dict[str, Any]:
        text = config.read_text()
        doc = json.loads(text) if host == "claude" else tomlkit.parse(text).unwrap()
        return doc.get("mcpServers" if host == "claude" else "mcp_servers", {})

    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(_reference_server(host, args))
    setup_host(host, scope, root)  # type: ignore[arg-type]
    assert servers()["jcli-notebook-output"]["command"] == str(BIN / "jcli-notebook-output")
    setup_host(host, scope, root, remove=True)  # type: ignore[arg-type]
    config.write_text(_reference_server(host, args))
    setup_host(host, scope, root, remove=True)  # type: ignore[arg-type]
    assert "jcli-notebook-output" not in servers()
    # anything beyond what that setup wrote is the person's: a conflict, and remove leaves it
    config.write_text(_reference_server(host, args, extra="/tmp"))
    before = config.read_bytes()
    with pytest.raises(SetupError) as caught:
        setup_host(host, scope, root)  # type: ignore[arg-type]
    assert caught.value.code == "CONFIG_CONFLICT"
    setup_host(host, scope, root, remove=True)  # type: ignore[arg-type]
    assert config.read_bytes() == before


@pytest.mark.parametrize("scope", [Scope.PROJECT, Scope.USER])
def test_a_jsonc_config_is_left_alone_unless_it_must_change_then_the_entry_is_given(
    project: Path, home: Path, capsys: pytest.CaptureFixture[str], scope: Scope
) -> None:
    if scope is Scope.PROJECT:
        config, args, flags = project / "opencode.json", ["--root", str(project)], []
    else:
        config, args, flags = home / ".config" / "opencode" / "opencode.jsonc", [], ["--user"]
    config.parent.mkdir(parents=True, exist_ok=True)
    original = '{\n  // mine\n  "theme": "dark", /* kept */\n}\n'
    config.write_text(original)
    folders = (project, home)
    before = [snapshot(f) for f in folders]
    status, document = run_json(capsys, "setup", "opencode", *flags)
    assert (status, document["code"]) == (1, "CONFIG_INVALID")
    assert document["details"]["reason"] == "comments"
    assert [snapshot(f) for f in folders] == before
    status, document = run_json(capsys, "setup", "opencode", *flags, "--remove")
    assert status == 0, "nothing of ours in the file: it need not change"
    assert [snapshot(f) for f in folders] == before
    # the person adds the entry by hand: setup installs the rest and leaves the file as it is
    entry = {"type": "local", "command": [str(BIN / "jupyter-mcp"), *args], "enabled": True}
    by_hand = original.replace("/* kept */", f'"mcp": {{"jupyter-mcp": {json.dumps(entry)}}},')
    config.write_text(by_hand)
    status, document = run_json(capsys, "setup", "opencode", *flags)
    assert status == 0
    assert config.read_text() == by_hand
    plugins = config.parent / (".opencode/plugins" if scope is Scope.PROJECT else "plugins")
    assert (plugins / "jcli.js").exists()


@pytest.mark.parametrize(
    ("host", "relative", "block"),
    [
        ("codex", ".codex/.gitignore", "# >>> j-cli local tool >>>\n/config.toml\n"
         "# <<< j-cli local tool <<<\n"),
        ("claude", ".claude/skills/.gitignore", "# >>> j-cli local skill >>>\n/j-cli/\n"
         "# <<< j-cli local skill <<<\n"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("remove", [False, True])
def test_the_ignore_lines_of_jupyter_jcli_0_9_local_setup_are_taken_out(
    project: Path, host: str, relative: str, block: str, remove: bool
) -> None:
    ignore = project / relative
    _write(project, {relative: block})
    setup_host(host, Scope.PROJECT, project, remove=remove)  # type: ignore[arg-type]
    assert not ignore.exists()
    mine = "*.log\n"
    _write(project, {relative: mine + "\n" + block})
    setup_host(host, Scope.PROJECT, project, remove=remove)  # type: ignore[arg-type]
    assert ignore.read_text() == mine
    edited = block.replace("\n#", "\n/mine/\n#", 1)  # a block the person changed is theirs
    _write(project, {relative: edited})
    setup_host(host, Scope.PROJECT, project, remove=remove)  # type: ignore[arg-type]
    assert ignore.read_text() == edited
