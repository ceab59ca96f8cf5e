"""``j-cli _hooks NAME`` and ``j-cli-hook NAME``: the reference's hook command line, its payloads
per host and its exit statuses (0 no decision, 1 surfaced failure, 2 explicit deny)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hosts_helpers import JCLI, run_process

from jupyter_jcli.cli import main
from jupyter_jcli.hosts.hooks import HOOK_NAMES, run_hook

JCLI_HOOK = JCLI.parent / "j-cli-hook"
PATCH = "*** Begin Patch\n*** {verb} File: {path}\n@@\n-a\n+b\n*** End Patch\n"


def bash(command: str | list[str], **extra: Any) -> dict[str, Any]:
    """A Claude Code ``Bash`` PreToolUse event (OpenCode's plugin sends the same shape)."""
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, **extra}  # fmt: skip


def dsh(tool: str, arguments: dict[str, Any], cwd: str = "/p") -> dict[str, Any]:
    """A DSH plugin event: its own lower-case tool names and arguments, the session's cwd."""
    return {"session_id": "s", "cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": arguments, "tool_use_id": "1"}  # fmt: skip


def codex_patch(path: str, verb: str = "Update") -> dict[str, Any]:
    """Codex's (and OpenCode's) ``apply_patch`` event: ``["apply_patch", PATCH]``."""
    patch = PATCH.format(verb=verb, path=path)
    return {"hook_event_name": "PreToolUse", "tool_name": "apply_patch",
            "tool_input": {"command": ["apply_patch", patch]}}  # fmt: skip


@dataclass(frozen=True)
class Case:
    """One hook call: the guard, its ``--platform`` (None: the default, claude), the event
    (or raw stdin text), the exit status and, on a deny, the rule's telltale in the reason."""

    id: str
    name: str
    platform: str | None
    event: dict[str, Any] | str
    exit_code: int
    says: str = ""
    files: tuple[str, ...] = field(default=())


