"""The reference's hook command line: ``j-cli _hooks NAME`` and ``j-cli-hook NAME``.

jupyter-jcli 0.9.7's ``setup claude`` / ``setup codex`` wrote native hooks, and its OpenCode and
DSH plugins call, ``j-cli _hooks NAME [--platform claude|codex|dsh] [--debug]`` (or the
``j-cli-hook NAME ...`` console script, the same), with the host's hook event as JSON on stdin.
:func:`run_hook` answers each of its guards with our rules (:mod:`jupyter_jcli.hosts.guard`):

=========================  ===============  ====================================================
name                       event            denies (rule)
=========================  ===============  ====================================================
``notebook-exec-guard``    shell command    whole-notebook runs, raw writes into a ``.ipynb``
                                            (``notebook-execution``, ``raw-ipynb-edit``)
``python-run-guard``       shell command    running a script that has a paired ``.ipynb``
                                            (``paired-script-run``)
``pair-drift-guard-pre``   file edit        ``Edit``/``Write``/``apply_patch`` of a ``.ipynb``
                                            (``raw-ipynb-edit``)
``notebook-edit-guard``    any tool         ``NotebookEdit`` (``notebook-edit-tool``)
``pair-drift-guard-post``  file edit, done  nothing: it never decides (the reference synced a
                                            paired ``.py`` into its notebook; we keep no sync)
=========================  ===============  ====================================================

Where each guard reads its input, per ``--platform`` (default ``claude``): the shell command
from ``tool_input.command``, a string, or with ``claude``/``codex`` an argument list
(``["bash", "-lc", "..."]``); its folder from ``cwd`` and ``tool_input.workdir``; an edited
file from ``tool_input.file_path``, or from the ``apply_patch`` text (``tool_input.command``,
``["apply_patch", PATCH]`` or the text) when ``tool_name`` is ``apply_patch``. OpenCode's
plugin sends Claude's shape (Codex's for ``apply_patch``).

Exit status, the reference's contract (its ``docs/hook-exit-codes.md``):

====  ==========================================================================================
0     no decision: the call may go on; nothing on stdout
1     operational failure, surfaced: a payload that is not a JSON object or has a field of the
      wrong type (``NAME: malformed hook payload: ...`` on stderr), an unknown name or option,
      shell text beyond the analysis budget, a fault of ours. Never a deny: Claude Code and
      Codex go on and show stderr, DSH injects it, OpenCode's plugin fails the call with the
      diagnostic
2     explicit deny, only after a rule denied: ``{"hookSpecificOutput": {"hookEventName":
      "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": REASON}}`` on
      stdout and ``NAME: REASON`` on stderr (Claude Code and Codex show stderr to the model)
====  ==========================================================================================

The reference's git hooks (``pre-commit-pair-sync``, ``gc-pair-sync-refs``) are not offered:
they exit 0 with a note on stderr, so a pre-commit shim the reference installed never blocks a
commit. ``--debug`` writes one JSON log per call (``hook``, ``exit_code``, ``stdin_raw``,
``stdin_parsed``, ``stdout_raw``, ``stdout_parsed``, ``stderr``, ``exception``, ...) to
``$JCLI_DEBUG_LOG_DIR`` (default ``/tmp/jcli-UID``), as the reference does. Standard library
only, so a hook call starts fast.
"""

from __future__ import annotations

import json
import os
import shlex
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jupyter_jcli.hosts.guard import (
    ALLOW,
    SHELL_RULES,
    Verdict,
    check_file_edit,
    check_notebook_tool,
    check_patch,
    check_shell,
    working_folder,
)

__all__ = [
    "EXIT_DENY",
    "EXIT_FAILURE",
    "EXIT_OK",
    "HOOK_NAMES",
    "NOT_OFFERED",
    "PLATFORMS",
    "HookResult",
    "run_hook",
]

EXIT_OK = 0
"""No decision: the tool call goes on."""
EXIT_FAILURE = 1
"""An operational failure, surfaced on stderr; never a deny."""
EXIT_DENY = 2
"""An explicit deny: the decision on stdout, the reason on stderr."""

HOOK_NAMES: tuple[str, ...] = (
    "notebook-exec-guard",
    "python-run-guard",
    "pair-drift-guard-pre",
    "pair-drift-guard-post",
    "notebook-edit-guard",
)
"""The reference's guards, each answered here."""
NOT_OFFERED: tuple[str, ...] = ("pre-commit-pair-sync", "gc-pair-sync-refs")
"""The reference's git-hook commands: accepted, exit 0, nothing done."""
PLATFORMS: tuple[str, ...] = ("claude", "codex", "dsh")
"""The ``--platform`` values (the payload's shape)."""

