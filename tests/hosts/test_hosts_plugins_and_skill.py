"""Setup of the host plugins (OpenCode, DSH) and of the agent skill: where they go, how they are
registered, what an earlier jupyter-jcli (0.9.7) left there, and that the skill teaches commands
and tools that exist."""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import click
import pytest
import yaml
from hosts_helpers import snapshot

from jupyter_jcli.cli import run as cli_run
from jupyter_jcli.hosts import Scope, setup_host, setup_status
from jupyter_jcli.hosts import guard as guard_module

ASSETS = Path(__file__).parents[2] / "src" / "jupyter_jcli" / "hosts" / "assets"
SKILL_TEXT = (ASSETS / "skill" / "SKILL.md").read_text()
EARLIER_OPENCODE = (
    "// Managed by j-cli setup opencode.\nexport const JcliPlugin = async () => ({})\n"
)
EARLIER_DSH = (
    "// Managed by j-cli setup dsh.\n// j-cli version 0.9.7\nexport const name = 'jcli-dsh'\n"
)
EARLIER_ROW = (
    "# >>> jcli managed (dsh hooks) >>>\n- id: jcli-hooks\n  name: './plugins/jcli.ts'\n"
    "  config:\n    hooks: true\n    tools: true\n# <<< jcli managed (dsh hooks) <<<\n"
)
SKILL_PLACES = {
    ("claude", Scope.PROJECT): ".claude/skills/j-cli",
    ("codex", Scope.PROJECT): ".agents/skills/j-cli",
    ("opencode", Scope.PROJECT): ".opencode/skills/j-cli",
    ("claude", Scope.USER): ".claude/skills/j-cli",
    ("codex", Scope.USER): ".codex/skills/j-cli",
    ("opencode", Scope.USER): ".config/opencode/skills/j-cli",
}


