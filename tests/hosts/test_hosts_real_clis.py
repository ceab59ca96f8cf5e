"""Real host CLIs from npm see what ``j-cli setup`` wrote (marker ``hosts``; offline, no model).

Installs ``@anthropic-ai/claude-code``, ``@openai/codex``, ``opencode-ai`` and
``@modelcontextprotocol/inspector`` (pinned versions) with :func:`hosts_helpers.npm_install`
(``npm install --prefix`` into a folder under the system temp dir keyed by those versions,
reused by later runs). Each check runs the
host's own ``mcp list`` with ``HOME`` (and ``XDG_CONFIG_HOME``, ``CODEX_HOME``) in a temporary
folder and no API keys. Skipped only when npm itself is absent.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hosts_helpers import JCLI, npm_install
from test_hosts_contract import NODE_DIR, NOTEBOOKS, STREAM_NB, write_contract

from tool_results import checked_result

pytestmark = [pytest.mark.hosts, pytest.mark.timeout(1500)]

PACKAGES = {
    "@anthropic-ai/claude-code": "2.1.332",
    "@openai/codex": "0.171.0",
    "opencode-ai": "1.18.33",
    "@modelcontextprotocol/inspector": "2.12.0",
    "@opencode-ai/plugin": "1.18.33",
}
CLI_TIMEOUT_S = 180
INSPECTOR_CONNECT_TIMEOUT_MS = 120_000
"""How long the Inspector waits for our server's ``initialize`` answer (its own default,
15 s, is shorter than a Python server's start on a loaded machine; the bound stays below
:data:`CLI_TIMEOUT_S`, so a server that never answers still fails with the Inspector's error)."""
BIN = Path(sys.executable).parent
READONLY = BIN / "jcli-notebook-output"
WORKBENCH = BIN / "jupyter-mcp"
NOTEBOOK = "text_outputs_and_images.ipynb"
_SECRETS = re.compile(r".*(API_KEY|TOKEN|SECRET)$|^(ANTHROPIC|OPENAI|CLAUDE_CODE)_.*")


@pytest.fixture(scope="module")
def npm_bin() -> Path:
    """``node_modules/.bin`` of the cached install of the pinned host CLIs."""
    return npm_install(PACKAGES) / "node_modules" / ".bin"


