"""What a shell command's words do, as far as the guard's rules care (:mod:`.guard`).

Pure functions over shell words (split by :mod:`._shellwords`): the simple commands of a
command line and the files they redirect into, wrappers stripped (``sudo``, ``env``,
``timeout 5``, ``uv run``, ...), and whether a simple command runs a whole notebook, edits a
``.ipynb`` in place, or runs a ``.py`` script (and which notebook is paired with it). Each
function is linear in its words; the standard library only.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from jupyter_jcli.hosts._shellwords import split_words

__all__ = [
    "is_ipynb",
    "notebook_execution",
    "paired_notebook",
    "raw_notebook_edit",
    "script_run",
    "simple_commands",
    "unwrap",
]

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "|&", ";;"})
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
_WRAPPERS = frozenset({"sudo", "env", "nohup", "time", "nice", "ionice", "command", "exec",
                       "xargs", "stdbuf", "builtin"})  # fmt: skip
_RUNNERS = {"uv": "run", "poetry": "run", "pipx": "run", "pdm": "run", "hatch": "run",
            "conda": "run", "mamba": "run", "micromamba": "run", "pixi": "run"}  # fmt: skip
_VALUE_OPTIONS = frozenset({"-n", "--name", "-p", "--prefix", "--with", "--python", "--project",
                            "--directory", "-e", "--environment"})  # fmt: skip
_WRAPPER_VALUE_OPTIONS = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "xargs": frozenset({"-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"}),
}
_PYTHON_VALUE_OPTIONS = frozenset({"-W", "-X", "-Q"})


def notebook_execution(program: str, args: list[str]) -> str | None:
    """The whole-notebook execution command this is, if any."""
    module = None
    if (
        re.fullmatch(r"python[0-9.]*|ipython[0-9.]*", program)
        and len(args) >= 2
        and args[0] == "-m"
    ):
        module, args = args[1], args[2:]
    if program in ("papermill", "runipy") or module in ("papermill", "runipy"):
        return program if module is None else f"python -m {module}"
    if program == "jupyter-execute":
        return "jupyter execute"
    if (program == "jupyter" or module == "jupyter") and args:
        sub, args = args[0], args[1:]
        if sub == "execute":
            return "jupyter execute"
        if sub == "nbconvert" and _executes(args):
            return "jupyter nbconvert --execute"
    if (program == "jupyter-nbconvert" or module == "nbconvert") and _executes(args):
        return "jupyter nbconvert --execute"
    if module == "IPython" or (module is None and re.fullmatch(r"ipython[0-9.]*", program)):
        for arg in args:
            if is_ipynb(arg):
                return f"ipython {arg.strip()}"
            if "%run" in arg and ".ipynb" in arg.lower():
                return arg.strip()
    return None


def _executes(nbconvert_args: list[str]) -> bool:
    """Whether nbconvert's arguments ask it to execute the notebook."""
    return any(
        arg == "--execute"
        or arg.startswith("--execute=")
        or arg.lower() in ("--executepreprocessor.enabled=true", "--executepreprocessor.enabled=1")
        for arg in nbconvert_args
    )


def script_run(words: list[str]) -> str | None:
    """The ``.py`` file a command runs as a script: ``python [options] X.py ...`` (``python3``,
    ``python3.12``) or a path to it run directly (``./X.py``, ``bin/X.py``); None otherwise
    (``python -c``, ``python -m``, ``pytest X.py``, ...)."""
    first = words[0]
    if re.fullmatch(r"python[0-9.]*", first.rsplit("/", 1)[-1]):
        options = iter(words[1:])
        for word in options:
            if word in ("-c", "-m", "-"):
                return None
            if word in _PYTHON_VALUE_OPTIONS:
                next(options, None)
            elif not word.startswith("-"):
                return word if word.endswith(".py") else None
        return None
    if "/" in first and first.endswith(".py"):
        return first
    return None


def paired_notebook(script: str, cwd: str | None) -> str | None:
    """The name of the ``.ipynb`` beside ``script`` (resolved against ``cwd``), if it exists."""
    path = os.path.join(cwd or os.getcwd(), script)
    notebook = path[: -len(".py")] + ".ipynb"
    return os.path.basename(notebook) if os.path.isfile(notebook) else None


def raw_notebook_edit(program: str, args: list[str], notebooks: list[str]) -> str | None:
    """The raw text edit of a ``.ipynb`` this command makes, if any."""
    if program == "dd":
        target = next((a[3:] for a in args if a.startswith("of=")), "")
        return f"dd of={target}" if is_ipynb(target) else None
    if not notebooks:
        return None
    if program in ("tee", "sponge", "truncate"):
        return f"{program} {notebooks[0]}"
    flags = [a for a in args if a.startswith("-") and not a.startswith("--")]
    if program in ("sed", "gsed") and (
        any("i" in f[1:] for f in flags) or any(a.startswith("--in-place") for a in args)
    ):
        return f"sed -i on {notebooks[0]}"
    if program in ("perl", "ruby") and any("i" in f[1:] for f in flags):
        return f"{program} -i on {notebooks[0]}"
    if program in ("awk", "gawk") and any(
        a == "inplace" and i > 0 and args[i - 1] == "-i" for i, a in enumerate(args)
    ):
        return f"{program} -i inplace on {notebooks[0]}"
    return None


def unwrap(words: list[str]) -> list[str]:
    """Strip env assignments and wrappers (``sudo``, ``env``, ``timeout 5``, ``uv run``, ...).

    Walks an index over ``words`` (no re-slicing per word), so it is linear in their number.
    """
    index, count = 0, len(words)
    for _ in range(16):
        while index < count and _ASSIGNMENT.fullmatch(words[index]):
            index += 1
        if index >= count:
            return []
        program = words[index].rsplit("/", 1)[-1]
        if program in _WRAPPERS:
            valued = _WRAPPER_VALUE_OPTIONS.get(program, frozenset())
            index += 1
            while index < count and words[index].startswith("-"):
                index += 2 if words[index] in valued else 1
        elif program == "timeout":
            index += 1
            while index < count and words[index].startswith("-"):
                index += 1
            index += 1  # the duration
        elif program in _RUNNERS and index + 1 < count and words[index + 1] == _RUNNERS[program]:
            index += 2
            while index < count and words[index].startswith("-"):
                # options with a value (`conda run -n env`, `uv run --with x`)
                index += 2 if words[index] in _VALUE_OPTIONS else 1
        else:
            return words[index:]
    return words[index:]


def simple_commands(command: str) -> Iterator[tuple[list[str], list[str]]]:
    """Each simple command's words and the files it redirects output into."""
    text = command.replace("\n", " ; ")
    tokens = split_words(text)  # shlex's POSIX words, in linear time
    if tokens is None:  # unbalanced quotes: fall back to plain words
        tokens = text.split()
    words: list[str] = []
    targets: list[str] = []
    expect_target = False
    for token in tokens:
        if expect_target:
            targets.append(token)
            expect_target = False
        elif token in _REDIRECTS or token == ">&":
            expect_target = True
        elif token in _SEPARATORS:
            yield words, targets
            words, targets = [], []
        else:
            cleaned = token.lstrip("$(`").rstrip(")`")
            if cleaned:
                words.append(cleaned)
    yield words, targets


def is_ipynb(path: str) -> bool:
    return path.strip().strip("'\"").lower().endswith(".ipynb")
