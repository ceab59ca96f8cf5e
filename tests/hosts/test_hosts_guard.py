"""The guard: deny raw .ipynb edits and whole-notebook runs, allow the rest, fail open, stay
light."""

from __future__ import annotations

import json
import random
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from hosts_helpers import JCLI, run_process

from jupyter_jcli.cli._hook import GUARD_HOST_CHOICES
from jupyter_jcli.hosts._shellwords import split_words
from jupyter_jcli.hosts.guard import GUARD_HOSTS, MAX_ANALYSED_CHARS, evaluate, run_guard

PATCH = "*** Begin Patch\n*** Update File: {path}\n@@\n-a\n+b\n*** End Patch\n"

# (tool_name, tool_input, expected rule or None for allow)
CASES: list[tuple[str, dict[str, Any], str | None]] = [
    # Claude Code's generic file tools
    ("Write", {"file_path": "/p/nb.ipynb", "content": "{}"}, "raw-ipynb-edit"),
    ("Edit", {"file_path": "/p/NB.IPYNB", "old_string": "a", "new_string": "b"}, "raw-ipynb-edit"),
    ("MultiEdit", {"file_path": "nb.ipynb", "edits": []}, "raw-ipynb-edit"),
    ("Write", {"file_path": "/p/nb.py", "content": "x = 1"}, None),
    ("Edit", {"file_path": "/p/notes.md", "old_string": "a", "new_string": "b"}, None),
    # Claude Code's NotebookEdit: valid JSON, but no names or revs
    ("NotebookEdit", {"notebook_path": "/p/nb.ipynb", "new_source": "x"}, "notebook-edit-tool"),
    ("NotebookEdit", {"new_source": "x"}, "notebook-edit-tool"),
    ("Read", {"file_path": "/p/nb.ipynb"}, None),
    # Codex apply_patch
    ("apply_patch", {"command": PATCH.format(path="nb.ipynb")}, "raw-ipynb-edit"),
    (
        "apply_patch",
        {"command": PATCH.replace("Update", "Add").format(path="d/x.ipynb")},
        "raw-ipynb-edit",
    ),
    ("apply_patch", {"command": PATCH.format(path="src/app.py")}, None),
    (
        "apply_patch",
        {"command": PATCH.replace("***", "**_").format(path="nb.ipynb")},
        "raw-ipynb-edit",
    ),
    (
        "apply_patch",
        {"command": PATCH.replace("Update File", "Delete File").format(path="x.ipynb")},
        None,
    ),
    (
        "Bash",
        {"command": "apply_patch <<'EOF'\n" + PATCH.format(path="nb.ipynb") + "EOF"},
        "raw-ipynb-edit",
    ),
    # shell: raw edits
    ("Bash", {"command": "sed -i 's/a/b/' nb.ipynb"}, "raw-ipynb-edit"),
    ("Bash", {"command": "sed --in-place=.bak 's/a/b/' nb.ipynb"}, "raw-ipynb-edit"),
    ("Bash", {"command": "echo '{}' > nb.ipynb"}, "raw-ipynb-edit"),
    ("Bash", {"command": "cat a.json >> 'my notebook.ipynb'"}, "raw-ipynb-edit"),
    ("Bash", {"command": "jq '.cells' x.json | tee out.ipynb"}, "raw-ipynb-edit"),
    ("Bash", {"command": "perl -pi -e 's/a/b/' nb.ipynb"}, "raw-ipynb-edit"),
    ("Bash", {"command": "gawk -i inplace '{print}' nb.ipynb"}, "raw-ipynb-edit"),
    ("Bash", {"command": "python fix.py && jq . x.json | sponge nb.ipynb"}, "raw-ipynb-edit"),
    ("Bash", {"command": "dd if=/dev/zero of=nb.ipynb bs=1 count=1"}, "raw-ipynb-edit"),
    ("Bash", {"command": 'bash -c "sed -i s/a/b/ nb.ipynb"'}, "raw-ipynb-edit"),
    # shell: whole-notebook execution
    (
        "Bash",
        {"command": "jupyter nbconvert --to notebook --execute nb.ipynb"},
        "notebook-execution",
    ),
    ("Bash", {"command": "jupyter-nbconvert --execute --inplace nb.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "python -m nbconvert --execute nb.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "jupyter execute nb.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "jupyter-execute nb.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "jupyter nbconvert --execute=True nb.ipynb"}, "notebook-execution"),
    (
        "Bash",
        {"command": "jupyter nbconvert --ExecutePreprocessor.enabled=True nb.ipynb"},
        "notebook-execution",
    ),
    ("Bash", {"command": "ipython nb.ipynb"}, "notebook-execution"),
    ("Bash", {"command": 'ipython -c "%run nb.ipynb"'}, "notebook-execution"),
    ("Bash", {"command": "python -m IPython nb.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "uv run ipython3 analysis/nb.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "papermill in.ipynb out.ipynb -p a 1"}, "notebook-execution"),
    ("Bash", {"command": "python3 -m papermill in.ipynb out.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "runipy nb.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "cd /p && uv run jupyter execute nb.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "FOO=1 timeout 60 papermill a.ipynb b.ipynb"}, "notebook-execution"),
    ("Bash", {"command": "sudo -u me env X=1 runipy nb.ipynb"}, "notebook-execution"),
    (
        "Bash",
        {"command": "conda run -n ds jupyter nbconvert --execute nb.ipynb"},
        "notebook-execution",
    ),
    (
        "exec_command",
        {"command": ["bash", "-lc", "papermill a.ipynb b.ipynb"]},
        "notebook-execution",
    ),
    # shell: allowed
    ("Bash", {"command": "cat nb.ipynb | jq '.cells | length'"}, None),
    ("Bash", {"command": "jupyter nbconvert --to html nb.ipynb"}, None),
    ("Bash", {"command": "jupyter lab"}, None),
    ("Bash", {"command": "j-cli -j notebook outputs nb.ipynb --cell 3"}, None),
    ("Bash", {"command": "git diff nb.ipynb > changes.patch"}, None),
    ("Bash", {"command": "cp backup.ipynb nb.ipynb"}, None),
    ("Bash", {"command": "grep -n papermill README.md"}, None),
    ("Bash", {"command": "sed -n 1,5p nb.ipynb"}, None),
    ("Bash", {"command": "echo 'unbalanced"}, None),
    ("Bash", {"command": "python run.py 2>&1 | tee log.txt"}, None),
    ("Bash", {"command": "ls -la"}, None),
    ("Bash", {"command": 'ipython -c "print(1)"'}, None),
    ("Bash", {"command": "echo 'jupyter nbconvert --execute nb.ipynb'"}, None),
    ("Bash", {"command": "ls x.ipynb; echo --execute"}, None),
]


@pytest.mark.parametrize(("tool", "tool_input", "rule"), CASES)
def test_guard_decides_each_case(tool: str, tool_input: dict[str, Any], rule: str | None) -> None:
    verdict = evaluate({"tool_name": tool, "tool_input": tool_input})
    assert verdict.rule == rule
    assert verdict.allow is (rule is None)
    if rule is not None:  # each denial names the tools to use instead
        assert verdict.reason is not None
        assert "jupyter-mcp" in verdict.reason
        assert "`j-cli " in verdict.reason
        if rule != "notebook-edit-tool":
            assert "read_notebook_output" in verdict.reason


@pytest.mark.parametrize(
    ("command", "denied"),
    [
        ("python foo.py", True),
        ("python3 -u foo.py --flag", True),
        ("uv run -p 3.12 python foo.py", True),
        ("conda run -n env python foo.py", True),
        ("A=1 env B=2 nohup python foo.py", True),
        ("./foo.py", True),
        ("cd elsewhere && python foo.py", True),  # resolved against the event's folder
        ("bash -lc 'python foo.py'", True),
        ("python -W ignore foo.py", True),
        ("python tools.py", False),  # no tools.ipynb beside it
        ("python -m foo", False),
        ('python -c "import foo"', False),
        ("pytest foo.py", False),
        ("echo 'python foo.py'", False),
        ("ls -la", False),
    ],
)
def test_running_a_script_paired_with_a_notebook_is_denied(
    tmp_path: Path, command: str, denied: bool
) -> None:
    for name in ("foo.py", "foo.ipynb", "tools.py"):
        (tmp_path / name).touch()
    event = {"tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(tmp_path)}
    verdict = evaluate(event)
    assert verdict.rule == ("paired-script-run" if denied else None)
    if denied:
        assert verdict.reason is not None
        assert "`j-cli run " in verdict.reason and "foo.ipynb" in verdict.reason


def test_a_paired_script_is_found_from_the_tool_s_workdir(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "foo.py").touch()
    (tmp_path / "sub" / "foo.ipynb").touch()
    event = {
        "tool_name": "bash",
        "tool_input": {"command": "python foo.py", "workdir": "sub"},
        "cwd": str(tmp_path),
    }
    assert evaluate(event).rule == "paired-script-run"


def test_a_denial_follows_the_claude_and_codex_hook_protocol() -> None:
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "a.ipynb"},
    }
    for host in ("claude", "codex"):
        outcome = run_guard(host, json.dumps(event))  # type: ignore[arg-type]
        assert outcome.exit_code == 0
        answer = json.loads(outcome.stdout)["hookSpecificOutput"]
        assert answer["hookEventName"] == "PreToolUse"
        assert answer["permissionDecision"] == "deny"
        assert "j-cli" in answer["permissionDecisionReason"]


def test_an_allowed_call_passes_untouched_with_no_output() -> None:
    event = {"tool_name": "Bash", "tool_input": {"command": "ls -la"}}
    for host in ("claude", "codex"):
        outcome = run_guard(host, json.dumps(event))  # type: ignore[arg-type]
        assert (outcome.stdout, outcome.stderr, outcome.exit_code) == ("", "", 0)


def test_dsh_always_gets_one_json_decision() -> None:
    allow = json.loads(
        run_guard("dsh", json.dumps({"tool": "shell", "input": {"command": "ls"}})).stdout
    )
    assert allow == {"schema_version": 1, "decision": "allow"}
    deny = json.loads(
        run_guard(
            "dsh", json.dumps({"tool": "shell", "input": {"command": "runipy a.ipynb"}})
        ).stdout
    )
    assert deny["decision"] == "deny" and deny["rule"] == "notebook-execution"


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "not json",
        "[1, 2]",
        '{"hook_event_name": "PreToolUse"}',
        '{"tool_name": "Bash", "tool_input": "ls"}',
    ],
)
def test_the_guard_fails_open_with_a_diagnostic(stdin: str) -> None:
    outcome = run_guard("claude", stdin)
    assert (outcome.stdout, outcome.exit_code) == ("", 0)
    assert outcome.stderr.startswith("j-cli hook guard: allowed")
    dsh = run_guard("dsh", stdin)
    assert json.loads(dsh.stdout)["decision"] == "allow"