CASES = [
    # notebook-exec-guard: a shell command, every host's shape
    Case("claude-ls", "notebook-exec-guard", None, bash("ls -la"), 0),
    Case("claude-nbconvert", "notebook-exec-guard", None,
         bash("jupyter nbconvert --to notebook --execute nb.ipynb"), 2, "nbconvert --execute"),
    Case("claude-raw-write", "notebook-exec-guard", "claude", bash("echo '{}' > nb.ipynb"), 2,
         "j-cli cell"),
    Case("claude-sed-i", "notebook-exec-guard", None, bash("sed -i s/a/b/ nb.ipynb"), 2, "sed -i"),
    Case("claude-ipython", "notebook-exec-guard", None, bash("ipython nb.ipynb"), 2, "ipython"),
    Case("claude-percent-run", "notebook-exec-guard", None, bash('ipython -c "%run nb.ipynb"'),
         2, "%run"),
    Case("codex-argv", "notebook-exec-guard", "codex",
         bash(["bash", "-lc", "papermill a.ipynb b.ipynb"]), 2, "papermill"),
    Case("codex-argv-ls", "notebook-exec-guard", "codex", bash(["bash", "-lc", "ls -la"]), 0),
    Case("opencode-ls", "notebook-exec-guard", None, bash("ls -la", cwd="/p"), 0),
    Case("dsh-ls", "notebook-exec-guard", "dsh", dsh("bash", {"command": "ls -la"}), 0),
    Case("dsh-runipy", "notebook-exec-guard", "dsh", dsh("bash", {"command": "runipy nb.ipynb"}),
         2, "runipy"),
    Case("dsh-no-command", "notebook-exec-guard", "dsh", dsh("bash", {}), 0),
    # python-run-guard: a script with a paired notebook beside it
    Case("claude-paired-script", "python-run-guard", None, bash("python foo.py"), 2,
         "j-cli run", ("foo.py", "foo.ipynb")),
    Case("claude-unpaired-script", "python-run-guard", None, bash("python foo.py"), 0,
         files=("foo.py",)),
    Case("codex-paired-script", "python-run-guard", "codex",
         bash(["bash", "-lc", "uv run python foo.py"]), 2, "j-cli run", ("foo.py", "foo.ipynb")),
    Case("dsh-paired-script", "python-run-guard", "dsh",
         dsh("bash", {"command": "./foo.py"}, cwd="."), 2, "j-cli run", ("foo.py", "foo.ipynb")),
    # pair-drift-guard-pre: file edits
    Case("claude-write-ipynb", "pair-drift-guard-pre", None,
         {"tool_name": "Write", "tool_input": {"file_path": "nb.ipynb", "content": "{}"}}, 2,
         "Write on nb.ipynb"),
    Case("opencode-edit-py", "pair-drift-guard-pre", "claude",
         {"tool_name": "edit", "tool_input": {"file_path": "/p/nb.py"}, "cwd": "/p"}, 0),
    Case("codex-patch-ipynb", "pair-drift-guard-pre", "codex", codex_patch("nb.ipynb"), 2,
         "a patch on nb.ipynb"),
    Case("codex-patch-py", "pair-drift-guard-pre", "codex", codex_patch("src/app.py"), 0),
    Case("dsh-write-ipynb", "pair-drift-guard-pre", "dsh",
         dsh("write", {"file_path": "nb.ipynb", "content": "{}"}), 2, "write on nb.ipynb"),
    # pair-drift-guard-post never decides
    Case("claude-post", "pair-drift-guard-post", None,
         {"tool_name": "Edit", "tool_input": {"file_path": "nb.py"}}, 0),
    Case("codex-post", "pair-drift-guard-post", "codex", codex_patch("nb.ipynb"), 0),
    # notebook-edit-guard: Claude Code's NotebookEdit
    Case("claude-notebook-edit", "notebook-edit-guard", None,
         {"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "/p/nb.ipynb"}}, 2,
         "update_cell"),
    Case("dsh-notebook-edit", "notebook-edit-guard", "dsh",
         {"tool_name": "NotebookEdit", "tool_input": {}}, 2, "update_cell"),
    Case("claude-edit-is-no-notebook-edit", "notebook-edit-guard", None,
         {"tool_name": "Edit", "tool_input": {}}, 0),
    # malformed events: a surfaced failure (1), never a deny (2)
    Case("not-json", "notebook-exec-guard", None, "not json", 1, "malformed hook payload"),
    Case("empty", "notebook-exec-guard", None, "", 1, "malformed hook payload"),
    Case("null", "python-run-guard", None, "null", 1, "malformed hook payload"),
    Case("input-null", "notebook-exec-guard", None, '{"tool_input": null}', 1,
         "malformed hook payload"),
    Case("command-number", "notebook-exec-guard", "dsh", {"tool_input": {"command": 42}}, 1,
         "malformed hook payload"),
    Case("dsh-argv", "notebook-exec-guard", "dsh",
         {"tool_input": {"command": ["bash", "-c", "ls"]}}, 1, "malformed hook payload"),
    Case("cwd-number", "python-run-guard", None, {"cwd": 42, "tool_input": {"command": "ls"}},
         1, "malformed hook payload"),
    Case("file-path-null", "pair-drift-guard-pre", None, {"tool_input": {"file_path": None}},
         1, "malformed hook payload"),
    Case("post-not-json", "pair-drift-guard-post", None, "{oops", 1, "malformed hook payload"),
]  # fmt: skip


def _stdin(event: dict[str, Any] | str) -> str:
    return event if isinstance(event, str) else json.dumps(event)


def _argv(case: Case) -> list[str]:
    return [case.name] + ([] if case.platform is None else ["--platform", case.platform])


def _check(case: Case, exit_code: int, stdout: str, stderr: str) -> None:
    assert exit_code == case.exit_code, (stdout, stderr)
    if case.exit_code == 0:
        assert stdout == ""
    elif case.exit_code == 1:
        assert stdout == ""
        assert stderr.startswith(f"{case.name}: ") and case.says in stderr
    else:
        decision = json.loads(stdout)["hookSpecificOutput"]
        assert decision["hookEventName"] == "PreToolUse"
        assert decision["permissionDecision"] == "deny"
        reason = decision["permissionDecisionReason"]
        assert case.says in reason
        assert stderr == f"{case.name}: {reason}\n"


@pytest.fixture
def in_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Case], None]:
    """Make ``case.files`` in a fresh current folder (the events' relative paths resolve there)."""
    monkeypatch.chdir(tmp_path)

    def make(case: Case) -> None:
        for name in case.files:
            (tmp_path / name).touch()

    return make


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_each_guard_answers_each_host_s_payload(
    case: Case, in_folder: Callable[[Case], None]
) -> None:
    in_folder(case)
    result = run_hook(_argv(case), lambda: _stdin(case.event))
    _check(case, result.exit_code, result.stdout, result.stderr)


SUBPROCESS_CASES = [case for case in CASES if case.id in {
    "claude-ls", "claude-raw-write", "codex-argv", "codex-argv-ls", "opencode-ls", "dsh-ls",
    "dsh-runipy", "claude-notebook-edit", "codex-patch-ipynb", "claude-paired-script",
    "not-json",
}]  # fmt: skip


@pytest.mark.parametrize("script", ["j-cli _hooks", "j-cli-hook"])
@pytest.mark.parametrize("case", SUBPROCESS_CASES, ids=[case.id for case in SUBPROCESS_CASES])
def test_the_console_scripts_answer_as_hosts_call_them(
    tmp_path: Path, case: Case, script: str
) -> None:
    for name in case.files:
        (tmp_path / name).touch()
    argv = [str(JCLI), "_hooks"] if script == "j-cli _hooks" else [str(JCLI_HOOK)]
    done = run_process([*argv, *_argv(case)], cwd=tmp_path, stdin=_stdin(case.event))
    _check(case, done.returncode, done.stdout, done.stderr)