def _write(folder: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _code(call: Any) -> str | None:
    with pytest.raises(Exception) as caught:
        call()
    return getattr(caught.value, "code", None)


# --- the rendered plugins -----------------------------------------------------------------


@pytest.mark.parametrize("asset", ["opencode_jupyter_jcli.js", "dsh_jupyter_jcli.mjs"])
def test_plugins_send_exactly_the_tools_the_guard_judges(asset: str) -> None:
    from jupyter_jcli.hosts._assets import render_asset

    text = render_asset(asset)
    assert "__JCLI_ARGV__" not in text and "__GUARDED_TOOLS__" not in text
    (names,) = re.findall(r"const GUARDED_TOOLS = new Set\((\[.*?\])\)", text)
    expected = guard_module._EDIT_TOOLS | guard_module._PATCH_TOOLS | guard_module._SHELL_TOOLS
    assert set(json.loads(names)) == expected | {"notebookedit"}


# --- DSH: the plugin module and its row in the composition ------------------------------------


def test_dsh_setup_registers_the_plugin_as_a_row_of_cordis_yml(project: Path) -> None:
    _write(project, {".dsh/cordis.yml": "# mine\n- id: other\n  name: ./plugins/other.ts\n"})
    setup_host("dsh", Scope.PROJECT, project)
    rows = yaml.safe_load((project / ".dsh" / "cordis.yml").read_text())
    assert rows == [
        {"id": "other", "name": "./plugins/other.ts"},
        {"id": "jcli-hooks", "name": "./plugins/jcli.ts", "config": {"hooks": True, "tools": True}},
    ]
    module = (project / ".dsh" / "plugins" / "jcli.ts").read_text()
    assert module.startswith("// Managed by jupyter-jcli")
    assert 'export const inject = ["shell"]' in module and "export function apply(ctx" in module
    states = {(i.host, i.scope, i.item): i.state for i in setup_status(project)}
    assert states[("dsh", Scope.PROJECT, "row:jcli-hooks")] == "installed"
    assert states[("dsh", Scope.PROJECT, "plugin")] == "installed"


def test_dsh_user_setup_inserts_its_row_into_the_patch_file(home: Path) -> None:
    setup_host("dsh", Scope.USER)
    rows = yaml.safe_load((home / ".dsh" / "cordis.patch.yml").read_text())
    plugin = home / ".dsh" / "plugins" / "jcli.ts"
    row = {"id": "jcli-hooks", "name": str(plugin), "config": {"hooks": True, "tools": True}}
    assert rows == [{"insert": [row]}]
    assert plugin.is_file()
    setup_host("dsh", Scope.USER, remove=True)
    assert not [p for p in (home / ".dsh").rglob("*") if p.is_file()]


def test_dsh_setup_replaces_what_jupyter_jcli_0_9_wrote_and_remove_takes_it_away(
    project: Path,
) -> None:
    _write(
        project,
        {
            ".dsh/cordis.yml": "- id: other\n  name: ./x.ts\n" + EARLIER_ROW,
            ".dsh/plugins/jcli.ts": EARLIER_DSH,
            ".dsh/plugins/jupyter-jcli.mjs": "// Managed by jupyter-jcli: an earlier setup\n",
        },
    )
    setup_host("dsh", Scope.PROJECT, project)
    text = (project / ".dsh" / "cordis.yml").read_text()
    assert "jcli managed (dsh hooks)" not in text
    ids = [row["id"] for row in yaml.safe_load(text)]
    assert ids == ["other", "jcli-hooks"]
    assert (
        (project / ".dsh" / "plugins" / "jcli.ts").read_text().startswith("// Managed by jupyter")
    )
    assert not (project / ".dsh" / "plugins" / "jupyter-jcli.mjs").exists()
    # only the earlier version's files: --remove takes them away as well
    _write(project, {".dsh/cordis.yml": EARLIER_ROW, ".dsh/plugins/jcli.ts": EARLIER_DSH})
    setup_host("dsh", Scope.PROJECT, project, remove=True)
    assert not (project / ".dsh").exists()


def test_dsh_setup_refuses_a_row_of_someone_elses_under_our_id_or_a_composition_it_cannot_read(
    project: Path,
) -> None:
    for text, code in [
        ("- id: jcli-hooks\n  name: ./theirs.ts\n", "CONFIG_CONFLICT"),
        ("plugins:\n  - a\n", "CONFIG_INVALID"),
        ("- [unclosed\n", "CONFIG_INVALID"),
    ]:
        _write(project, {".dsh/cordis.yml": text})
        before = snapshot(project)
        assert _code(lambda: setup_host("dsh", Scope.PROJECT, project)) == code
        assert snapshot(project) == before


def test_dsh_setup_keeps_a_file_of_someone_elses_where_an_earlier_setup_put_the_plugin(
    project: Path,
) -> None:
    _write(project, {".dsh/plugins/jupyter-jcli.mjs": "export const mine = 1\n"})
    setup_host("dsh", Scope.PROJECT, project)
    assert (project / ".dsh" / "plugins" / "jupyter-jcli.mjs").read_text() == (
        "export const mine = 1\n"
    )


# --- OpenCode: the plugin file -----------------------------------------------------------------


def test_opencode_setup_replaces_the_earlier_plugin_and_retires_our_tool_file(
    project: Path,
) -> None:
    _write(
        project,
        {
            ".opencode/plugins/jcli.js": EARLIER_OPENCODE,
            ".opencode/tools/read_notebook_output.js": "// Managed by jupyter-jcli: old tool\n",
            ".opencode/tools/mine.ts": "export default {}\n",
        },
    )
    setup_host("opencode", Scope.PROJECT, project)
    plugin = (project / ".opencode" / "plugins" / "jcli.js").read_text()
    assert plugin.startswith("// Managed by jupyter-jcli")
    assert "export const JupyterJcliPlugin = async" in plugin
    assert not (project / ".opencode" / "tools" / "read_notebook_output.js").exists()
    assert (project / ".opencode" / "tools" / "mine.ts").is_file()
    _write(project, {".opencode/plugins/jcli.js": EARLIER_OPENCODE})
    setup_host("opencode", Scope.PROJECT, project, remove=True)
    assert not (project / ".opencode" / "plugins").exists()


# --- the skill ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "scope"), list(SKILL_PLACES), ids=lambda v: getattr(v, "value", v)
)
def test_setup_installs_the_skill_where_the_host_reads_skills_and_remove_deletes_it(
    project: Path, home: Path, host: Any, scope: Scope
) -> None:
    base = project if scope is Scope.PROJECT else home
    folder = base / SKILL_PLACES[(host, scope)]
    setup_host(host, scope, project)
    assert (folder / "SKILL.md").read_text() == SKILL_TEXT
    states = {(i.host, i.scope, i.item): i.state for i in setup_status(project)}
    assert states[(host, scope, "skill:j-cli")] == "installed"
    assert setup_host(host, scope, project).changes == []
    setup_host(host, scope, project, remove=True)
    assert not folder.exists()
    if scope is Scope.PROJECT:
        assert sorted(p.name for p in project.iterdir()) == ["text_outputs_and_images.ipynb"]


