"""``j-cli setup claude|codex|opencode --server-url URL [--server-root DIR]``: ``jupyter-mcp``
is registered with the server's URL, the token is passed through by name in each host's own
way and is never written anywhere; status, idempotence and exact removal still hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hosts_helpers import run_json, snapshot

from jupyter_jcli.errors import ErrorCode, JcliError
from jupyter_jcli.hosts import Scope, setup_host, setup_status
from jupyter_jcli.hosts._servers import KernelServer

TOKEN = "tok-must-never-be-written-5f1c"
URL = "https://hub.example.org/user/ana"
VAR = "JUPYTER_JCLI_SERVER_TOKEN"
SERVER_HOSTS = ("claude", "codex", "opencode")


@pytest.fixture(autouse=True)
def token_in_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The person's token is in setup's own environment: it must still not be written."""
    monkeypatch.setenv(VAR, TOKEN)


def _workbench_entry(host: str, project: Path) -> dict[str, Any]:
    if host == "claude":
        entry: dict[str, Any] = json.loads((project / ".mcp.json").read_text())["mcpServers"][
            "jupyter-mcp"
        ]
        return entry
    if host == "codex":
        doc = tomlkit.parse((project / ".codex" / "config.toml").read_text())
        return dict(doc["mcp_servers"]["jupyter-mcp"].unwrap())  # type: ignore[union-attr]
    entry = json.loads((project / "opencode.json").read_text())["mcp"]["jupyter-mcp"]
    return entry


def _args(host: str, entry: dict[str, Any]) -> list[str]:
    args: list[str] = entry["command"][1:] if host == "opencode" else entry["args"]
    return args


def _no_token_anywhere(*folders: Path) -> None:
    for folder in folders:
        for relative, data in snapshot(folder).items():
            assert TOKEN.encode() not in data, relative


@pytest.mark.parametrize("host", SERVER_HOSTS)
def test_the_workbench_server_gets_the_url_and_the_token_only_by_name(
    project: Path, home: Path, host: str
) -> None:
    server = KernelServer.from_options(URL, project)
    setup_host(host, Scope.PROJECT, project, server=server)  # type: ignore[arg-type]
    entry = _workbench_entry(host, project)
    args = _args(host, entry)
    assert args == [
        "--root",
        str(project),
        "--server-url",
        URL + "/",
        "--server-root",
        str(project),
    ]
    assert "--token" not in args
    forwarded = {
        "claude": ("env", {VAR: "${JUPYTER_JCLI_SERVER_TOKEN:-}"}),
        "codex": ("env_vars", [VAR]),
        "opencode": ("environment", {VAR: "{env:JUPYTER_JCLI_SERVER_TOKEN}"}),
    }[host]
    assert entry[forwarded[0]] == forwarded[1]
    _no_token_anywhere(project, home)


def test_the_read_only_server_is_left_without_server_options(project: Path) -> None:
    setup_host("claude", Scope.PROJECT, project, server=KernelServer.from_options(URL))
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["jcli-notebook-output"]["args"] == ["--root", str(project)]
    assert servers["jcli-notebook-output"]["env"] == {}


@pytest.mark.parametrize("host", SERVER_HOSTS)
def test_status_idempotence_switching_back_and_exact_removal(
    project: Path, home: Path, host: Any
) -> None:
    before = snapshot(project)
    server = KernelServer.from_options(URL)
    setup_host(host, Scope.PROJECT, project, server=server)
    states = {
        i.item: i.state
        for i in setup_status(project)
        if i.host == host and i.scope.value == "project"
    }
    assert set(states.values()) == {"installed"}, states
    assert setup_host(host, Scope.PROJECT, project, server=server).changes == []
    # setup without --server-url registers local kernels again: an update of our own entry
    local = setup_host(host, Scope.PROJECT, project)
    assert local.changes and "--server-url" not in _args(host, _workbench_entry(host, project))
    setup_host(host, Scope.PROJECT, project, server=server)
    setup_host(host, Scope.PROJECT, project, remove=True)
    assert snapshot(project) == before


def test_user_scope_setup_registers_the_server_without_a_root(home: Path) -> None:
    setup_host("codex", Scope.USER, server=KernelServer.from_options(URL))
    doc = tomlkit.parse((home / ".codex" / "config.toml").read_text())
    entry = doc["mcp_servers"]["jupyter-mcp"]  # type: ignore[index]
    assert list(entry["args"]) == ["--server-url", URL + "/"]  # type: ignore[index]
    _no_token_anywhere(home)


@pytest.mark.parametrize(
    ("url", "root"), [("ftp://hub", None), ("hub.example.org", None), ("", "/tmp")]
)
def test_a_bad_server_option_is_a_usage_error(url: str, root: str | None) -> None:
    with pytest.raises(JcliError) as caught:
        KernelServer.from_options(url, root)
    assert caught.value.code == ErrorCode.USAGE_ERROR


@pytest.mark.parametrize("host", ["dsh", "git"])
def test_a_host_without_the_workbench_server_refuses_a_server(project: Path, host: Any) -> None:
    before = snapshot(project)
    with pytest.raises(JcliError) as caught:
        setup_host(host, Scope.PROJECT, project, server=KernelServer.from_options(URL))
    assert caught.value.code == ErrorCode.USAGE_ERROR
    assert snapshot(project) == before


def test_the_command_line_says_where_the_token_comes_from_and_writes_nothing_on_error(
    project: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, document = run_json(capsys, "setup", "opencode", "--server-url", URL)
    assert status == 0
    assert any(VAR in note for note in document["notes"])
    assert TOKEN not in json.dumps(document)
    before = snapshot(project)
    status, document = run_json(capsys, "setup", "claude", "--server-url", "nope")
    assert (status, document["code"]) == (2, "USAGE_ERROR")
    assert snapshot(project) == before
    _no_token_anywhere(project, home)
