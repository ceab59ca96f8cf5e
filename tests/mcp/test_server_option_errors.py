"""A bad option at start-up, through the real console scripts (``jupyter-mcp``,
``jcli-notebook-output``) and ``j-cli [-j] mcp workbench|serve`` (the same click commands):
every one is refused the way click refuses an unknown option. The console scripts exit 2 with
the usage line and the message on stderr (stdout, the JSON-RPC channel, stays empty); under
``j-cli -j`` it is the command line's one ``USAGE_ERROR`` document on stdout, exit 2, its
details naming the option; under ``j-cli`` without ``-j``, stderr and exit 2. A ``--root``
that is a file, not a folder, is refused too. Exit statuses, channels, codes and details are
asserted, never message text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
PROCESS_TIMEOUT = 60
UNKNOWN = ["--no-such-option"]
"""click's own usage error, the way every bad option is refused."""

CONSOLE = {"workbench": "jupyter-mcp", "readonly": "jcli-notebook-output"}
SUBCOMMAND = {"workbench": "workbench", "readonly": "serve"}

CASES: dict[str, tuple[tuple[str, ...], list[str], str]] = {
    # case: (servers that take the option, arguments, the parameter at fault)
    "missing root": (("workbench", "readonly"), ["--root", "{tmp}/missing"], "roots"),
    "root is a file": (("workbench", "readonly"), ["--root", "{tmp}/a-file"], "roots"),
    "missing token file": (
        ("workbench", "readonly"),
        ["--transport", "streamable-http", "--token-file", "{tmp}/missing"],
        "token_file",
    ),
    "token file is a folder": (
        ("workbench", "readonly"),
        ["--transport", "streamable-http", "--token-file", "{tmp}"],
        "token_file",
    ),
    "an HTTP option with stdio": (("workbench", "readonly"), ["--host", "127.0.0.1"], "host"),
    "a port out of range": (
        ("workbench", "readonly"),
        ["--transport", "streamable-http", "--port", "70000"],
        "port",
    ),
    "a bad server URL": (("workbench",), ["--server-url", "not-a-url"], "server_url"),
    "an unknown store": (("workbench",), ["--store", "bogus"], "store"),
}


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        input="",  # a server that did start ends at once (stdin closed)
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=PROCESS_TIMEOUT,
        check=False,
    )


def _named(details: dict[str, object]) -> object:
    """The parameter an error's details name: click's ``parameter``, our checks' ``option``
    (a parameter's name) or the first of ``options`` (flags)."""
    if "parameter" in details:
        return details["parameter"]
    if "option" in details:
        return details["option"]
    flags = details.get("options")
    assert isinstance(flags, list) and flags
    return str(flags[0]).removeprefix("--").replace("-", "_")


@pytest.mark.parametrize("case", list(CASES))
def test_every_bad_option_at_start_up_is_a_usage_error_exit_2_as_click_gives(
    case: str, tmp_path: Path
) -> None:
    servers, template, parameter = CASES[case]
    (tmp_path / "a-file").write_text("not a folder\n", encoding="utf-8")
    arguments = [word.replace("{tmp}", str(tmp_path)) for word in template]
    for server in servers:
        script = [str(BIN / CONSOLE[server])]
        unknown = _run([*script, *UNKNOWN], tmp_path)
        done = _run([*script, *arguments], tmp_path)
        assert (done.returncode, done.stdout) == (2, ""), (server, done.stderr)
        usage_line = unknown.stderr.splitlines()[0]
        assert done.stderr.splitlines()[0] == usage_line, (server, done.stderr)

        under_j_cli = [str(BIN / "j-cli"), "mcp", SUBCOMMAND[server]]
        plain = _run([*under_j_cli, *arguments], tmp_path)
        assert (plain.returncode, plain.stdout) == (2, ""), (server, plain.stderr)
        assert plain.stderr

        as_json = _run([str(BIN / "j-cli"), "-j", *under_j_cli[1:], *arguments], tmp_path)
        assert (as_json.returncode, as_json.stderr) == (2, ""), (server, as_json.stderr)
        document = json.loads(as_json.stdout)
        assert document["code"] == "USAGE_ERROR"
        assert _named(document["details"]) == parameter