@pytest.fixture
def host_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a host CLI run: a temporary home, no API keys, no auto-update."""
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not _SECRETS.match(k)}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        CODEX_HOME=str(home / ".codex"),
        GIT_CONFIG_GLOBAL=str(home / ".gitconfig"),
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        OPENCODE_DISABLE_AUTOUPDATE="1",
        NO_COLOR="1",
    )
    env.pop("CLAUDE_CONFIG_DIR", None)
    (home / ".codex").mkdir()
    return env


@pytest.fixture
def host_project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    shutil.copyfile(
        Path(__file__).parent.parent / "fixtures" / "notebooks" / NOTEBOOK, folder / NOTEBOOK
    )
    return folder.resolve()


def run(args: list[str], cwd: Path, env: dict[str, str], *, stdout_only: bool = False) -> str:
    # PWD as a shell sets it: OpenCode looks for the project's opencode.json from $PWD up.
    env = {**env, "PWD": str(cwd)}
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, f"{args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    text = done.stdout if stdout_only else done.stdout + done.stderr
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def setup(host: str, cwd: Path, env: dict[str, str], *flags: str) -> None:
    run([str(JCLI), "setup", host, *flags], cwd, env)


def _line(listing: str, name: str) -> str:
    lines = [line for line in listing.splitlines() if name in line]
    assert lines, f"{name} not listed:\n{listing}"
    return lines[0]


def test_claude_mcp_list_shows_our_servers_connected(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    setup("claude", host_project, host_env)
    # The person trusts the folder once (Claude Code's trust dialog), as they would in `claude`.
    state = Path(host_env["HOME"]) / ".claude.json"
    state.write_text(
        json.dumps({"projects": {str(host_project): {"hasTrustDialogAccepted": True}}})
    )
    listing = run([str(npm_bin / "claude"), "mcp", "list"], host_project, host_env)
    print(listing)
    readonly = _line(listing, "jcli-notebook-output:")
    assert str(READONLY) in readonly and f"--root {host_project}" in readonly
    assert "Connected" in readonly, listing
    workbench = _line(listing, "jupyter-mcp:")
    if WORKBENCH.exists():
        assert "Connected" in workbench, listing
    # User scope: the same servers without a root, listed from any folder.
    elsewhere = host_project.parent / "elsewhere"
    elsewhere.mkdir()
    setup("claude", elsewhere, host_env, "--user")
    listing = run([str(npm_bin / "claude"), "mcp", "list"], elsewhere, host_env)
    print(listing)
    readonly = _line(listing, "jcli-notebook-output:")
    assert "--root" not in readonly and "Connected" in readonly, listing


def test_codex_mcp_list_shows_our_servers(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    setup("codex", host_project, host_env)
    # The person trusts the project (Codex's trust prompt) so Codex reads .codex/config.toml.
    user_config = Path(host_env["CODEX_HOME"]) / "config.toml"
    user_config.write_text(f'[projects."{host_project}"]\ntrust_level = "trusted"\n')
    listing = run(
        [str(npm_bin / "codex"), "mcp", "list", "--json"], host_project, host_env, stdout_only=True
    )
    print(listing)
    servers = {s["name"]: s for s in json.loads(listing)}
    assert servers["jcli-notebook-output"]["enabled"] is True
    assert servers["jcli-notebook-output"]["transport"]["command"] == str(READONLY)
    assert servers["jcli-notebook-output"]["transport"]["args"] == ["--root", str(host_project)]
    assert servers["jupyter-mcp"]["transport"]["command"] == str(WORKBENCH)
    table = run([str(npm_bin / "codex"), "mcp", "list"], host_project, host_env)
    print(table)
    assert "enabled" in _line(table, "jcli-notebook-output")
    setup("codex", host_project, host_env, "--user")
    listing = run(
        [str(npm_bin / "codex"), "mcp", "list", "--json"],
        Path(host_env["HOME"]),
        host_env,
        stdout_only=True,
    )
    servers = {s["name"]: s for s in json.loads(listing)}
    assert servers["jcli-notebook-output"]["transport"]["args"] == []


def test_opencode_mcp_list_shows_the_workbench_server(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    setup("opencode", host_project, host_env)
    listing = run([str(npm_bin / "opencode"), "mcp", "list"], host_project, host_env)
    print(listing)
    line = _line(listing, "jupyter-mcp")
    if WORKBENCH.exists():
        assert "connected" in line, listing
    else:
        assert "failed" in line, listing
    assert (host_project / ".opencode" / "plugins" / "jcli.js").is_file()


def test_opencode_and_codex_list_the_skill_setup_installs(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    setup("opencode", host_project, host_env)
    skills = json.loads(
        run([str(npm_bin / "opencode"), "debug", "skill"], host_project, host_env, stdout_only=True)
    )
    (ours,) = [s for s in skills if s["name"] == "j-cli"]
    assert ours["location"] == str(host_project / ".opencode" / "skills" / "j-cli" / "SKILL.md")
    assert ours["description"].startswith("Work on Jupyter notebooks")
    setup("codex", host_project, host_env)
    user_config = Path(host_env["CODEX_HOME"]) / "config.toml"
    user_config.write_text(f'[projects."{host_project}"]\ntrust_level = "trusted"\n')
    prompt = run(
        [str(npm_bin / "codex"), "debug", "prompt-input", "hi"], host_project, host_env,
        stdout_only=True,
    )  # fmt: skip
    roots = dict(re.findall(r"- `(r\d+)` = `([^`]+)`", prompt.replace("\\n", "\n")))
    (entry,) = re.findall(
        r"- j-cli: Work on Jupyter notebooks[^\n]*?\(file: (r\d+)/j-cli/SKILL\.md\)",
        prompt.replace("\\n", "\n"),
    )
    assert roots[entry] == str(host_project / ".agents" / "skills")


def test_the_dsh_plugin_loads_as_typescript_in_bun(
    npm_bin: Path,
    host_project: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DSH imports ``.dsh/plugins/jcli.ts``: the DSH contract tests (``node/dsh_plugin.test.mjs``)
    import that very file under Bun's TypeScript loader (OpenCode's binary is Bun: with
    ``BUN_BE_BUN=1`` it runs ``bun test``, which runs ``node:test`` files)."""
    shutil.copyfile(NOTEBOOKS / STREAM_NB, host_project / STREAM_NB)
    monkeypatch.chdir(host_project)  # the CLI's answers are read from the project folder
    env = write_contract(host_project, tmp_path, capsys)
    env.update(BUN_BE_BUN="1", JCLI_DSH_PLUGIN_MJS=str(host_project / ".dsh/plugins/jcli.ts"))
    shutil.copyfile(NODE_DIR / "contract.mjs", tmp_path / "contract.mjs")
    shutil.copyfile(NODE_DIR / "dsh_plugin.test.mjs", tmp_path / "dsh_plugin.test.mjs")
    done = subprocess.run(
        # Bun's own limit per test is 5 s; the contract test makes a dozen j-cli calls, which
        # took longer than that on a loaded machine (the test was killed mid-call).
        [str(npm_bin / "opencode"), "test", "--timeout", "120000", "./dsh_plugin.test.mjs"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=CLI_TIMEOUT_S, check=False,
    )  # fmt: skip
    report = done.stdout + done.stderr
    print(report)
    assert done.returncode == 0, report
    assert re.search(r"\b7 pass\b", report) and re.search(r"\b0 fail\b", report), report


def _opencode_tool(npm_bin: Path, project: Path, env: dict[str, str], **params: object) -> Any:
    """``opencode debug agent build --tool read_notebook_output --params JSON``: OpenCode runs
    the tool of our plugin itself (permission asks included), no model involved."""
    out = run(
        [str(npm_bin / "opencode"), "debug", "agent", "build", "--tool", "read_notebook_output",
         "--params", json.dumps(params)],
        project,
        env,
        stdout_only=True,
    )  # fmt: skip
    return json.loads(out)["result"]


def test_opencode_loads_our_plugin_and_runs_its_tool(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    setup("opencode", host_project, host_env)
    agent = json.loads(
        run([str(npm_bin / "opencode"), "debug", "agent", "build"], host_project, host_env,
            stdout_only=True)
    )  # fmt: skip
    assert agent["tools"]["read_notebook_output"] is True
    listing = _opencode_tool(npm_bin, host_project, host_env, file_path=NOTEBOOK, cell_index=5)
    document = json.loads(listing["output"])
    assert document["status"] == "ok" and document["output_count"] == 1
    assert listing["metadata"]["source"]["path"] == str(host_project / NOTEBOOK)
    assert listing["title"] == f"{NOTEBOOK} cell 5: outputs"
    image = _opencode_tool(
        npm_bin, host_project, host_env, file_path=NOTEBOOK, cell_index=9, output_index=0
    )
    selected = json.loads(image["output"])["selected"]
    assert selected["delivered_as"] == "image_content" and "data" not in selected
    (attachment,) = image["attachments"]
    assert attachment["mime"] == "image/png"
    assert base64.b64decode(attachment["url"].split(",", 1)[1]).startswith(b"\x89PNG")


def test_opencode_session_runs_our_guard_and_tool(
    npm_bin: Path, host_env: dict[str, str], host_project: Path, tmp_path: Path
) -> None:
    """A whole ``opencode run`` session against a scripted local model (no network): the model
    calls our tool, then writes a notebook through bash (our guard denies it), then runs a
    harmless command (allowed)."""
    setup("opencode", host_project, host_env)
    calls = [
        {"name": "read_notebook_output", "arguments": {"file_path": NOTEBOOK, "cell_index": 5}},
        {"name": "bash", "arguments": {"command": "echo {} > broken.ipynb", "description": "x"}},
        {"name": "bash", "arguments": {"command": "echo ok > allowed.txt", "description": "y"}},
    ]
    script, port_file, log = tmp_path / "calls.json", tmp_path / "port", tmp_path / "requests.log"
    script.write_text(json.dumps(calls))
    model = subprocess.Popen(
        [sys.executable, str(Path(__file__).parent / "scripted_model.py"), str(port_file),
         str(log), str(script)]
    )  # fmt: skip
    try:
        deadline = time.monotonic() + CLI_TIMEOUT_S
        while not (port_file.exists() and port_file.read_text()):
            assert model.poll() is None and time.monotonic() < deadline, "no scripted model"
            time.sleep(0.1)
        port = int(port_file.read_text())
        config = host_project / "opencode.json"
        doc = json.loads(config.read_text())
        doc["provider"] = {
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "none"},
                "models": {"m": {"name": "m", "tool_call": True}},
            }
        }
        config.write_text(json.dumps(doc))
        out = run(
            [str(npm_bin / "opencode"), "run", "-m", "scripted/m", "go"], host_project, host_env
        )
        print(out)
    finally:
        model.kill()
        model.wait(timeout=CLI_TIMEOUT_S)
    assert not (host_project / "broken.ipynb").exists()
    assert (host_project / "allowed.txt").read_text() == "ok\n"
    results = {}
    for line in log.read_text().splitlines():
        for message in json.loads(line)["messages"]:
            if message["role"] == "tool":
                results[message["tool_call_id"]] = str(message["content"])
    read, denied, allowed = (results[f"call_scripted_{n}"] for n in (2, 1, 0))
    assert json.loads(read)["output_count"] == 1
    assert denied.startswith("Blocked by jupyter-jcli") and "broken.ipynb" in denied
    assert "Blocked" not in allowed


