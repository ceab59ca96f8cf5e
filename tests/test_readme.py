"""The examples of the README and of every page under ``docs/`` run as pasted and print what
the page says they print.

How a page is read (the rules an edit must keep):

- Blocks fenced ```` ```sh ````, ```` ```bash ```` or ```` ```python ```` are examples and run,
  unless preceded (as the last non-blank line before the fence) by
  ``<!-- readme-test: skip (reason) -->``. Blocks in other languages (JSON, TOML, text) show
  data and are not run.
- A shell block is a list of one-line commands, run one at a time with ``bash`` in a fresh
  copy of the shipped ``examples/`` (as committed in git, not the working tree's, which the
  Quick start's first command has re-executed; the repository's files are never touched), with
  ``uv run X`` running ``X`` from this test's environment (the project's virtual environment).
  Comment lines starting in column 0 right after a command (no blank line between) are what
  that command prints: each must appear on stdout, in that order, compared with runs of
  whitespace collapsed and ``…`` standing for any text. Other comments describe.
- A Python block runs as a script in the same folder. An expression statement followed by a
  comment (on its line, or on the comment lines right below it) must show that value: its
  ``repr`` (string subclasses such as error codes shown as plain strings) must match the
  comment, ``...`` and ``…`` standing for any text.
- The README's examples run in order, in one project folder. Before the first, the Quick
  start's ``j-cli`` command runs (the Quick start block itself installs uv and runs the test
  suite, so it is marked skip): every later example sees
  ``examples/05.04-Feature-Engineering.ipynb`` re-executed, as a reader who followed the Quick
  start does, until an example's ``git checkout examples/`` puts the shipped outputs back (the
  project folder is a git repository holding the shipped ``examples/``, as a checkout is), so
  what the README shows of them (an image's pixel size) is checked against the shipped file.
- Each example of a page under ``docs/`` is one test, named by its page and section
  (``docs/guides/live-kernels.md#which-kernelspec``, ``-2`` for a section's second example),
  run alone in a fresh project folder holding the shipped ``examples/``: an example there
  starts what it needs (a kernel, a file) and needs no other example before it.

Everything runs against a temporary project folder and a temporary home (``j-cli setup``
writes there), with summaries disabled and the undo cache in the temporary folder.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
EXAMPLES = REPO / "examples"
STEP_TIMEOUT_S = 300
"""Longest any one README command or Python block may take."""

_FENCE = re.compile(r"^```(\w*)\s*$")
_SKIP = re.compile(r"^<!--\s*readme-test:\s*skip\b.*-->\s*$")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")
_LANGUAGES = {"sh": "sh", "bash": "sh", "python": "python"}
_QUICK_START_COMMAND = re.compile(r"\buv run (j-cli [^&;|]+?)\s*$")
_SHELL_PRELUDE = (
    'uv() { if [ "$1" = run ]; then shift; "$@"; '
    "else echo \"tests/test_readme.py: only 'uv run' is emulated\" >&2; return 127; fi; }\n"
    "set -o pipefail\n"
)


@dataclass(frozen=True)
class Block:
    """One fenced code block: its language (``sh``/``python``/other), text, the page's line
    of its first code line, the section heading above it, the skip marker's text, and the
    page (its path from the repository's root)."""

    language: str
    code: str
    line: int
    section: str
    skip: str | None
    page: str = "README.md"


@dataclass(frozen=True)
class Command:
    """One shell command of a block, its page and line, and the output lines it must print."""

    text: str
    line: int
    expected: tuple[str, ...]
    page: str = "README.md"


def readme_blocks(text: str, page: str = "README.md") -> list[Block]:
    """Every fenced code block of a Markdown text (of ``page``), in order."""
    blocks: list[Block] = []
    lines = text.splitlines()
    section = ""
    index = 0
    while index < len(lines):
        line = lines[index]
        heading = _HEADING.match(line)
        fence = _FENCE.match(line)
        if heading:
            section = heading.group(1)
        if not fence:
            index += 1
            continue
        before = [previous for previous in lines[:index] if previous.strip()]
        skip = before[-1] if before and _SKIP.match(before[-1]) else None
        end = index + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        language = _LANGUAGES.get(fence.group(1), fence.group(1) or "text")
        code = "\n".join(lines[index + 1 : end]) + "\n"
        blocks.append(Block(language, code, index + 2, section, skip, page))
        index = end + 1
    return blocks


def shell_commands(block: Block) -> list[Command]:
    """The commands of a shell block, each with the output lines shown right below it."""
    commands: list[Command] = []
    lines = block.code.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip() or line.lstrip().startswith("#"):
            index += 1
            continue
        assert not line.rstrip().endswith("\\"), f"{block.page} line {block.line + index}: one line"
        expected: list[str] = []
        follow = index + 1
        while follow < len(lines) and lines[follow].startswith("#"):
            expected.append(lines[follow][1:].strip())
            follow += 1
        commands.append(Command(line, block.line + index, tuple(expected), block.page))
        index = follow
    return commands


def _pattern(expected: str) -> re.Pattern[str]:
    parts = re.split(r"…|\.\.\.", " ".join(expected.split()))
    return re.compile(".*".join(re.escape(part) for part in parts), re.DOTALL)


def shows(expected: str, actual: str) -> bool:
    """Whether an output line matches the README's line (whitespace runs collapsed, ``…`` and
    ``...`` standing for any text)."""
    return _pattern(expected).fullmatch(" ".join(actual.split())) is not None


def missing_lines(expected: tuple[str, ...], stdout: str) -> list[str]:
    """The README output lines not found on stdout in order (empty when all are)."""
    actual = stdout.splitlines()
    position = 0
    for number, want in enumerate(expected):
        while position < len(actual) and not shows(want, actual[position]):
            position += 1
        if position == len(actual):
            return list(expected[number:])
        position += 1
    return []


_PYTHON_HARNESS = r"""
import ast, io, re, sys, tokenize

def plain(value):
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (tuple, list)):
        return type(value)(plain(item) for item in value) if isinstance(value, tuple) else [
            plain(item) for item in value]
    if isinstance(value, dict):
        return {plain(key): plain(item) for key, item in value.items()}
    return value

def check(value, expected, line):
    shown = " ".join(repr(plain(value)).split())
    parts = re.split(r"…|\.\.\.", " ".join(expected.split()))
    if not re.fullmatch(".*".join(re.escape(p) for p in parts), shown, re.DOTALL):
        sys.exit(f"{page} line {line}: the value is {shown!r}; the page says {expected!r}")
    print(f"readme-check line {line}: ok")

path, first, page = sys.argv[1], int(sys.argv[2]), sys.argv[3]
source = open(path, encoding="utf-8").read()
lines = source.splitlines()
comments = {}
for token in tokenize.generate_tokens(io.StringIO(source).readline):
    if token.type == tokenize.COMMENT:
        row, col = token.start
        comments[row] = (token.string.lstrip("#").strip(), bool(lines[row - 1][:col].strip()))

def expected_for(node):
    trailing = comments.get(node.end_lineno)
    if trailing and trailing[1]:
        return trailing[0]
    below, row = [], node.end_lineno + 1
    while row <= len(lines) and lines[row - 1].strip().startswith("#"):
        below.append(comments[row][0])
        row += 1
    return " ".join(below) or None

class Checks(ast.NodeTransformer):
    def visit_Expr(self, node):
        expected = expected_for(node)
        if expected is None:
            return node
        call = ast.Call(ast.Name("__readme_check__", ast.Load()),
                        [node.value, ast.Constant(expected),
                         ast.Constant(first + node.lineno - 1)], [])
        return ast.copy_location(ast.Expr(call), node)

tree = ast.fix_missing_locations(Checks().visit(ast.parse(source)))
exec(compile(tree, page, "exec"), {"__name__": "__main__", "__readme_check__": check})
"""


def _environment(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ)
    for name in ("CLAUDE_CONFIG_DIR", "ANTHROPIC_API_KEY", "JUPYTER_JCLI_EXECUTE_TIMEOUT"):
        env.pop(name, None)
    env.update(
        {
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "CODEX_HOME": str(home / ".codex"),
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
            "JUPYTER_JCLI_CACHE_DIR": str(tmp_path / "undo-cache"),
            "JUPYTER_MCP_DISABLE_SUMMARIES": "1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        }
    )
    return env


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _step(args: list[str], project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=STEP_TIMEOUT_S,
        check=False,
    )


def _run_command(command: Command, project: Path, env: dict[str, str]) -> None:
    done = _step(["bash", "-c", _SHELL_PRELUDE + command.text], project, env)
    where = f"{command.page} line {command.line}: {command.text}"
    assert done.returncode == 0, f"{where}\nexit {done.returncode}\n{done.stderr[-3000:]}"
    missing = missing_lines(command.expected, done.stdout)
    assert not missing, f"{where}\ndoes not print {missing}\nstdout:\n{done.stdout[-3000:]}"


def _run_python(block: Block, project: Path, env: dict[str, str], tmp_path: Path) -> int:
    script = tmp_path / f"readme_block_{block.line}.py"
    script.write_text(block.code, encoding="utf-8")
    harness = tmp_path / "readme_harness.py"
    harness.write_text(_PYTHON_HARNESS, encoding="utf-8")
    done = _step(
        [sys.executable, str(harness), str(script), str(block.line), block.page], project, env
    )
    where = f"{block.page}: Python block at line {block.line}"
    assert done.returncode == 0, f"{where}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done.stdout.count("readme-check line ")


def _shipped_examples(project: Path) -> None:
    """Copy ``examples/`` as committed at ``HEAD`` into ``project``.

    The working tree's copy is not the shipped one once the Quick start's first command has
    run (it writes fresh outputs into the notebook). Outside a git checkout (an unpacked
    sdist) the working tree's files are all there is.
    """
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", "HEAD", "examples"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    if archive.returncode != 0:
        shutil.copytree(EXAMPLES, project / "examples")
        return
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(project, filter="data")


def _checkout(project: Path, env: dict[str, str]) -> None:
    """Make ``project`` a git repository whose one commit holds the shipped ``examples/``."""
    who = ["-c", "user.name=readme test", "-c", "user.email=readme@example.invalid"]
    for args in (["init", "-q"], ["add", "examples"], [*who, "commit", "-q", "-m", "shipped"]):
        done = _step(["git", *args], project, env)
        assert done.returncode == 0, done.stderr


def _quick_start_command(blocks: list[Block]) -> Command:
    block = next(b for b in blocks if b.section == "Quick start")
    first = shell_commands(block)[0]
    found = _QUICK_START_COMMAND.search(first.text)
    assert found, f"README.md line {first.line}: no `uv run j-cli ...` in the Quick start"
    return Command(f"uv run {found.group(1)}", first.line, ())


def _examples(blocks: list[Block]) -> list[Block]:
    return [block for block in blocks if block.language in ("sh", "python")]


def doc_pages() -> list[Path]:
    """Every Markdown page under ``docs/``, in path order."""
    return sorted(DOCS.rglob("*.md"))


def _section_slug(section: str) -> str:
    return re.sub(r"[^\w\- ]", "", section.strip().lower()).replace(" ", "-") or "top"


def doc_examples() -> list[tuple[str, Block]]:
    """Every example of ``docs/`` that runs, with its test id: ``page#section`` (the
    section's GitHub anchor), ``-2``, ``-3``... for a section's later examples."""
    examples: list[tuple[str, Block]] = []
    for path in doc_pages():
        page = path.relative_to(REPO).as_posix()
        seen: dict[str, int] = {}
        for block in _examples(readme_blocks(path.read_text(encoding="utf-8"), page)):
            name = f"{page}#{_section_slug(block.section)}"
            seen[name] = seen.get(name, 0) + 1
            if block.skip is None:
                examples.append((name if seen[name] == 1 else f"{name}-{seen[name]}", block))
    return examples


@pytest.mark.parametrize(
    "path", [README, *doc_pages()], ids=lambda path: path.relative_to(REPO).as_posix()
)
def test_every_example_is_runnable_or_marked_with_a_reason(path: Path) -> None:
    page = path.relative_to(REPO).as_posix()
    for block in _examples(readme_blocks(path.read_text(encoding="utf-8"), page)):
        if block.skip is not None:
            assert re.search(r"skip \(.+\)", block.skip), f"{page} line {block.line}: a reason"
        elif block.language == "sh":
            for command in shell_commands(block):
                assert "NB.ipynb" not in command.text, f"{page} line {command.line}: a placeholder"


def test_the_readme_and_the_docs_hold_examples_that_run() -> None:
    readme = [b for b in _examples(readme_blocks(README.read_text("utf-8"))) if b.skip is None]
    assert len(readme) >= 3
    ids = [name for name, _ in doc_examples()]
    assert len(ids) >= 10 and len(ids) == len(set(ids)), ids


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        ("3   data  code", "3 data    code", True),
        ("from sklearn…", "from sklearn.feature_extraction import …", True),
        ("{'a': [...], ...}", "{'a': [1, 2], 'b': 3}", True),
        ("stale (4): a, b", "stale (3): a, b", False),
        ("rev 1234", "rev 12345", False),
    ],
)
def test_readme_output_lines_match_whitespace_and_elisions_only(
    expected: str, actual: str, matches: bool
) -> None:
    assert shows(expected, actual) is matches