def test_the_click_app_answers_the_same(tmp_path: Path) -> None:
    """``python -m jupyter_jcli _hooks`` and ``CliRunner().invoke(main, ["_hooks", ...])``."""
    deny, allow = bash("jupyter execute nb.ipynb"), bash("ls -la")
    done = run_process(
        [sys.executable, "-m", "jupyter_jcli", "_hooks", "notebook-exec-guard"],
        cwd=tmp_path,
        stdin=json.dumps(deny),
    )
    assert done.returncode == 2
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    runner = CliRunner()
    result = runner.invoke(main, ["_hooks", "notebook-exec-guard"], input=json.dumps(allow))
    assert (result.exit_code, result.stdout) == (0, "")


@pytest.mark.parametrize(
    "argv",
    [
        ["no-such-guard"],
        ["notebook-exec-guard", "--platform", "typo"],
        ["notebook-exec-guard", "--platform"],
        ["notebook-exec-guard", "--frobnicate"],
        [],
    ],
)
def test_a_bad_command_line_is_a_surfaced_failure_never_a_deny(
    tmp_path: Path, argv: list[str]
) -> None:
    done = run_process([str(JCLI), "_hooks", *argv], cwd=tmp_path, stdin=json.dumps(bash("ls")))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.strip()


def test_a_patch_on_several_notebooks_names_each() -> None:
    patch = PATCH.format(verb="Update", path="a.ipynb") + PATCH.format(verb="Add", path="b.ipynb")
    event = {"tool_name": "apply_patch", "tool_input": {"command": ["apply_patch", patch]}}
    result = run_hook(["pair-drift-guard-pre", "--platform", "codex"], lambda: json.dumps(event))
    assert result.exit_code == 2
    assert (
        "a.ipynb, b.ipynb"
        in json.loads(result.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    )


def test_a_fault_in_a_guard_is_a_surfaced_failure_never_a_deny(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("jupyter_jcli.hosts.hooks.check_shell", broken)
    result = run_hook(["notebook-exec-guard"], lambda: json.dumps(bash("ls")))
    assert (result.exit_code, result.stdout) == (1, "")
    assert "RuntimeError: boom" in result.stderr


def test_the_reference_s_git_hook_commands_do_nothing_and_never_block(tmp_path: Path) -> None:
    for argv in (["pre-commit-pair-sync", "--include", "*.py"], ["gc-pair-sync-refs"]):
        done = run_process([str(JCLI), "_hooks", *argv], cwd=tmp_path)
        assert (done.returncode, done.stdout) == (0, "")
        assert "not offered" in done.stderr


def test_hooks_is_hidden_from_help(tmp_path: Path) -> None:
    done = run_process([str(JCLI), "--help"], cwd=tmp_path)
    assert done.returncode == 0
    assert "_hooks" not in done.stdout
    assert "hook" in done.stdout


def test_every_guard_is_a_name(tmp_path: Path) -> None:
    for name in HOOK_NAMES:
        result = run_hook([name], lambda: json.dumps({"tool_input": {}}))
        assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def test_debug_writes_one_log_per_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = tmp_path / "logs"
    monkeypatch.setenv("JCLI_DEBUG_LOG_DIR", str(logs))
    event = bash("jupyter nbconvert --execute nb.ipynb")
    result = run_hook(["notebook-exec-guard", "--debug"], lambda: json.dumps(event))
    assert result.exit_code == 2
    (log,) = logs.glob("notebook-exec-guard-*.log")
    record = json.loads(log.read_text())
    assert record["hook"] == "notebook-exec-guard"
    assert record["exit_code"] == 2
    assert record["stdin_parsed"] == event
    assert record["stdout_parsed"]["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert oct(os.stat(logs).st_mode & 0o777) == oct(0o700)


def test_the_hook_console_script_answers_without_click(tmp_path: Path) -> None:
    probe = (
        "import io, json, sys\n"
        'sys.stdin = io.TextIOWrapper(io.BytesIO(b\'{"tool_input": {"command": "ls"}}\'))\n'
        "sys.argv = ['j-cli-hook', 'notebook-exec-guard']\n"
        "from jupyter_jcli.cli._hooks import entry\n"
        "try:\n"
        "    entry()\n"
        "except SystemExit as done:\n"
        "    status = done.code\n"
        "ours = sorted(m for m in sys.modules if m.startswith('jupyter_jcli'))\n"
        "print(json.dumps({'status': status, 'click': 'click' in sys.modules, 'ours': ours}))\n"
    )
    done = run_process([sys.executable, "-c", probe], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {
        "status": 0,
        "click": False,
        "ours": [
            "jupyter_jcli",
            "jupyter_jcli.cli",
            "jupyter_jcli.cli._hooks",
            "jupyter_jcli.hosts",
            "jupyter_jcli.hosts._shell_commands",
            "jupyter_jcli.hosts._shellwords",
            "jupyter_jcli.hosts.guard",
            "jupyter_jcli.hosts.hooks",
        ],
    }