_USAGE = (
    "usage: j-cli _hooks NAME [--platform claude|codex|dsh] [--debug] < EVENT.json\n"
    f"NAME: {', '.join(HOOK_NAMES)}"
)


class _MalformedPayload(ValueError):
    """The hook event is not what the platform sends (exit 1)."""


@dataclass(frozen=True)
class HookResult:
    """What the hook process writes and returns.

    Attributes:
        exit_code: :data:`EXIT_OK`, :data:`EXIT_FAILURE` or :data:`EXIT_DENY`.
        stdout: the decision JSON and a newline on a deny, else "".
        stderr: the diagnostic or the deny reason (``NAME: ...`` and a newline), or "".
    """

    exit_code: int
    stdout: str = ""
    stderr: str = ""


def run_hook(args: list[str], read_stdin: Callable[[], str]) -> HookResult:
    """Answer ``j-cli _hooks ARGS`` (``j-cli-hook ARGS``).

    Args:
        args: the words after ``_hooks``: the guard's name, then its options.
        read_stdin: returns the hook event's text; called only once the command line is valid.

    Returns:
        The result (see the module docstring for the exit statuses); never raises for a bad
        event or command line.
    """
    if not args:
        return _failure("_hooks", f"missing the hook's name\n{_USAGE}")
    if args[0] in ("-h", "--help"):
        return HookResult(EXIT_OK, _USAGE + "\n")
    name, options = args[0], args[1:]
    if name in NOT_OFFERED:
        return HookResult(
            EXIT_OK,
            stderr=f"{name}: the pair-sync git hooks are not offered by this jupyter-jcli (it "
            "keeps no pair-sync baselines); nothing done\n",
        )
    if name not in HOOK_NAMES:
        return _failure("_hooks", f"unknown hook {name!r}; one of: {', '.join(HOOK_NAMES)}")
    platform, debug, problem = _options(options)
    if problem is not None:
        return _failure(name, problem)
    log = _DebugLog(name) if debug else None
    result = _decide(name, platform, read_stdin, log)
    if log is not None:
        log.write(result)
    return result


def _options(options: list[str]) -> tuple[str, bool, str | None]:
    """``(platform, debug, problem)`` from a guard's options; ``problem`` names what is wrong."""
    platform, debug = "claude", False
    words = iter(options)
    for word in words:
        if word == "--debug":
            debug = True
            continue
        flag, equals, value = word.partition("=")
        if flag != "--platform":
            return platform, debug, f"no such option: {word}"
        if not equals:
            value = next(words, "")
        if value not in PLATFORMS:
            choices = ", ".join(f"{p!r}" for p in PLATFORMS)
            return (
                platform,
                debug,
                f"Invalid value for '--platform': {value!r} is not one of {choices}.",
            )
        platform = value
    return platform, debug, None


def _decide(
    name: str, platform: str, read_stdin: Callable[[], str], log: _DebugLog | None
) -> HookResult:
    try:
        raw = read_stdin()
    except (OSError, ValueError) as err:
        return _failure(name, f"could not read the hook payload: {err}")
    if log is not None:
        log.stdin_raw = raw
    try:
        payload = json.loads(raw)
    except ValueError as err:  # json.JSONDecodeError, and bytes that are no text
        return _failure(name, f"malformed hook payload: {err}", log, err)
    if log is not None:
        log.stdin_parsed = payload
    try:
        _check_shape(payload)
        verdict = _GUARDS[name](payload, platform)
    except _MalformedPayload as err:
        return _failure(name, f"malformed hook payload: {err}", log, err)
    except ValueError as err:  # shell text beyond the guard's analysis budget
        return _failure(name, f"could not check this call: {err}", log, err)
    except Exception as err:  # a fault of ours: surfaced (exit 1), never a deny
        return _failure(name, f"could not check this call ({type(err).__name__}: {err})", log, err)
    if verdict.allow:
        return HookResult(EXIT_OK)
    decision = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": verdict.reason,
        }
    }
    return HookResult(EXIT_DENY, json.dumps(decision) + "\n", f"{name}: {verdict.reason}\n")


def _check_shape(payload: object) -> None:
    """The field types every platform's event has (the reference checks the same).

    Raises:
        _MalformedPayload: naming the field.
    """
    if not isinstance(payload, dict):
        raise _MalformedPayload("hook payload must be a JSON object")
    tool_input = payload.get("tool_input")
    if "tool_input" in payload and not isinstance(tool_input, dict):
        raise _MalformedPayload("tool_input must be an object")
    for key in ("tool_name", "cwd"):
        if key in payload and not isinstance(payload[key], str):
            raise _MalformedPayload(f"{key} must be a string")
    if not isinstance(tool_input, dict):
        return
    command = tool_input.get("command")
    if "command" in tool_input and not (
        isinstance(command, str)
        or (isinstance(command, list) and all(isinstance(word, str) for word in command))
    ):
        raise _MalformedPayload("tool_input.command must be a string or argv list")
    for key in ("file_path", "workdir"):
        if key in tool_input and not isinstance(tool_input[key], str):
            raise _MalformedPayload(f"tool_input.{key} must be a string")