def test_a_skill_of_someone_elses_is_left_alone(project: Path) -> None:
    _write(project, {".claude/skills/j-cli/SKILL.md": "---\nname: j-cli\ndescription: mine\n---\n"})
    before = snapshot(project)
    assert _code(lambda: setup_host("claude", Scope.PROJECT, project)) == "CONFIG_CONFLICT"
    assert snapshot(project) == before
    setup_host("claude", Scope.PROJECT, project, remove=True)
    assert (
        (project / ".claude" / "skills" / "j-cli" / "SKILL.md").read_text().endswith("mine\n---\n")
    )


def _earlier_skill(folder: Path) -> None:
    """A skill as jupyter-jcli 0.9.7 installed it: its files and the list of their hashes."""
    files = {
        "SKILL.md": "---\nname: j-cli\ndescription: old\n---\n",
        "workflows/view.md": "# view\n",
        "scripts/tool.py": "#!/usr/bin/env python3\n",
    }
    _write(folder, files)
    digests = {n: hashlib.sha256(t.encode()).hexdigest() for n, t in files.items()}
    listing = {"schema": 1, "source": "jupyter-jcli:j-cli", "files": digests}
    (folder / ".j-cli-managed.json").write_text(json.dumps(listing))


def test_setup_replaces_the_skill_of_jupyter_jcli_0_9_unless_it_was_changed(
    project: Path,
) -> None:
    folder = project / ".agents" / "skills" / "j-cli"
    _earlier_skill(folder)
    setup_host("codex", Scope.PROJECT, project)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == ["SKILL.md"]
    assert (folder / "SKILL.md").read_text() == SKILL_TEXT
    setup_host("codex", Scope.PROJECT, project, remove=True)
    _earlier_skill(folder)
    setup_host("codex", Scope.PROJECT, project, remove=True)
    assert not (project / ".agents").exists()
    _earlier_skill(folder)
    (folder / "workflows" / "view.md").write_text("# my notes\n")
    before = snapshot(project)
    assert _code(lambda: setup_host("codex", Scope.PROJECT, project)) == "CONFIG_CONFLICT"
    assert snapshot(project) == before


