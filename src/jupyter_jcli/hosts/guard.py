"""The guard: deny raw ``.ipynb`` edits, cell edits that bypass revs and notebook runs.

``j-cli hook guard --host HOST`` feeds the host's hook event (JSON on stdin) to
:func:`run_guard`; the reference's hook command line (``j-cli _hooks NAME``, ``j-cli-hook``)
uses the same rules through :mod:`jupyter_jcli.hosts.hooks`. Four kinds of tool call are
denied, each with a reason that names the tool to use instead:

``raw-ipynb-edit``
    a generic file tool writing or editing a ``.ipynb`` file as text (Claude Code ``Write``,
    ``Edit``, ``MultiEdit``; Codex ``apply_patch`` adding or updating a ``.ipynb``), or a shell
    command doing so: a redirection into a ``.ipynb`` (``>``, ``>>``, ``&>``), ``tee``,
    ``sponge``, ``dd of=``, or an in-place editor (``sed -i``, ``perl -i``, ``ruby -i``,
    ``gawk -i inplace``) given a ``.ipynb``.
``notebook-edit-tool``
    Claude Code's ``NotebookEdit`` on a ``.ipynb``: it keeps the JSON valid but changes cells
    without their names and revs (a stale edit overwrites what someone changed since, and
    nothing can be undone); the jupyter-mcp cell tools and ``j-cli cell`` check the rev.
``notebook-execution``
    ``jupyter nbconvert --execute`` (also ``--execute=...``, ``jupyter-nbconvert``,
    ``python -m nbconvert``), ``jupyter execute`` (``jupyter-execute``), ``papermill``,
    ``runipy``, ``ipython NB.ipynb`` and ``ipython -c "%run NB.ipynb"``, also behind
    ``sudo``/``env``/``timeout``/``uv run``/``bash -c`` and the like.
``paired-script-run``
    ``python X.py`` (``python3``, ``./X.py``, behind the same wrappers) where ``X.ipynb`` sits
    beside ``X.py`` (jupytext's default pairing): the script would run without a kernel and
    its outputs would never reach the notebook; ``j-cli run X.py`` runs it cell by cell.

Everything else passes untouched. Output follows each host's hook protocol:

========  =================================================================================
claude    deny: exit 0 and ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
          "permissionDecision": "deny", "permissionDecisionReason": ...}}`` on stdout (Claude
          Code hooks reference); allow: exit 0, no output
codex     the same JSON (Codex's ``pre-tool-use.command.output`` schema); allow: no output
dsh       always one JSON line, ``{"schema_version": 1, "decision": "allow"|"deny", ...}``,
          so the DSH plugin can tell a verdict from a failure
========  =================================================================================

The guard fails open: an event it cannot read (bad JSON, an unknown shape), or shell text
beyond :data:`MAX_ANALYSED_CHARS` that a rule might deny, is allowed, with one diagnostic line on
stderr; it never blocks the host because of its own failure. Its work is linear in the event's
size (shell words are split by :mod:`._shellwords`, not ``shlex``, whose tokens grow
quadratically; what the words do is read by :mod:`._shell_commands`). It imports only the
standard library, so the hook starts fast.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Literal

from jupyter_jcli.hosts._shell_commands import (
    is_ipynb,
    notebook_execution,
    paired_notebook,
    raw_notebook_edit,
    script_run,
    simple_commands,
    unwrap,
)

__all__ = [
    "ALLOW",
    "GUARD_HOSTS",
    "MAX_ANALYSED_CHARS",
    "RULES",
    "SHELL_RULES",
    "GuardHost",
    "GuardOutcome",
    "Rule",
    "Verdict",
    "check_file_edit",
    "check_notebook_tool",
    "check_patch",
    "check_shell",
    "evaluate",
    "run_guard",
    "working_folder",
]

GuardHost = Literal["claude", "codex", "dsh"]
GUARD_HOSTS: tuple[GuardHost, ...] = ("claude", "codex", "dsh")

Rule = Literal["raw-ipynb-edit", "notebook-edit-tool", "notebook-execution", "paired-script-run"]
RULES: frozenset[Rule] = frozenset(
    {"raw-ipynb-edit", "notebook-edit-tool", "notebook-execution", "paired-script-run"}
)
"""Every rule (what :func:`evaluate` applies)."""
SHELL_RULES: frozenset[Rule] = frozenset({"raw-ipynb-edit", "notebook-execution"})
"""The rules over a shell command that need no file system: raw writes and notebook runs."""

_EDIT_REASON = (
    "Blocked by jupyter-jcli: {what} edits .ipynb JSON as raw text, which can corrupt the "
    "notebook and bypasses cell names and revisions. Change cells with the jupyter-mcp tools "
    "or `j-cli cell add|update|remove|move`; read saved outputs with the read_notebook_output "
    "tool (or `j-cli -j notebook outputs|output`)."
)
_EXEC_REASON = (
    "Blocked by jupyter-jcli: `{what}` re-executes the whole notebook and rewrites every "
    "output. Run only the cells you need (and the stale ones) on a persistent kernel with the "
    "jupyter-mcp tools (execute_cells, run_stale) or `j-cli run NB --stale|--cell CELL`; read "
    "saved outputs with the read_notebook_output tool (or `j-cli -j notebook outputs|output`)."
)
_NOTEBOOK_TOOL_REASON = (
    "Blocked by jupyter-jcli: {what} changes cells without their names and revisions, so a "
    "stale edit overwrites what changed since and cannot be undone. Change cells with the "
    "jupyter-mcp tools (update_cell, add_cell, remove_cell, move_cell: each checks the cell's "
    "rev; undo_last reverts) or `j-cli cell add|update|remove|move` (`j-cli notebook undo`)."
)
_SCRIPT_REASON = (
    "Blocked by jupyter-jcli: `{what}` runs {script}, the script paired with {notebook}, as "
    "a plain script: no kernel session keeps its state and its outputs never reach the "
    "notebook. Run it with `j-cli run {script}` (cell by cell on a kernel, outputs saved into "
    "{notebook}) or with the jupyter-mcp tools (execute_cells, run_stale) on the notebook's "
    "persistent kernel; to run a module on purpose, use `python -m MODULE`."
)

_EDIT_TOOLS = frozenset(
    {"write", "edit", "multiedit", "create", "write_file", "edit_file", "create_file",
     "str_replace", "str_replace_editor", "str_replace_based_edit_tool"}
)  # fmt: skip
_PATCH_TOOLS = frozenset({"apply_patch", "patch", "applypatch"})
_SHELL_TOOLS = frozenset(
    {"bash", "shell", "sh", "exec", "exec_command", "local_shell", "shell_command",
     "run_shell_command", "run_command", "command", "terminal"}
)  # fmt: skip
_PATH_KEYS = ("file_path", "filePath", "path", "filename", "file")
_NOTEBOOK_TOOLS = frozenset({"notebookedit", "notebook_edit", "edit_notebook"})
_NOTEBOOK_PATH_KEYS = ("notebook_path", "notebookPath", *_PATH_KEYS)
_COMMAND_KEYS = ("command", "cmd", "script")
# `(.*)$` with the path stripped afterwards: a lazy `(.+?)\s*$` backtracks quadratically on a
# long run of spaces inside a line.
_PATCH_HEADER = re.compile(
    r"^(?:\*\*\*|\*\*_) (?:Add File|Update File|Move to): (.*)$", re.MULTILINE
)
_QUOTING = str.maketrans("", "", "'\"\\")
_EXEC_WORDS = ("papermill", "runipy", "execute")
MAX_ANALYSED_CHARS = 4 * 1024 * 1024
"""The most shell text (characters, summed over one event's commands and their nested
``bash -c``/``eval`` strings) the guard tokenizes, about two seconds of work at worst. Beyond it
the call is allowed with a diagnostic (fail open), so the hook stays well inside its 10 s limit.
Text that no rule could deny (see :func:`_may_deny`) is never tokenized, whatever its length."""
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_MAX_DEPTH = 4


@dataclass(frozen=True)
class Verdict:
    """The guard's decision on one tool call.

    Attributes:
        allow: True to let it through.
        rule: the rule that denied it (``raw-ipynb-edit`` or ``notebook-execution``), else None.
        reason: the sentence shown to the model, naming the tool to use; None when allowed.
    """

    allow: bool
    rule: Rule | None = None
    reason: str | None = None


ALLOW = Verdict(True)
"""The verdict that lets a call through."""


@dataclass(frozen=True)
class GuardOutcome:
    """What the hook process prints and returns.

    Attributes:
        stdout: the text for stdout ("" for nothing).
        stderr: a diagnostic line for stderr ("" for nothing).
        exit_code: always 0 (a deny is expressed in stdout, never by failing).
    """

    stdout: str
    stderr: str
    exit_code: int = 0


def run_guard(host: GuardHost, stdin_text: str) -> GuardOutcome:
    """Decide on one hook event and render the decision in ``host``'s hook protocol.

    Args:
        host: ``claude``, ``codex`` or ``dsh``.
        stdin_text: the hook event JSON the host wrote to stdin.

    Returns:
        The outcome; an unreadable event gives an allow with a diagnostic (fail open).
    """
    try:
        event = json.loads(stdin_text)
        if not isinstance(event, dict):
            raise ValueError("the event is not a JSON object")
        verdict = evaluate(event)
    except Exception as err:  # fail open: the guard must never block the host on its own error
        diagnostic = (
            f"j-cli hook guard: allowed a call it could not check ({type(err).__name__}: {err})"
        )
        if host == "dsh":
            return GuardOutcome(_dsh_line(ALLOW, diagnostic), diagnostic + "\n")
        return GuardOutcome("", diagnostic + "\n")
    if host == "dsh":
        return GuardOutcome(_dsh_line(verdict, None), "")
    if verdict.allow:
        return GuardOutcome("", "")
    payload = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": verdict.reason,
        }
    }
    return GuardOutcome(json.dumps(payload) + "\n", "")


def evaluate(event: Mapping[str, object], rules: Collection[Rule] = RULES) -> Verdict:
    """Decide on one tool call event.

    The event is read tolerantly, so one function serves every host: the tool name from
    ``tool_name`` (Claude Code, Codex), ``tool`` or ``name``; its input from ``tool_input``,
    ``input``, ``args`` or ``arguments``; the folder a shell command runs in from ``cwd``
    and the input's ``workdir`` (else this process's working directory).

    Args:
        event: the hook event.
        rules: the rules to apply (all by default).

    Raises:
        ValueError: when the event has no tool name or its input is not an object (the caller
            fails open).
    """
    name = next((event[k] for k in ("tool_name", "tool", "name") if k in event), None)
    if not isinstance(name, str) or not name:
        raise ValueError("the event names no tool (tool_name)")
    raw_input = next(
        (event[k] for k in ("tool_input", "input", "args", "arguments") if k in event), {}
    )
    if not isinstance(raw_input, Mapping):
        raise ValueError("the tool input is not an object")
    tool = name.lower()
    if tool in _EDIT_TOOLS:
        for key in _PATH_KEYS:
            value = raw_input.get(key)
            if isinstance(value, str):
                verdict = check_file_edit(name, value, rules)
                if not verdict.allow:
                    return verdict
        return ALLOW
    if tool in _NOTEBOOK_TOOLS:
        paths = [v for k in _NOTEBOOK_PATH_KEYS if isinstance(v := raw_input.get(k), str)]
        return check_notebook_tool(name, paths[0] if paths else None, rules)
    texts = [
        v for k in (*_COMMAND_KEYS, "patch", "input") if isinstance(v := raw_input.get(k), str)
    ]
    command = raw_input.get("command")
    if isinstance(command, list) and all(isinstance(word, str) for word in command):
        texts.append(shlex.join(command))
    if tool in _PATCH_TOOLS or any("*** Begin Patch" in text for text in texts):
        for text in texts:
            verdict = check_patch(text, rules)
            if not verdict.allow:
                return verdict
        if tool in _PATCH_TOOLS:
            return ALLOW
    if tool in _SHELL_TOOLS:
        cwd = working_folder(event.get("cwd"), raw_input.get("workdir"))
        budget = [MAX_ANALYSED_CHARS]
        for text in texts:
            verdict = _check_shell(text, 0, budget, rules, cwd)
            if not verdict.allow:
                return verdict
    return ALLOW


def check_file_edit(tool: str, path: str, rules: Collection[Rule] = RULES) -> Verdict:
    """Decide on a generic file tool (``tool``, as the host names it) writing ``path``."""
    if "raw-ipynb-edit" in rules and is_ipynb(path):
        return Verdict(False, "raw-ipynb-edit", _EDIT_REASON.format(what=f"{tool} on {path}"))
    return ALLOW


def check_patch(text: str, rules: Collection[Rule] = RULES) -> Verdict:
    """Decide on a Codex ``apply_patch`` text: denied when it adds, updates or moves a file to
    a ``.ipynb`` (``*** Add File:``, ``*** Update File:``, ``*** Move to:``; also the legacy
    ``**_`` markers). Deleting a notebook is not a raw edit of its JSON."""
    if "raw-ipynb-edit" not in rules:
        return ALLOW
    notebooks = [path for found in _PATCH_HEADER.findall(text) if is_ipynb(path := found.strip())]
    if not notebooks:
        return ALLOW
    what = f"a patch on {', '.join(dict.fromkeys(notebooks))}"  # each notebook once, in order
    return Verdict(False, "raw-ipynb-edit", _EDIT_REASON.format(what=what))


def check_notebook_tool(tool: str, path: str | None, rules: Collection[Rule] = RULES) -> Verdict:
    """Decide on a notebook-aware edit tool (Claude Code's ``NotebookEdit``) on ``path``
    (None when the event names none: the tool edits only notebooks)."""
    if "notebook-edit-tool" not in rules or tool.lower() not in _NOTEBOOK_TOOLS:
        return ALLOW
    if path is not None and not is_ipynb(path):
        return ALLOW
    what = f"{tool} on {path}" if path else tool
    return Verdict(False, "notebook-edit-tool", _NOTEBOOK_TOOL_REASON.format(what=what))


def check_shell(
    command: str, rules: Collection[Rule] = SHELL_RULES, cwd: str | None = None
) -> Verdict:
    """Decide on one shell command line (pipelines, lists, ``bash -c`` included).

    Args:
        command: the command line.
        rules: the rules to apply; ``paired-script-run`` looks for ``X.ipynb`` beside each
            script the command runs, resolved against ``cwd``.
        cwd: the folder the command runs in (this process's working directory when None).

    Raises:
        ValueError: when tokenizing ``command`` would exceed :data:`MAX_ANALYSED_CHARS` (the
            caller fails open). Time is linear in the text tokenized, which the budget bounds.
    """
    return _check_shell(command, 0, [MAX_ANALYSED_CHARS], rules, cwd)


def working_folder(cwd: object, workdir: object) -> str | None:
    """The folder a tool call runs in: the input's ``workdir`` (relative to the session's
    ``cwd`` when not absolute), else ``cwd``; None when neither is a non-empty string."""
    base = cwd if isinstance(cwd, str) and cwd else None
    if isinstance(workdir, str) and workdir:
        return os.path.join(base, workdir) if base is not None else workdir
    return base


def _check_shell(
    command: str, depth: int, budget: list[int], rules: Collection[Rule], cwd: str | None
) -> Verdict:
    """:func:`check_shell` at ``bash -c``/``eval`` nesting ``depth`` (recursion stops at 4);
    ``budget`` is a one-element list holding the characters still allowed to be tokenized,
    shared by the nested calls."""
    if not _may_deny(command, rules):
        return ALLOW
    budget[0] -= len(command)
    if budget[0] < 0:
        raise ValueError(
            f"the shell command needs more than {MAX_ANALYSED_CHARS} characters of analysis "
            f"(this part: {len(command)})"
        )
    for words, redirect_targets in simple_commands(command):
        if "raw-ipynb-edit" in rules:
            for target in redirect_targets:
                if is_ipynb(target):
                    return Verdict(
                        False,
                        "raw-ipynb-edit",
                        _EDIT_REASON.format(what=f"a shell redirection into {target}"),
                    )
        verdict = _check_words(words, depth, budget, rules, cwd)
        if not verdict.allow:
            return verdict
    return ALLOW


def _check_words(
    words: list[str], depth: int, budget: list[int], rules: Collection[Rule], cwd: str | None
) -> Verdict:
    words = unwrap(words)
    if not words:
        return ALLOW
    program = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if program in _SHELLS and depth < _MAX_DEPTH:
        for index, arg in enumerate(args):
            if arg.startswith("-") and "c" in arg.lstrip("-") and index + 1 < len(args):
                return _check_shell(args[index + 1], depth + 1, budget, rules, cwd)
        return ALLOW
    if program == "eval" and depth < _MAX_DEPTH:
        return _check_shell(" ".join(args), depth + 1, budget, rules, cwd)
    if "notebook-execution" in rules:
        execution = notebook_execution(program, args)
        if execution is not None:
            return Verdict(False, "notebook-execution", _EXEC_REASON.format(what=execution))
    if "raw-ipynb-edit" in rules:
        notebooks = [arg for arg in args if is_ipynb(arg)]
        edit = raw_notebook_edit(program, args, notebooks)
        if edit is not None:
            return Verdict(False, "raw-ipynb-edit", _EDIT_REASON.format(what=edit))
    if "paired-script-run" in rules:
        script = script_run(words)
        notebook = paired_notebook(script, cwd) if script is not None else None
        if script is not None and notebook is not None:
            what = shlex.join(words[: words.index(script) + 1])
            reason = _SCRIPT_REASON.format(what=what, script=script, notebook=notebook)
            return Verdict(False, "paired-script-run", reason)
    return ALLOW


def _may_deny(text: str, rules: Collection[Rule]) -> bool:
    """Whether any of ``rules`` could deny ``text``: a cheap linear pre-check before tokenizing.

    Every denial needs a word ending in ``.ipynb``, a program word holding ``papermill``,
    ``runipy`` or ``execute`` (any case), or (``paired-script-run``) a word ending in ``.py``.
    A word's characters are the text's characters minus quote characters and escaping
    backslashes, so with every ``'``, ``"`` and ``\\`` removed from the text, such a word's
    telltale part is a substring of it.
    """
    plain = text.translate(_QUOTING).lower()
    if "paired-script-run" in rules and ".py" in plain:
        return True
    return ".ipynb" in plain or any(word in plain for word in _EXEC_WORDS)


def _dsh_line(verdict: Verdict, diagnostic: str | None) -> str:
    doc: dict[str, object] = {
        "schema_version": 1,
        "decision": "allow" if verdict.allow else "deny",
    }
    if not verdict.allow:
        doc["rule"] = verdict.rule
        doc["reason"] = verdict.reason
    if diagnostic:
        doc["diagnostic"] = diagnostic
    return json.dumps(doc) + "\n"