def test_cli_choices_are_the_guard_hosts() -> None:
    assert GUARD_HOST_CHOICES == GUARD_HOSTS


def test_hook_command_denies_through_the_real_console_script(tmp_path: Path) -> None:
    event = {"tool_name": "Bash", "tool_input": {"command": "jupyter execute nb.ipynb"}}
    done = run_process(
        [str(JCLI), "hook", "guard", "--host", "claude"], cwd=tmp_path, stdin=json.dumps(event)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    bad = run_process([str(JCLI), "hook", "guard", "--host", "codex"], cwd=tmp_path, stdin="{oops")
    assert (bad.returncode, bad.stdout) == (0, "")
    assert "allowed" in bad.stderr


def test_the_hook_imports_nothing_heavy(tmp_path: Path) -> None:
    probe = (
        "import io, json, sys\n"
        'event = b\'{"tool_name": "Bash", "tool_input": {"command": "ls"}}\'\n'
        "sys.stdin = io.TextIOWrapper(io.BytesIO(event))\n"
        "base = set(sys.modules)\n"
        "from jupyter_jcli.cli import run\n"
        "app = set(sys.modules)\n"
        "status = run(['hook', 'guard', '--host', 'claude'])\n"
        "hook = sorted(set(sys.modules) - app)\n"
        "print(json.dumps({'status': status, 'app': sorted(app - base), 'hook': hook}))\n"
    )
    done = run_process([sys.executable, "-c", probe], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["status"] == 0
    stdlib = sys.stdlib_module_names
    hook_extra = {name for name in report["hook"] if name.split(".")[0] not in stdlib}
    assert hook_extra == {
        "jupyter_jcli.cli._hook",  # each command's module loads when it runs
        "jupyter_jcli.cli._hooks",  # the one event size limit (imports sys only)
        "jupyter_jcli.hosts",
        "jupyter_jcli.hosts.guard",
        "jupyter_jcli.hosts._shell_commands",
        "jupyter_jcli.hosts._shellwords",
    }
    third_party = {
        name.split(".")[0]
        for name in report["app"] + report["hook"]
        if name.split(".")[0] not in stdlib
    }
    assert third_party <= {"click", "orjson", "jupyter_jcli"}, third_party
    heavy = {
        "jupytext",
        "nbformat",
        "IPython",
        "PIL",
        "jupyter_client",
        "zmq",
        "mcp",
        "tomlkit",
        "anthropic",
    }
    assert not heavy & {name.split(".")[0] for name in report["app"] + report["hook"]}


def _shlex_words(text: str) -> list[str] | None:
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        return None


def test_the_linear_splitter_gives_shlex_words() -> None:
    texts = [c[1]["command"] for c in CASES if isinstance(c[1].get("command"), str)]
    texts += ['a\\ b \'c d\'"e\\"f\\g"', "x 2>&1 | y &>> z;; (a)", "''", "a\\", '"open']
    alphabet = list("ab '\"\\;&|<>() \t\n=.-$`#")
    rng = random.Random(20240611)
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14))) for _ in range(5000)]
    for text in texts:
        assert split_words(text) == _shlex_words(text), text