def _tool_input(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    tool_input = payload.get("tool_input")
    return tool_input if isinstance(tool_input, Mapping) else {}


def _command(payload: Mapping[str, Any], platform: str) -> str:
    """The shell command of the event ("" when it has none)."""
    command = _tool_input(payload).get("command", "")
    if isinstance(command, list):
        if platform == "dsh":
            raise _MalformedPayload("tool_input.command must be a string for DSH")
        return shlex.join(command)  # ["bash", "-lc", "..."]: the guard reads `bash -c` itself
    return command if isinstance(command, str) else ""


def _exec_guard(payload: Mapping[str, Any], platform: str) -> Verdict:
    return check_shell(_command(payload, platform), SHELL_RULES)


def _python_run_guard(payload: Mapping[str, Any], platform: str) -> Verdict:
    command = _command(payload, platform)
    cwd = working_folder(payload.get("cwd"), _tool_input(payload).get("workdir"))
    return check_shell(command, frozenset({"paired-script-run"}), cwd)


def _edit_guard(payload: Mapping[str, Any], platform: str) -> Verdict:
    tool_input = _tool_input(payload)
    tool = payload.get("tool_name") or "Edit/Write"
    if tool == "apply_patch":  # Codex, and OpenCode's plugin: ["apply_patch", PATCH] or PATCH
        command = tool_input.get("command", "")
        text = "\n".join(command) if isinstance(command, list) else command
        return check_patch(text, frozenset({"raw-ipynb-edit"}))
    path = tool_input.get("file_path", "")
    return check_file_edit(tool, path, frozenset({"raw-ipynb-edit"})) if path else ALLOW


def _edit_tool_guard(payload: Mapping[str, Any], platform: str) -> Verdict:
    tool = payload.get("tool_name") or ""
    path = _tool_input(payload).get("notebook_path")
    return check_notebook_tool(tool, path if isinstance(path, str) else None)


def _post_edit(payload: Mapping[str, Any], platform: str) -> Verdict:
    _command(payload, platform)  # the payload's shape is still checked
    return ALLOW


_GUARDS: dict[str, Callable[[Mapping[str, Any], str], Verdict]] = {
    "notebook-exec-guard": _exec_guard,
    "python-run-guard": _python_run_guard,
    "pair-drift-guard-pre": _edit_guard,
    "pair-drift-guard-post": _post_edit,
    "notebook-edit-guard": _edit_tool_guard,
}


def _failure(
    name: str, message: str, log: _DebugLog | None = None, err: Exception | None = None
) -> HookResult:
    if log is not None and err is not None:
        log.exception = {"type": type(err).__name__, "message": str(err)}
    return HookResult(EXIT_FAILURE, "", f"{name}: {message}\n")


class _DebugLog:
    """One ``--debug`` call's record, written as JSON when the call ends (never fails it)."""

    def __init__(self, hook: str) -> None:
        self.hook = hook
        self.start = time.monotonic()
        self.stdin_raw = ""
        self.stdin_parsed: object = None
        self.exception: dict[str, str] | None = None

    def write(self, result: HookResult) -> None:
        folder = os.environ.get("JCLI_DEBUG_LOG_DIR") or os.path.join(
            tempfile.gettempdir(), f"jcli-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
        )
        stamp = time.strftime("%Y%m%dT%H%M%S") + f"-{time.time_ns() // 1000 % 1_000_000:06d}"
        stdout = result.stdout.rstrip("\n")
        record = {
            "hook": self.hook,
            "pid": os.getpid(),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "duration_ms": int((time.monotonic() - self.start) * 1000),
            "exit_code": result.exit_code,
            "stdin_raw": self.stdin_raw,
            "stdin_parsed": self.stdin_parsed,
            "stdout_raw": stdout,
            "stdout_parsed": json.loads(stdout) if stdout else None,
            "stderr": result.stderr,
            "exception": self.exception,
        }
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            path = os.path.join(folder, f"{self.hook}-{stamp}.log")
            with open(path, "x", encoding="utf-8") as handle:
                json.dump(record, handle, indent=2, default=str)
        except OSError:
            pass  # a debug log must never change the hook's answer