def test_inspector_cli_calls_read_notebook_output_on_a_real_notebook(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    base = [str(npm_bin / "mcp-inspector"), "--cli", str(READONLY), "--root", str(host_project)]
    base += ["--connect-timeout", str(INSPECTOR_CONNECT_TIMEOUT_MS)]
    tools = json.loads(
        run([*base, "--method", "tools/list"], host_project, host_env, stdout_only=True)
    )
    (tool,) = tools["tools"]
    assert tool["name"] == "read_notebook_output"
    assert tool["annotations"]["readOnlyHint"] is True
    listing = run(
        [*base, "--method", "tools/call", "--tool-name", "read_notebook_output",
         "--tool-arg", f"file_path={NOTEBOOK}", "--tool-arg", "cell_index=5"],
        host_project,
        host_env,
        stdout_only=True,
    )  # fmt: skip
    print(listing)
    is_error, document = checked_result("read_notebook_output", json.loads(listing))
    assert not is_error, listing
    assert document["status"] == "ok" and document["output_count"] == 1
    assert document["source"]["path"] == str(host_project / NOTEBOOK)
    read = json.loads(
        run(
            [*base, "--method", "tools/call", "--tool-name", "read_notebook_output",
             "--tool-arg", f"file_path={NOTEBOOK}", "--tool-arg", "cell_index=5",
             "--tool-arg", "output_index=0", "--tool-arg", "mime_type=text/plain"],
            host_project,
            host_env,
            stdout_only=True,
        )
    )  # fmt: skip
    selected = json.loads(read["content"][0]["text"])["selected"]
    assert selected["mime_type"] == "text/plain", selected
    assert selected["data"] == "   0\n0  4", selected


def inspector_call(
    npm_bin: Path, server: Path, project: Path, env: dict[str, str], tool: str, **args: object
) -> dict[str, Any]:
    """``mcp-inspector --cli SERVER --root PROJECT --method tools/call`` (TypeScript SDK client).

    The Inspector prints the result on stdout and exits 0 for a success, 5 (with
    ``tool_is_error`` on stderr) for an ``isError`` result; anything else (a result the SDK
    rejected, such as ``-32602``) fails the test.
    """
    argv = [str(npm_bin / "mcp-inspector"), "--cli", str(server), "--root", str(project)]
    argv += ["--connect-timeout", str(INSPECTOR_CONNECT_TIMEOUT_MS)]
    argv += ["--method", "tools/call", "--tool-name", tool]
    for key, value in args.items():
        argv += ["--tool-arg", f"{key}={value}"]
    done = subprocess.run(
        argv,
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert done.returncode in (0, 5), f"{argv}: {done.returncode}\n{done.stdout}\n{done.stderr}"
    result: dict[str, Any] = json.loads(done.stdout)
    assert checked_result(tool, result)[0] is (done.returncode == 5), done.stderr
    return result


def _inspector_error(result: dict[str, Any]) -> str:
    """The code of an error result as the Inspector shows it: the first text is the error JSON."""
    assert result["isError"] is True and "structuredContent" not in result, result
    document = json.loads(result["content"][0]["text"])
    assert document["schema_version"] == 1 and document["status"] == "error", document
    code: str = document["code"]
    return code


def test_inspector_cli_shows_the_error_codes_of_both_servers(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    outside = host_project.parent / "outside.ipynb"
    shutil.copyfile(host_project / NOTEBOOK, outside)
    env, project = host_env, host_project
    overview = inspector_call(npm_bin, WORKBENCH, project, env, "notebook_overview", path=NOTEBOOK)
    first = overview["structuredContent"]["cells"][0]
    edit = {"path": NOTEBOOK, "expected_rev": "000000000000", "source": "x"}
    codes = {
        "unknown cell": inspector_call(
            npm_bin, WORKBENCH, project, env, "update_cell", name="no-such-cell", **edit
        ),
        "stale rev": inspector_call(
            npm_bin, WORKBENCH, project, env, "update_cell", name=first["name"], **edit
        ),
        "outside": inspector_call(
            npm_bin, WORKBENCH, project, env, "notebook_overview", path=str(outside)
        ),
        "output unknown cell": inspector_call(
            npm_bin, WORKBENCH, project, env, "read_notebook_output",
            file_path=NOTEBOOK, cell_index=99,
        ),
        "readonly unknown cell": inspector_call(
            npm_bin, READONLY, project, env, "read_notebook_output",
            file_path=NOTEBOOK, cell_index=99,
        ),
        "readonly outside": inspector_call(
            npm_bin, READONLY, project, env, "read_notebook_output",
            file_path=str(outside), cell_index=0,
        ),
    }  # fmt: skip
    assert {label: _inspector_error(result) for label, result in codes.items()} == {
        "unknown cell": "CELL_NOT_FOUND",
        "stale rev": "REV_MISMATCH",
        "outside": "PATH_NOT_ALLOWED",
        "output unknown cell": "CELL_NOT_FOUND",
        "readonly unknown cell": "CELL_NOT_FOUND",
        "readonly outside": "PATH_NOT_ALLOWED",
    }
    stale = json.loads(codes["stale rev"]["content"][0]["text"])["details"]
    assert stale["rev"] == first["rev"]  # the current state, to retry with


@pytest.mark.parametrize("server", [READONLY, WORKBENCH], ids=lambda p: p.name)
def test_inspector_cli_shows_an_image_for_read_notebook_output(
    server: Path, npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    result = inspector_call(
        npm_bin, server, host_project, host_env, "read_notebook_output",
        file_path=NOTEBOOK, cell_index=9, output_index=0,
    )  # fmt: skip
    assert result["isError"] is False
    text, image = result["content"]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG\r\n\x1a\n")
    selected = json.loads(text["text"])["selected"]
    assert selected["delivered_as"] == "image_content" and "data" not in selected
    assert result["structuredContent"]["selected"] == selected


# --- a Jupyter Server: the token travels by name, from the host's environment -------------

SERVER_URL = "http://127.0.0.1:9/"
TOKEN = "tok-from-the-environment-77"
TOKEN_VAR = "JUPYTER_JCLI_SERVER_TOKEN"
# A minimal stdio MCP server that writes what it received of our variable, then answers the
# host's health check: it stands in for jupyter-mcp with the environment block setup wrote.
_PROBE = r"""
import json, os, sys
with open(sys.argv[1], "w") as out:
    json.dump({"token": os.environ.get("JUPYTER_JCLI_SERVER_TOKEN")}, out)
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"],
                  "capabilities": {"tools": {}}, "serverInfo": {"name": "probe", "version": "0"}}
    else:
        result = {"tools": []} if msg["method"] == "tools/list" else {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def _probe(folder: Path) -> tuple[list[str], Path]:
    script, received = folder / "probe.py", folder / "probe-received.json"
    script.write_text(_PROBE)
    return [sys.executable, str(script), str(received)], received


def _no_token_written(*folders: Path) -> None:
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and "node_modules" not in path.parts:
                assert TOKEN.encode() not in path.read_bytes(), path


def test_claude_code_expands_the_token_reference_setup_writes(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    setup("claude", host_project, host_env, "--server-url", SERVER_URL)
    mcp_json = host_project / ".mcp.json"
    servers = json.loads(mcp_json.read_text())["mcpServers"]
    argv, received = _probe(host_project.parent)
    servers["token-probe"] = {"type": "stdio", "command": argv[0], "args": argv[1:],
                              "env": servers["jupyter-mcp"]["env"]}  # fmt: skip
    mcp_json.write_text(json.dumps({"mcpServers": servers}))
    approvals = host_project / ".claude" / "settings.local.json"
    local = json.loads(approvals.read_text())
    local["enabledMcpjsonServers"].append("token-probe")
    approvals.write_text(json.dumps(local))
    state = Path(host_env["HOME"]) / ".claude.json"
    state.write_text(
        json.dumps({"projects": {str(host_project): {"hasTrustDialogAccepted": True}}})
    )
    listing = run(
        [str(npm_bin / "claude"), "mcp", "list"], host_project, {**host_env, TOKEN_VAR: TOKEN}
    )
    print(listing)
    assert f"--server-url {SERVER_URL}" in _line(listing, "jupyter-mcp:")
    assert json.loads(received.read_text()) == {"token": TOKEN}
    _no_token_written(host_project, Path(host_env["HOME"]))


def test_codex_forwards_the_token_variable_by_name(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    setup("codex", host_project, host_env, "--server-url", SERVER_URL)
    user_config = Path(host_env["CODEX_HOME"]) / "config.toml"
    user_config.write_text(f'[projects."{host_project}"]\ntrust_level = "trusted"\n')
    env = {**host_env, TOKEN_VAR: TOKEN}
    shown = run([str(npm_bin / "codex"), "mcp", "get", "jupyter-mcp", "--json"], host_project, env,
                stdout_only=True)  # fmt: skip
    transport = json.loads(shown)["transport"]
    assert transport["args"] == ["--root", str(host_project), "--server-url", SERVER_URL]
    assert transport["env_vars"] == [TOKEN_VAR] and not transport["env"]
    text = run([str(npm_bin / "codex"), "mcp", "get", "jupyter-mcp"], host_project, env)
    assert f"{TOKEN_VAR}=*****" in text and TOKEN not in text
    _no_token_written(host_project, Path(host_env["HOME"]))


def test_opencode_substitutes_the_token_reference_setup_writes(
    npm_bin: Path, host_env: dict[str, str], host_project: Path
) -> None:
    setup("opencode", host_project, host_env, "--server-url", SERVER_URL)
    config = host_project / "opencode.json"
    doc = json.loads(config.read_text())
    argv, received = _probe(host_project.parent)
    environment = doc["mcp"]["jupyter-mcp"]["environment"]
    doc["mcp"]["token-probe"] = {
        "type": "local",
        "command": argv,
        "enabled": True,
        "environment": environment,
    }
    config.write_text(json.dumps(doc))
    listing = run(
        [str(npm_bin / "opencode"), "mcp", "list"], host_project, {**host_env, TOKEN_VAR: TOKEN}
    )
    print(listing)
    assert "connected" in _line(listing, "token-probe"), listing
    assert json.loads(received.read_text()) == {"token": TOKEN}
    _no_token_written(host_project, Path(host_env["HOME"]))