def test_readme_output_lines_must_appear_in_order() -> None:
    assert missing_lines(("a", "c"), "a\nb\nc\n") == []
    assert missing_lines(("c", "a"), "a\nb\nc\n") == ["a"]


@pytest.mark.kernel
@pytest.mark.timeout(1800)
def test_the_readme_examples_run_in_order_on_a_fresh_copy_of_the_examples(
    tmp_path: Path,
) -> None:
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    project = tmp_path / "project"
    project.mkdir()
    _shipped_examples(project)
    repo_examples = _tree_digest(EXAMPLES)
    env = _environment(tmp_path)
    _checkout(project, env)
    _run_command(_quick_start_command(blocks), project, env)
    commands = checks = 0
    for block in _examples(blocks):
        if block.skip is not None:
            continue
        if block.language == "sh":
            for command in shell_commands(block):
                _run_command(command, project, env)
                commands += 1
                checks += len(command.expected)
        else:
            checks += _run_python(block, project, env, tmp_path)
    assert commands >= 8 and checks >= 10, (commands, checks)
    assert _tree_digest(EXAMPLES) == repo_examples
    assert (project / ".mcp.json").is_file()  # setup wrote into the temporary project


@pytest.mark.kernel
@pytest.mark.timeout(900)
@pytest.mark.parametrize(
    "block", [block for _, block in doc_examples()], ids=[name for name, _ in doc_examples()]
)
def test_each_docs_example_runs_alone_on_a_fresh_copy_of_the_examples(
    block: Block, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    _shipped_examples(project)
    repo_examples = _tree_digest(EXAMPLES)
    env = _environment(tmp_path)
    _checkout(project, env)
    if block.language == "sh":
        commands = shell_commands(block)
        assert commands, f"{block.page} line {block.line}: an empty example"
        for command in commands:
            _run_command(command, project, env)
    else:
        _run_python(block, project, env, tmp_path)
    assert _tree_digest(EXAMPLES) == repo_examples