def _skill_commands() -> list[list[str]]:
    """Every ``j-cli ...`` line of the skill's shell examples, as argv (comments dropped)."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", SKILL_TEXT, re.DOTALL):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words:
                assert words[0] == "j-cli", line
                commands.append(words[1:])
    return commands


def test_the_skill_front_matter_is_what_the_hosts_require() -> None:
    front = yaml.safe_load(SKILL_TEXT.split("---\n")[1])
    assert front["name"] == "j-cli"
    assert 0 < len(front["description"]) <= 1024  # Agent Skills: description up to 1024 chars
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", front["name"])


@pytest.mark.filterwarnings("ignore:'protected_args' is deprecated:DeprecationWarning")
def test_every_command_of_the_skill_parses_against_the_command_line() -> None:
    from jupyter_jcli.cli import cli

    commands = _skill_commands()
    assert len(commands) >= 25
    for argv in commands:
        args = [a for a in argv if a != "-j"]
        command: click.Command = cli
        context = None
        while isinstance(command, click.Group):
            context = command.make_context(command.name or "j-cli", list(args), parent=context)
            name, command, args = command.resolve_command(
                context, context.protected_args + context.args
            )  # type: ignore[assignment]
            assert command is not None, argv
        command.make_context(name, list(args), parent=context)  # raises on a bad option or value


def test_the_skills_read_commands_run_on_a_real_notebook(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The skill's read-only examples, run on a copy of a real notebook named as in the skill."""
    (project / "text_outputs_and_images.ipynb").rename(project / "analysis.ipynb")
    ran = 0
    for argv in _skill_commands():
        reads = argv[argv.index("notebook") + 1] if "notebook" in argv else None
        if reads not in {"overview", "cells", "show", "search", "graph", "outputs", "output"}:
            continue
        if "--save" in argv or any(a in {"load-data", "plot"} for a in argv):
            continue  # names of the skill's imagined notebook
        capsys.readouterr()
        assert cli_run(argv) == 0, (argv, capsys.readouterr())
        ran += 1
    assert ran >= 7


def test_the_skill_names_only_tools_the_workbench_server_has(tmp_path: Path) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def tool_names() -> set[str]:
        params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "jupyter_jcli.mcp.workbench", "--root", str(tmp_path)],
            cwd=tmp_path,
        )
        with anyio.fail_after(120):
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                return {tool.name for tool in (await session.list_tools()).tools}

    names = anyio.run(tool_names)
    section = SKILL_TEXT.split("## The jupyter-mcp tools", 1)[1]
    named = set(re.findall(r"`([a-z]+(?:_[a-z]+)+)`", section)) - {"expected_rev"}
    assert named == names, (named - names, names - named)


def _pip_installed_earlier_skill(folder: Path, listed_bytecode: bool) -> None:
    """A skill as a pip-installed jupyter-jcli 0.9.7 left it: pip compiled its script, so the
    folder (and, depending on the install, the list) holds ``__pycache__/*.pyc`` (not UTF-8)."""
    files: dict[str, bytes] = {
        "SKILL.md": b"---\nname: j-cli\ndescription: old\n---\n",
        "scripts/tool.py": b"#!/usr/bin/env python3\n",
        "scripts/__pycache__/tool.cpython-312.pyc": b"\xcb\r\r\n\x00\x00\x00\x00\xe3\xff",
    }
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    listed = {n: d for n, d in files.items() if listed_bytecode or not n.endswith(".pyc")}
    digests = {n: hashlib.sha256(d).hexdigest() for n, d in listed.items()}
    listing = {"schema": 1, "source": "jupyter-jcli:j-cli", "files": digests}
    (folder / ".j-cli-managed.json").write_text(json.dumps(listing))


@pytest.mark.parametrize("listed_bytecode", [True, False])
def test_setup_replaces_and_removes_a_pip_installed_skill_of_jupyter_jcli_0_9(
    project: Path, listed_bytecode: bool
) -> None:
    folder = project / ".claude" / "skills" / "j-cli"
    _pip_installed_earlier_skill(folder, listed_bytecode)
    setup_host("claude", Scope.PROJECT, project)
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == ["SKILL.md"]
    setup_host("claude", Scope.PROJECT, project, remove=True)
    _pip_installed_earlier_skill(folder, listed_bytecode)
    setup_host("claude", Scope.PROJECT, project, remove=True)
    assert not folder.exists()
    # a recompiled .pyc (another Python) does not count as a change; a changed script does
    _pip_installed_earlier_skill(folder, listed_bytecode)
    (folder / "scripts" / "__pycache__" / "tool.cpython-312.pyc").write_bytes(b"\x00\x01")
    setup_host("claude", Scope.PROJECT, project, remove=True)
    assert not folder.exists()
    _pip_installed_earlier_skill(folder, listed_bytecode)
    (folder / "scripts" / "tool.py").write_text("# mine\n")
    before = snapshot(project)
    assert _code(lambda: setup_host("claude", Scope.PROJECT, project)) == "CONFIG_CONFLICT"
    assert snapshot(project) == before