MB3 = 3 * 1024 * 1024
PATCH_WITH_SPACES = "*** Begin Patch\n*** Add File: x" + " " * MB3 + "y{}\n*** End Patch\n"


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    ("tool", "command", "rule"),
    [
        ("Bash", "echo " + "a" * MB3, None),
        ("Bash", "echo " + "a" * MB3 + " > nb.ipynb", "raw-ipynb-edit"),
        ("Bash", "echo " + "a " * (MB3 // 2) + "> nb.ipynb", "raw-ipynb-edit"),
        ("Bash", 'echo "' + '\\"' * (MB3 // 2) + '" > nb.ipynb', "raw-ipynb-edit"),
        ("Bash", "sudo " + "-k " * (MB3 // 3) + "papermill a.ipynb b.ipynb", "notebook-execution"),
        ("Bash", "A=1 " * (MB3 // 4) + "runipy nb.ipynb", "notebook-execution"),
        (
            "Bash",
            "bash -c 'papermill a.ipynb b.ipynb " + "x" * (MB3 // 2) + "'",
            "notebook-execution",
        ),
        ("apply_patch", PATCH_WITH_SPACES.format(".py"), None),
        ("apply_patch", PATCH_WITH_SPACES.format(".ipynb" + " " * MB3), "raw-ipynb-edit"),
    ],
    ids=[
        "word",
        "word-redirect",
        "words",
        "escapes",
        "sudo",
        "env",
        "bash-c",
        "patch",
        "patch-ipynb",
    ],
)
def test_a_3_mb_command_is_decided_in_linear_time(
    tool: str, command: str, rule: str | None
) -> None:
    verdict = evaluate({"tool_name": tool, "tool_input": {"command": command}})
    assert verdict.rule == rule


@pytest.mark.timeout(20)
def test_a_3_mb_event_through_the_console_script_answers(tmp_path: Path) -> None:
    event = {"tool_name": "Bash", "tool_input": {"command": "echo " + "a" * MB3 + " > nb.ipynb"}}
    done = run_process(
        [str(JCLI), "hook", "guard", "--host", "claude"], cwd=tmp_path, stdin=json.dumps(event)
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


@pytest.mark.timeout(20)
def test_shell_text_beyond_the_analysis_budget_fails_open_with_a_diagnostic() -> None:
    inner = "a " * (MAX_ANALYSED_CHARS // 2) + "; papermill a.ipynb b.ipynb"
    for command in ("x " * MAX_ANALYSED_CHARS + "> nb.ipynb", f"bash -c {shlex.quote(inner)}"):
        event = json.dumps({"tool_name": "Bash", "tool_input": {"command": command}})
        outcome = run_guard("claude", event)
        assert (outcome.stdout, outcome.exit_code) == ("", 0)
        assert outcome.stderr.startswith("j-cli hook guard: allowed")
        assert json.loads(run_guard("dsh", event).stdout)["decision"] == "allow"
    harmless = "echo " + "a " * MAX_ANALYSED_CHARS  # nothing a rule could deny: no diagnostic
    outcome = run_guard(
        "claude", json.dumps({"tool_name": "Bash", "tool_input": {"command": harmless}})
    )
    assert (outcome.stdout, outcome.stderr) == ("", "")
